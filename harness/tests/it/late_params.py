"""A minimal MCP server over stdio (2025-11-25), written without an SDK and
unlike the reference: it answers every request at once, except one whose
params is an array, which it refuses (-32602) only after DELAY seconds
(argv[1]), or never with "never". A server that is slow to refuse a kind of
request is slow, not hung; one that never answers it is hung (J4). With
"null-id" after the delay, the late refusal is -32600 with a null id, as rmcp
answers such a request: answered, with an id fault (J1), not hung."""

import json
import sys
import threading

DELAY = None if sys.argv[1:2] == ["never"] else float(sys.argv[1] if len(sys.argv) > 1 else "0.6")
NULL_ID = sys.argv[2:3] == ["null-id"]
TOOL = {
    "name": "echo",
    "description": "Says the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
}
out = threading.Lock()


def send(message):
    line = json.dumps(message) + "\n"
    with out:
        sys.stdout.write(line)
        sys.stdout.flush()


def error(id_, code, message):
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def result(id_, value):
    return {"jsonrpc": "2.0", "id": id_, "result": value}


def call(id_, params):
    name = params.get("name")
    args = params.get("arguments", {})
    meta = params.get("_meta", {})
    if name != "echo":
        return error(id_, -32602, f"Unknown tool: {name!r}")
    if not isinstance(args, dict) or not isinstance(meta, dict):
        return error(id_, -32602, "Invalid params")
    if set(args) != {"text"} or not isinstance(args["text"], str):
        return result(id_, {"content": [{"type": "text", "text": "text must be a string"}], "isError": True})
    return result(id_, {"content": [{"type": "text", "text": args["text"]}]})


def answer(message):
    id_ = message.get("id")
    method = message.get("method")
    params = message.get("params", {})
    if isinstance(params, list):
        return "late"
    if not isinstance(params, dict):
        return error(id_, -32602, "Invalid params")
    if method == "initialize":
        return result(id_, {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "late-params", "version": "1.0.0"},
        })
    if method == "ping":
        return result(id_, {})
    if method == "tools/list":
        return result(id_, {"tools": [TOOL]})
    if method == "tools/call":
        return call(id_, params)
    return error(id_, -32601, f"Method not found: {method}")


for raw in sys.stdin:
    if not raw.strip():
        continue
    try:
        message = json.loads(raw)
    except ValueError:
        send(error(None, -32700, "Parse error"))
        continue
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "method" not in message:
        send(error(None, -32600, "Invalid Request"))
        continue
    if "id" not in message:
        continue
    reply = answer(message)
    if reply == "late":
        if DELAY is not None:
            refusal = error(message["id"], -32602, "params must be an object")
            if NULL_ID:
                refusal = error(None, -32600, "Invalid Request")
            threading.Timer(DELAY, send, [refusal]).start()
        continue
    send(reply)
