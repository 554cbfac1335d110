//! The reference server's exact wire shapes, rule by rule, in both eras,
//! spoken as raw JSON lines to the real `mcperr reference` binary.

use serde_json::{json, Value};

use crate::support::{result, Era, Server, ERAS};

fn text_result(era: Era, text: &str, is_error: bool) -> Value {
    let mut r = json!({"content": [{"type": "text", "text": text}]});
    if is_error {
        r["isError"] = json!(true);
    }
    result(era, r)
}

#[test]
fn t1_tool_error_is_an_is_error_result_with_the_sdk_text_and_no_structured_content() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let r = s.tool("get_author", json!({"title": "Nothing"}));
        let want = "Error executing tool get_author: No book titled 'Nothing' in the catalog.";
        assert_eq!(r["result"], text_result(era, want, true), "{era:?}");
        assert!(r.get("error").is_none());
        // Python's repr() picks double quotes for a title with an apostrophe.
        let r = s.tool("get_author", json!({"title": "O'Brien"}));
        assert_eq!(
            r["result"]["content"][0]["text"],
            "Error executing tool get_author: No book titled \"O'Brien\" in the catalog."
        );
        let log = s.stderr();
        assert!(
            log.contains("INFO mcperr_reference: Tool 'get_author' failed"),
            "{log}"
        );
        assert!(
            !log.contains("Failure chain"),
            "T1 logs no traceback: {log}"
        );
    }
}

#[test]
fn t2_protocol_error_is_forwarded_verbatim_with_any_code() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let r = s.tool(
            "raise_protocol_error",
            json!({"code": -32000, "message": "x", "data": {"a": [1, null]}}),
        );
        assert_eq!(
            r["error"],
            json!({"code": -32000, "message": "x", "data": {"a": [1, null]}})
        );
        assert!(r.get("result").is_none());
        let r = s.tool(
            "raise_protocol_error",
            json!({"code": 42, "message": "no data"}),
        );
        assert_eq!(
            r["error"],
            json!({"code": 42, "message": "no data"}),
            "absent data stays absent"
        );
        assert_eq!(s.stderr(), "", "T2 logs nothing");
    }
}

#[test]
fn t3_crash_hides_its_text_logs_the_chain_and_the_session_survives() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let r = s.tool("crash", json!({"secret": "s3cr3t-canary"}));
        assert_eq!(
            r["result"],
            text_result(era, "Error executing tool crash", true)
        );
        assert!(!r.to_string().contains("s3cr3t"), "the secret leaked: {r}");
        let log = s.stderr();
        assert!(
            log.contains("ERROR mcperr_reference: Tool 'crash' raised an unexpected exception"),
            "{log}"
        );
        assert!(
            log.contains("s3cr3t-canary"),
            "the log keeps the crash text: {log}"
        );
        let r = s.tool("get_author", json!({"title": "Dune"}));
        assert_eq!(
            r["result"],
            text_result(era, "Frank Herbert", false),
            "J4: answered after a panic"
        );
    }
}

#[test]
fn t4_invalid_arguments_are_rejected_before_the_body_runs() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let count = |s: &mut Server| {
            s.tool("limited_calls", json!({}))["result"]["structuredContent"]["count"].clone()
        };
        assert_eq!(count(&mut s), json!(0));
        for (args, field) in [
            (json!({"limit": 999}), "limit"),
            (json!({"limit": 0}), "limit"),
            (json!({"limit": "5"}), "limit"),
            (json!({}), "limit"),
            (json!({"limit": 5, "extra": true}), "extra"),
        ] {
            let r = s.tool("limited", args.clone());
            assert_eq!(r["result"]["isError"], json!(true), "{args}: {r}");
            assert!(r["result"].get("structuredContent").is_none());
            let text = r["result"]["content"][0]["text"].as_str().unwrap();
            assert!(
                text.starts_with("Error executing tool limited: Invalid arguments: "),
                "{text}"
            );
            assert!(
                text.contains(field),
                "the message names the field {field}: {text}"
            );
        }
        assert_eq!(count(&mut s), json!(0), "the body never ran");
        let r = s.tool("limited", json!({"limit": 50}));
        assert_eq!(r["result"], text_result(era, "ok 50", false));
        assert_eq!(count(&mut s), json!(1));
        assert!(
            !s.stderr().contains("Failure chain"),
            "T4 logs no traceback"
        );
    }
}

#[test]
fn t5_unknown_tool_is_invalid_params() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let r = s.tool("no_such_tool", json!({}));
        assert_eq!(
            r["error"],
            json!({"code": -32602, "message": "Unknown tool: no_such_tool"})
        );
    }
}

#[test]
fn t6_malformed_tools_call_params_are_invalid_params() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        for params in [
            json!({}),
            json!({"name": 5}),
            json!({"name": "get_author", "arguments": "x"}),
        ] {
            let r = s.call("tools/call", params.clone());
            assert_eq!(r["error"]["code"], json!(-32602), "{params}: {r}");
            assert!(r["error"]["message"].is_string());
        }
    }
}

