"""A minimal MCP server over stdio (2025-11-25), written without an SDK and
unlike the reference: its one tool, `brew`, works `cups` steps of 20 ms and
reports progress after each when the call carries a progressToken.

How it works decides whether a client can cancel it in time (argv[1]):
- "always": every call is worked to its end before the next line is read,
  so a cancellation is read only after the answer (the client's race is
  lost every time);
- "once": so until the first cancellation has been read; from then on
  stdin is read between steps, a cancelled call stops unanswered and other
  requests are answered meanwhile (the race lost once, then won).

Each `notifications/cancelled` read appends a line to the file argv[2]."""

import json
import os
import select
import sys
import time

MODE = sys.argv[1]
CANCELS = sys.argv[2]
TOOL = {
    "name": "brew",
    "description": "Brews `cups` cups, 20 ms each.",
    "inputSchema": {
        "type": "object",
        "properties": {"cups": {"type": "integer", "minimum": 1, "maximum": 10}},
        "required": ["cups"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
}
pending = b""
read_between_steps = False


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(id_, value):
    return {"jsonrpc": "2.0", "id": id_, "result": value}


def next_line(timeout):
    """The next line of stdin within `timeout` seconds (None: wait), or None
    when none came; exits at the end of stdin."""
    global pending
    deadline = None if timeout is None else time.monotonic() + timeout
    while b"\n" not in pending:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not select.select([0], [], [], left)[0]:
            return None
        chunk = os.read(0, 65536)
        if not chunk:
            sys.exit(0)
        pending += chunk
    line, pending = pending.split(b"\n", 1)
    return line


def cancelled(message):
    global read_between_steps
    with open(CANCELS, "a") as f:
        f.write("cancelled\n")
    read_between_steps = MODE == "once"
    return message.get("params", {}).get("requestId")


def brew(id_, params):
    cups = params.get("arguments", {}).get("cups", 1)
    token = params.get("_meta", {}).get("progressToken")
    for k in range(1, cups + 1):
        if read_between_steps:
            end = time.monotonic() + 0.02
            while (left := end - time.monotonic()) > 0:
                line = next_line(left)
                if line is None:
                    break
                message = json.loads(line)
                if message.get("method") == "notifications/cancelled":
                    if cancelled(message) == id_:
                        return
                elif "id" in message:
                    send(answer(message))
        else:
            time.sleep(0.02)
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": k, "total": cups}})
    send(result(id_, {"content": [{"type": "text", "text": f"{cups} cups"}]}))


def answer(message):
    id_ = message.get("id")
    method = message.get("method")
    if method == "initialize":
        return result(id_, {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "race-cancel", "version": "1.0.0"},
        })
    if method == "ping":
        return result(id_, {})
    if method == "tools/list":
        return result(id_, {"tools": [TOOL]})
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": f"Method not found: {method}"}}


while True:
    message = json.loads(next_line(None))
    if message.get("method") == "notifications/cancelled":
        cancelled(message)
    elif message.get("method") == "tools/call" and message["params"].get("name") == "brew":
        brew(message["id"], message["params"])
    elif "id" in message:
        send(answer(message))
