//! The OpenTelemetry export (`--features otel`) against a collector on loopback: an HTTP
//! listener on 127.0.0.1 that decodes what it gets. Run with
//! `cargo test -p sixfold-cli --features otel --test otel`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// One request the collector received.
#[derive(Debug)]
struct Request {
    path: String,
    content_type: String,
    body: Vec<u8>,
}

/// A collector on loopback: answers every request `200 {}` and hands it over.
fn collector() -> (u16, mpsc::Receiver<Request>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let tx = tx.clone();
            std::thread::spawn(move || serve(stream, &tx));
        }
    });
    (port, rx)
}

/// Requests on one connection (kept alive), each read whole by its `Content-Length`.
fn serve(stream: TcpStream, tx: &mpsc::Sender<Request>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut first = String::new();
        if reader.read_line(&mut first).unwrap_or(0) == 0 {
            return;
        }
        let path = first.split_whitespace().nth(1).unwrap_or_default().to_string();
        let (mut length, mut content_type) = (0usize, String::new());
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap(),
                "content-type" => content_type = value.trim().to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let _ = tx.send(Request {
            path,
            content_type,
            body,
        });
        let reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        if out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&project).unwrap();
    Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .unwrap();
    std::fs::write(project.join("a.txt"), "a\n").unwrap();
    let out = Command::new(SIXFOLD)
        .args(["mode", "set", "workspace-write"])
        .current_dir(&project)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .output()
        .unwrap();
    assert!(out.status.success());
    (dir, project)
}

/// One PreToolUse through the hook, with the OpenTelemetry variables given; its answer and
/// how long the process took.
fn hook(
    project: &Path,
    session: &str,
    id: &str,
    tool: &str,
    input: Value,
    env: &[(&str, String)],
) -> (Value, Duration) {
    let event = json!({ "hook_event_name": "PreToolUse", "session_id": session, "cwd": project,
        "tool_name": tool, "tool_input": input, "tool_use_id": id });
    let mut cmd = Command::new(SIXFOLD);
    cmd.args(["hook", "claude-code"])
        .current_dir(project)
        .env("XDG_STATE_HOME", project.parent().unwrap().join("state"));
    for name in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
        "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT",
        "OTEL_SDK_DISABLED",
        "OTEL_SERVICE_NAME",
    ] {
        cmd.env_remove(name);
    }
    for (name, value) in env {
        cmd.env(name, value);
    }
    let started = Instant::now();
    let out = support::fed(&mut cmd, event.to_string().as_bytes());
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    (serde_json::from_slice(&out.stdout).unwrap(), took)
}

/// The judged lines of a session's record.
fn judged(project: &Path, session: &str) -> Vec<Value> {
    std::fs::read_to_string(project.join(format!(".sixfold/runs/{session}.jsonl")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["event"] == "judged")
        .collect()
}

/// `a.b` of an OTLP/JSON object, under its camelCase name or its snake_case one.
fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> &'a Value {
    if v.get(camel).is_some() {
        &v[camel]
    } else {
        &v[snake]
    }
}

/// Attributes by key.
type Attributes = serde_json::Map<String, Value>;