#[test]
fn t7_output_failing_its_schema_is_a_crash() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let r = s.tool("bad_output", json!({}));
        assert_eq!(
            r["result"],
            text_result(era, "Error executing tool bad_output", true)
        );
        assert!(s
            .stderr()
            .contains("Tool 'bad_output' raised an unexpected exception"));
    }
}

#[test]
fn t8_success_has_no_is_error_and_structured_content_matches_the_schema() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        assert_eq!(
            s.tool("get_author", json!({"title": "Neuromancer"}))["result"],
            text_result(era, "William Gibson", false)
        );
        let r = s.tool("limited_calls", json!({}));
        assert_eq!(
            r["result"],
            result(
                era,
                json!({"content": [{"type": "text", "text": "{\"count\":0}"}], "structuredContent": {"count": 0}})
            )
        );
    }
}

#[test]
fn r1_to_r5_resource_errors_have_exact_codes_messages_and_data() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let read = |s: &mut Server, uri: &str| s.call("resources/read", json!({"uri": uri}));
        let mut want = result(
            era,
            json!({"contents": [{"uri": "books://Dune", "mimeType": "text/plain", "text": "Dune by Frank Herbert"}]}),
        );
        if era == Era::Modern {
            // 2026-07-28's CacheableResult: reads say how long they may be cached.
            want["ttlMs"] = json!(0);
            want["cacheScope"] = json!("private");
        }
        assert_eq!(read(&mut s, "books://Dune")["result"], want);
        let cases = [
            (
                "books://Nothing",
                json!({"code": -32602, "message": "No book titled 'Nothing' in the catalog.", "data": {"uri": "books://Nothing"}}),
            ),
            (
                "nope://x",
                json!({"code": -32602, "message": "Unknown resource: nope://x", "data": {"uri": "nope://x"}}),
            ),
            (
                "books://a/b",
                json!({"code": -32602, "message": "Unknown resource: books://a/b", "data": {"uri": "books://a/b"}}),
            ),
            (
                "fail://db",
                json!({"code": -32603, "message": "Backend unavailable for db", "data": {"uri": "fail://db"}}),
            ),
            (
                "crash://s3cr3t",
                json!({"code": -32603, "message": "Error creating resource from template crash://s3cr3t", "data": {"uri": "crash://s3cr3t"}}),
            ),
            (
                "mcperror://-32001",
                json!({"code": -32001, "message": "Resource protocol error -32001", "data": {"code": "-32001"}}),
            ),
            (
                "mcperror://7",
                json!({"code": 7, "message": "Resource protocol error 7", "data": {"code": "7"}}),
            ),
        ];
        for (uri, want) in cases {
            let r = read(&mut s, uri);
            assert_eq!(r["error"], want, "{era:?} {uri}");
            assert!(r.get("result").is_none());
        }
        let log = s.stderr();
        assert!(
            log.contains(
                "ERROR mcperr_reference: Resource 'crash://s3cr3t' raised an unexpected exception"
            ),
            "{log}"
        );
        assert!(
            log.contains("INFO mcperr_reference: Resource error for fail://db"),
            "{log}"
        );
    }
}

#[test]
fn r6_missing_or_non_string_uri_is_invalid_params() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        for params in [json!({}), json!({"uri": 5})] {
            assert_eq!(
                s.call("resources/read", params)["error"]["code"],
                json!(-32602)
            );
        }
    }
}

#[test]
fn p1_to_p3_prompt_errors() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let r = s.call(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        );
        assert_eq!(
            r["result"]["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}])
        );
        let r = s.call("prompts/get", json!({"name": "nope"}));
        assert_eq!(
            r["error"],
            json!({"code": -32602, "message": "Unknown prompt: nope"})
        );
        let r = s.call("prompts/get", json!({"name": "greet", "arguments": {}}));
        assert_eq!(
            r["error"],
            json!({"code": -32602, "message": "Missing required arguments: name"})
        );
        let r = s.call(
            "prompts/get",
            json!({"name": "crash_prompt", "arguments": {"secret": "s3cr3t"}}),
        );
        assert_eq!(
            r["error"],
            json!({"code": -32603, "message": "Error rendering prompt crash_prompt"})
        );
        assert!(s
            .stderr()
            .contains("Prompt 'crash_prompt' raised an unexpected exception"));
    }
}

#[test]
fn j1_ids_are_echoed_with_their_type() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        for id in [
            json!("7"),
            json!(7),
            json!(-1),
            json!(""),
            json!("x y"),
            json!(9007199254740993_u64),
        ] {
            let msg = json!({"jsonrpc": "2.0", "id": id, "method": "prompts/list", "params": s.params(json!({}))});
            let r = s.request(msg);
            assert_eq!(r["id"], id);
            assert_eq!(r["jsonrpc"], "2.0");
            assert!(r["result"]["prompts"].is_array(), "{r}");
        }
    }
}