/// The log records of an OTLP/JSON export request, each with its attributes as a map, and the
/// resource's attributes.
fn records(body: &Value) -> Vec<(Value, Attributes, Attributes)> {
    let attributes = |v: &Value| {
        v["attributes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| (a["key"].as_str().unwrap().to_string(), a["value"].clone()))
            .collect::<Attributes>()
    };
    let mut out = Vec::new();
    for resource in field(body, "resourceLogs", "resource_logs").as_array().unwrap() {
        let resource_attributes = attributes(&resource["resource"]);
        for scope in field(resource, "scopeLogs", "scope_logs").as_array().unwrap() {
            for record in field(scope, "logRecords", "log_records").as_array().unwrap() {
                out.push((record.clone(), attributes(record), resource_attributes.clone()));
            }
        }
    }
    out
}

fn string(v: &Value) -> &str {
    field(v, "stringValue", "string_value").as_str().unwrap_or_default()
}

/// Each judgement reaches the collector as a log record over OTLP/HTTP JSON: its decision id,
/// decision, mode, reason, rules, bundle and step as attributes, the decision in OPA's shape as
/// its body, the time it was written as its time; the record on disk is unchanged.
#[test]
fn judgements_reach_a_collector_on_loopback_as_log_records() {
    let (_dir, project) = project();
    let (port, requests) = collector();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{port}")),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json".to_string()),
    ];
    let (read, _) = hook(
        &project,
        "s",
        "1",
        "Read",
        json!({ "file_path": project.join("a.txt") }),
        &env,
    );
    let (curl, _) = hook(
        &project,
        "s",
        "2",
        "Bash",
        json!({ "command": "curl https://example.com" }),
        &env,
    );
    assert_eq!(read["hookSpecificOutput"]["permissionDecision"], "allow");
    assert_eq!(curl["hookSpecificOutput"]["permissionDecision"], "deny");
    let lines = judged(&project, "s");
    assert_eq!(lines.len(), 2);

    let mut got = Vec::new();
    while got.len() < 2 {
        let request = requests
            .recv_timeout(Duration::from_secs(20))
            .expect("the collector got no export");
        assert_eq!(request.path, "/v1/logs");
        assert!(
            request.content_type.starts_with("application/json"),
            "{}",
            request.content_type
        );
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        got.extend(records(&body));
    }
    assert_eq!(got.len(), 2, "{got:#?}");
    for ((record, attrs, resource), line) in got.iter().zip(&lines) {
        assert_eq!(
            string(&attrs["sixfold.decision_id"]),
            line["decision_id"].as_str().unwrap()
        );
        assert_eq!(string(&attrs["sixfold.decision"]), line["decision"].as_str().unwrap());
        assert_eq!(string(&attrs["sixfold.mode"]), "workspace-write");
        assert_eq!(string(&attrs["sixfold.reason"]), line["reason"].as_str().unwrap());
        assert_eq!(string(&attrs["sixfold.bundle"]), line["bundle"].as_str().unwrap());
        assert_eq!(string(&attrs["sixfold.session"]), "s");
        assert_eq!(
            string(&attrs["sixfold.step.tool"]),
            line["step"]["tool"].as_str().unwrap()
        );
        assert_eq!(string(&resource["service.name"]), "sixfold");
        let body: Value = serde_json::from_str(string(&record["body"])).unwrap();
        assert_eq!(body["decision_id"], line["decision_id"]);
        assert_eq!(body["result"]["decision"], line["decision"]);
        assert_eq!(body["timestamp"], line["timestamp"]);
        // The record's time is the line's, in nanoseconds since the epoch.
        let nanos = field(record, "timeUnixNano", "time_unix_nano");
        let nanos: u128 = match nanos {
            Value::String(s) => s.parse().unwrap(),
            other => u128::from(other.as_u64().unwrap()),
        };
        let at = std::time::UNIX_EPOCH + Duration::from_nanos(u64::try_from(nanos).unwrap());
        assert_eq!(
            humantime::format_rfc3339_micros(at).to_string(),
            line["timestamp"].as_str().unwrap()
        );
    }
    // The rules that decided, as a list.
    for ((_, attrs, _), line) in got.iter().zip(&lines) {
        let list = field(&attrs["sixfold.rules"], "arrayValue", "array_value");
        let listed: Vec<&str> = list["values"]
            .as_array()
            .map(|v| v.iter().map(string).collect())
            .unwrap_or_default();
        let want: Vec<&str> = line["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert_eq!(listed, want);
    }
}

/// The default protocol, OTLP/HTTP protobuf: the decision's id and fields travel as protobuf
/// strings (bytes as written), so the collector finds them in what it decodes.
#[test]
fn the_default_protocol_is_protobuf() {
    let (_dir, project) = project();
    let (port, requests) = collector();
    let env = [(
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
        format!("http://127.0.0.1:{port}/v1/logs"),
    )];
    hook(
        &project,
        "p",
        "1",
        "Read",
        json!({ "file_path": project.join("a.txt") }),
        &env,
    );
    let line = &judged(&project, "p")[0];
    let request = requests
        .recv_timeout(Duration::from_secs(20))
        .expect("the collector got no export");
    assert_eq!(request.path, "/v1/logs");
    assert_eq!(request.content_type, "application/x-protobuf");
    let has = |text: &str| request.body.windows(text.len()).any(|w| w == text.as_bytes());
    for text in [
        line["decision_id"].as_str().unwrap(),
        line["bundle"].as_str().unwrap(),
        "sixfold.decision",
        "allow",
        "workspace-write",
    ] {
        assert!(has(text), "{text} is not in the export");
    }
}

/// A collector that is down, or that never answers, changes no decision, loses no line of the
/// record, and costs the hook at most the export's short timeout (1 s, whatever is asked).
#[test]
fn a_collector_down_or_silent_changes_nothing() {
    let (_dir, project) = project();
    let input = json!({ "command": "curl https://example.com" });
    let (plain, _) = hook(&project, "x", "1", "Bash", input.clone(), &[]);
    // Down: nothing listens on the port.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // Silent: accepts, reads, never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().flatten() {
            held.push(stream);
        }
    });
    for (i, port) in [closed, silent_port].into_iter().enumerate() {
        let env = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{port}")),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "60000".to_string()),
        ];
        let (answer, took) = hook(&project, "x", &format!("{}", i + 2), "Bash", input.clone(), &env);
        assert_eq!(answer, plain);
        assert!(took < Duration::from_secs(6), "the hook took {took:?}");
    }
    assert_eq!(judged(&project, "x").len(), 3);
    // The same allowed call stays allowed with the collector down.
    let read = json!({ "file_path": project.join("a.txt") });
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{closed}"))];
    let (answer, _) = hook(&project, "x", "9", "Read", read, &env);
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow");
}