#[test]
fn j2_unknown_method_and_cross_era_methods_are_method_not_found() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let r = s.call("bookshop/teleport", json!({}));
        assert_eq!(
            r["error"],
            json!({"code": -32601, "message": "Method not found: bookshop/teleport"})
        );
        let others: &[&str] = if era == Era::Legacy {
            &["server/discover"]
        } else {
            &["initialize", "ping"]
        };
        for other in others {
            assert_eq!(
                s.call(other, json!({}))["error"]["code"],
                json!(-32601),
                "{era:?} {other}"
            );
        }
    }
}

#[test]
fn j3_notifications_get_no_response_and_j6_garbage_is_dropped() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        s.send_line(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        );
        s.send_line("{not json");
        s.send_line("[1,2]");
        s.send_line(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#);
        s.send_line("\u{1}\u{2}binary");
        let r = s.call("prompts/list", json!({}));
        assert!(
            r["result"]["prompts"].is_array(),
            "the first line after them answers the request: {r}"
        );
        assert!(s.try_recv_line(200).is_none());
        assert!(s.stderr().contains("WARN mcperr_reference: dropping input"));
    }
}

#[test]
fn j5_stdout_carries_only_json_rpc_lines() {
    let mut s = Server::start(Era::Modern, &[]);
    s.tool("crash", json!({"secret": "line1\nline2"}));
    s.tool("get_author", json!({"title": "multi\nline"}));
    s.call(
        "prompts/get",
        json!({"name": "crash_prompt", "arguments": {"secret": "x"}}),
    );
    // Every response above was parsed as one JSON object per line by `recv`.
    assert!(s.try_recv_line(200).is_none(), "no stray output");
    assert!(s.stderr().contains("ERROR"), "logs went to stderr");
    assert_eq!(s.finish(), Some(0), "EOF on stdin is a clean exit");
}

#[test]
fn modern_requests_need_the_envelope_and_a_supported_version() {
    let mut s = Server::spawn(Era::Modern, &[]);
    let r = s.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}));
    assert_eq!(r["error"]["code"], json!(-32602), "{r}");
    let r = s.request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}));
    assert_eq!(
        r["error"]["code"],
        json!(-32602),
        "clientCapabilities missing: {r}"
    );
    let r = s.request(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}}));
    assert_eq!(
        r["error"],
        json!({"code": -32022, "message": "Unsupported protocol version: 1999-01-01",
               "data": {"supported": ["2026-07-28"], "requested": "1999-01-01"}})
    );
    let r = s.call("server/discover", json!({}));
    assert_eq!(r["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(r["result"]["resultType"], json!("complete"));
}

#[test]
fn lists_describe_the_bookshop() {
    for era in ERAS {
        let mut s = Server::start(era, &[]);
        let tools = s.call("tools/list", json!({}))["result"]["tools"].clone();
        let names: Vec<&str> = tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let mut want = vec![
            "get_author",
            "raise_protocol_error",
            "crash",
            "limited",
            "limited_calls",
            "bad_output",
            "confirm_purchase",
            "slow",
            "branch_hours",
            "shelve_book",
            "import_catalog",
            "restock",
            "close_shop",
        ];
        // reindex may only be called as a task, which 2025-11-25 alone has.
        if era == Era::Legacy {
            want.push("reindex");
        }
        assert_eq!(names, want, "{era:?}");
        assert!(tools
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["inputSchema"]["type"] == "object"));
        assert_eq!(
            tools[3]["inputSchema"]["properties"]["limit"],
            json!({"type": "integer", "minimum": 1, "maximum": 50})
        );
        assert_eq!(tools[5]["outputSchema"]["required"], json!(["temperature"]));
        // Templates come two to a page: each page's cursor is the one
        // before's nextCursor, and the third page is the last.
        let first = s.call("resources/templates/list", json!({}))["result"].clone();
        let cursor = first["nextCursor"].clone();
        assert!(cursor.is_string(), "{first}");
        let second =
            s.call("resources/templates/list", json!({"cursor": cursor}))["result"].clone();
        let cursor = second["nextCursor"].clone();
        assert!(cursor.is_string(), "{second}");
        let third = s.call("resources/templates/list", json!({"cursor": cursor}))["result"].clone();
        assert!(third.get("nextCursor").is_none(), "{third}");
        let uris: Vec<&str> = [&first, &second, &third]
            .iter()
            .flat_map(|page| page["resourceTemplates"].as_array().unwrap())
            .map(|t| t["uriTemplate"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                "books://{title}",
                "fail://{name}",
                "crash://{secret}",
                "mcperror://{code}",
                "file:///bookshop/{name}"
            ]
        );
        let prompts = s.call("prompts/list", json!({}))["result"]["prompts"].clone();
        assert_eq!(
            prompts[0]["arguments"][0],
            json!({"name": "name", "description": "Who to greet.", "required": true})
        );
        assert_eq!(
            s.call("tools/list", json!({"cursor": "bogus"}))["error"]["code"],
            json!(-32602)
        );
    }
}
