//! One proxied session: frames from the agent and from the server arrive on one channel and are
//! handled in order, so a judgement, its record and the forwarding of the call happen together.
//!
//! `tools/call` and `resources/read` are judged before they are forwarded; `tools/list` answers
//! are filtered by the mode and their annotations cached; the handshake answer (`initialize` or
//! `server/discover`) declares `tools.listChanged`. Only the methods known to have no effect
//! pass unjudged (an allow-list, exact and case-sensitive); any other request is refused with an
//! error, any other notification dropped and logged.
//!
//! Every request reaches the server under an id of the proxy's own, mapped back on its answer:
//! an answer to an id the proxy never sent is dropped, a client reusing an id cannot mix two
//! calls up, and every request is answered, by the server, by an error when its answer is over
//! the frame limit, or by a timeout that also cancels it upstream.

use crate::effects::Call;
use crate::frame::{self, Kind, Line, MAX_FRAME_BYTES};
use crate::upstream::Upstream;
use crate::{Governor, Input, Options, DEFAULT_CALL_TIMEOUT, TIMEOUT_SETTING};
use rmcp::model::{ErrorCode, ToolAnnotations};
use serde_json::{json, Value};
use sixfold_core::decision::{Decision, Judgement};
use sixfold_core::trace::{Event, Outcome, Status, Step};
use sixfold_core::uri::{self, Resource};
use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read, Write};
use std::sync::mpsc::{channel, Sender};
use std::time::{Duration, Instant};

/// Requests that act on nothing a policy governs: passed unjudged. Exact and case-sensitive, so
/// a server that reads method names loosely never sees a judged method under another spelling.
const UNJUDGED_REQUESTS: &[&str] = &[
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// Notifications from the client that act on nothing a policy governs. Any other is dropped and
/// logged (a notification cannot be answered with a refusal).
const UNJUDGED_NOTIFICATIONS: &[&str] = &[
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
];

/// How often the session looks at its deadlines.
const TICK: Duration = Duration::from_millis(100);

/// What a forwarded request was, to handle its answer.
#[derive(Debug)]
enum Pending {
    /// `initialize` or `server/discover`: the answer declares `tools.listChanged`.
    Handshake,
    /// `tools/list`: the answer is filtered and its annotations cached.
    List,
    /// Another request of the allow-list: its answer passes.
    Other,
    /// A judged call: its outcome goes on the record.
    Call { step: String, resource: bool },
    /// The proxy's own `tools/list`, to cache annotations before the first call.
    OwnList,
}

/// A request sent to the server under the proxy's id.
#[derive(Debug)]
struct Forwarded {
    /// The client's id, put back on the answer (`Null` for the proxy's own requests).
    client: Value,
    what: Pending,
    /// When it is answered with a timeout error and cancelled upstream.
    deadline: Instant,
}

/// A call held while the person is asked about it.
#[derive(Debug)]
struct Held {
    frame: Value,
    id: Value,
    step: String,
    hint: String,
    reason: String,
}

struct Session<'g, W: Write> {
    options: Options,
    governor: &'g mut dyn Governor,
    out: W,
    upstream: Upstream,
    /// Why the server cannot be reached any more, once it cannot.
    gone: Option<String>,
    /// Requests waiting for the server, by the proxy's id (as a key).
    forwarded: HashMap<String, Forwarded>,
    /// The server's own requests passed to the client, by id: only their answers go back.
    server_asked: HashSet<String>,
    held: HashMap<String, Held>,
    annotations: HashMap<String, ToolAnnotations>,
    /// The client declared elicitation.
    elicitation: bool,
    /// The mode the client's tool list was last made under.
    listed_under: Option<String>,
    /// The client finished its handshake.
    ready: bool,
    /// The last id the proxy gave (to the server's requests and its own asks).
    next: u64,
    /// The calls judged so far: each gets its own step id.
    steps: u64,
    /// When the mode was last looked at between calls.
    watched: Instant,
    /// The bundle's call timeout, as last read.
    bundle_timeout: Option<Duration>,
}

/// Runs the proxy: the agent's frames on `client_in`, answers on `client_out`, the server started
/// from `options.command` (or reached at `options.url`). Returns when the agent closes its input (the server is then stopped).
pub fn run<W: Write>(
    options: Options,
    governor: &mut dyn Governor,
    client_in: Box<dyn Read + Send>,
    client_out: W,
) -> Result<(), String> {
    let (send, inputs) = channel();
    let upstream = match &options.url {
        Some(url) => Upstream::http(url, format!("`{}` ({url})", options.server), send.clone())?,
        None => {
            let name = format!("`{}` ({})", options.server, options.command.join(" "));
            Upstream::spawn(&options.command, name, send.clone())?
        }
    };
    spawn_client_reader(client_in, send.clone());
    spawn_ticker(send);
    let mut session = Session {
        options,
        governor,
        out: client_out,
        upstream,
        gone: None,
        forwarded: HashMap::new(),
        server_asked: HashSet::new(),
        held: HashMap::new(),
        annotations: HashMap::new(),
        elicitation: false,
        listed_under: None,
        ready: false,
        next: 0,
        steps: 0,
        watched: Instant::now(),
        bundle_timeout: None,
    };
    while let Ok(input) = inputs.recv() {
        match input {
            Input::Client(Line::End) => break,
            Input::Client(Line::TooLarge(id)) => session.client_too_large(id),
            Input::Client(Line::Frame(bytes)) => session.client_frame(&bytes),
            Input::Upstream(Line::End) => session.upstream_ended(),
            Input::Upstream(Line::TooLarge(id)) => session.upstream_too_large(id),
            Input::Upstream(Line::Frame(bytes)) => session.upstream_frame(&bytes),
            Input::Tick => session.tick(),
        }
    }
    session.upstream.stop();
    Ok(())
}

fn spawn_client_reader(client_in: Box<dyn Read + Send>, send: Sender<Input>) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(client_in);
        loop {
            let line = frame::read_line(&mut reader, MAX_FRAME_BYTES);
            let end = line == Line::End;
            if send.send(Input::Client(line)).is_err() || end {
                return;
            }
        }
    });
}

fn spawn_ticker(send: Sender<Input>) {
    std::thread::spawn(move || loop {
        std::thread::sleep(TICK);
        if send.send(Input::Tick).is_err() {
            return;
        }
    });
}

/// The bundle's call timeout setting (the smallest any policy sets).
fn timeout_setting(judging: &crate::Judging) -> Option<Duration> {
    judging
        .bundle
        .policies()
        .filter_map(|p| p.settings.get(TIMEOUT_SETTING).and_then(Value::as_u64))
        .min()
        .map(Duration::from_secs)
}

/// The command that would approve a step: a kept rule on the place it touches, else a mapping.
fn approve_hint(governor: &dyn Governor, step: &Step, server: &str, tool: &str) -> String {
    let place = step
        .effects
        .writes
        .iter()
        .chain(&step.effects.reads)
        .find(|p| p.as_str() != "*");
    match place {
        Some(p) => format!(
            "run `{}` (or switch to a wider mode with `sixfold mode set`)",
            governor.approve_hint(p)
        ),
        None => format!(
            "its effects are unknown: map it in the bundle (`[mcp.\"{server}/{tool}\"]`), trust the server's annotations, or switch mode with `sixfold mode set`"
        ),
    }
}

impl<W: Write> Session<'_, W> {
    fn send_client(&mut self, message: &Value) {
        if let Ok(mut line) = serde_json::to_vec(message) {
            line.push(b'\n');
            self.write_client(&line);
        }
    }

    /// One whole line in one write, flushed at once.
    fn write_client(&mut self, line: &[u8]) {
        // A client that stopped reading ends the session when its input closes.
        let _ = self.out.write_all(line).and_then(|()| self.out.flush());
    }

    /// Sends a message to the server. What is judged is sent as the proxy parsed it (serialised
    /// again, never the agent's own bytes), so the server reads exactly what was judged.
    fn send_upstream(&mut self, message: &Value) -> bool {
        match serde_json::to_vec(message) {
            Ok(mut line) => {
                line.push(b'\n');
                self.upstream.send(&line)
            }
            Err(_) => false,
        }
    }

    fn own_id(&mut self, what: &str) -> Value {
        self.next += 1;
        Value::String(format!("sixfold-{what}-{}", self.next))
    }

    fn client_frame(&mut self, bytes: &[u8]) {
        let message: Value = match serde_json::from_slice(bytes) {
            Ok(m) => m,
            Err(e) => {
                return self.send_client(&frame::error(
                    Value::Null,
                    ErrorCode::PARSE_ERROR,
                    &format!("sixfold: the frame is not JSON: {e}"),
                ))
            }
        };
        match frame::kind(&message) {
            Kind::Request => self.client_request(message),
            Kind::Notification => self.client_notification(message),
            Kind::Response => self.client_response(message),
            Kind::Invalid => {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                self.send_client(&frame::error(
                    id,
                    ErrorCode::INVALID_REQUEST,
                    "sixfold: the frame is not a JSON-RPC request, notification or response",
                ))
            }
        }
    }

    /// A frame from the client over the limit: a request among it still gets its answer.
    fn client_too_large(&mut self, id: Option<Value>) {
        let text = format!("sixfold: a frame larger than {MAX_FRAME_BYTES} bytes is refused");
        eprintln!("{text}");
        self.send_client(&frame::error(
            id.unwrap_or(Value::Null),
            ErrorCode::INVALID_REQUEST,
            &text,
        ));
    }

    fn client_request(&mut self, message: Value) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let what = match method.as_str() {
            "tools/call" => return self.call(message, id, false),
            "resources/read" => return self.call(message, id, true),
            "initialize" | "server/discover" => {
                self.elicitation = message.pointer("/params/capabilities/elicitation").is_some();
                Pending::Handshake
            }
            "tools/list" => Pending::List,
            m if UNJUDGED_REQUESTS.contains(&m) => Pending::Other,
            other => {
                // INVARIANT (fail closed): a method not known to have no effect is not forwarded
                // unjudged, whatever a server would make of it (`Tools/Call`, `tools/call `).
                let text = format!(
                    "sixfold: the method `{other}` is refused: only `tools/call` and `resources/read` are judged, and only methods known to have no effect pass unjudged"
                );
                eprintln!("{text}");
                return self.send_client(&frame::error(id, ErrorCode::METHOD_NOT_FOUND, &text));
            }
        };
        let handshake = matches!(what, Pending::Handshake);
        self.forward(message, id, what);
        if handshake {
            // The bundle is read while the server answers the handshake, not after the client's
            // first `tools/list` (which an agent CLI may not wait for long). An error here is
            // met again at the first call.
            if let Ok(judging) = self.governor.judging() {
                self.bundle_timeout = timeout_setting(judging);
            }
        }
    }

    /// Sends a request to the server under a fresh id of the proxy's, to be answered by the
    /// server, by an error, or at its deadline.
    fn forward(&mut self, mut message: Value, client: Value, what: Pending) {
        if let Some(why) = self.gone.clone() {
            return self.fail(client, what, &why);
        }
        self.next += 1;
        let upstream_id = Value::from(self.next);
        if let Some(o) = message.as_object_mut() {
            o.insert("id".into(), upstream_id.clone());
        }
        let deadline = Instant::now() + self.call_timeout();
        let key = frame::key(&upstream_id);
        self.forwarded.insert(key.clone(), Forwarded { client, what, deadline });
        if !self.send_upstream(&message) {
            let why = self.mark_gone();
            if let Some(f) = self.forwarded.remove(&key) {
                self.fail(f.client, f.what, &why);
            }
        }
    }

    /// How long a forwarded request waits for the server: `--call-timeout`, else the bundle's
    /// setting as last read (with each judgement, so the handshake waits on no bundle), else the
    /// default.
    fn call_timeout(&self) -> Duration {
        self.options
            .call_timeout
            .or(self.bundle_timeout)
            .unwrap_or(DEFAULT_CALL_TIMEOUT)
    }

    /// Answers a request that will get no answer from the server.
    fn fail(&mut self, client: Value, what: Pending, why: &str) {
        match what {
            Pending::OwnList => {}
            Pending::Call { step, resource } => {
                self.observe(&step, Status::Failed);
                self.refuse(client, why, resource);
            }
            _ => self.send_client(&frame::error(client, ErrorCode::INTERNAL_ERROR, why)),
        }
    }

    fn client_notification(&mut self, mut message: Value) {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !UNJUDGED_NOTIFICATIONS.contains(&method.as_str()) {
            // INVARIANT (fail closed): a notification cannot be refused with an answer, so one
            // that could act (`tools/call` without an id) is dropped, and said so.
            return eprintln!(
                "sixfold: the notification `{method}` from the client was dropped: only notifications known to have no effect are passed"
            );
        }
        if method == "notifications/cancelled" && !self.cancelled(&mut message) {
            return;
        }
        if self.gone.is_none() && !self.send_upstream(&message) {
            self.mark_gone();
        }
        if method == "notifications/initialized" {
            self.ready = true;
            self.list_for_cache();
        }
    }

    /// The client cancels one of its requests: named to the server by the proxy's id. False when
    /// no such request waits (the notification is then dropped).
    fn cancelled(&mut self, message: &mut Value) -> bool {
        let Some(client) = message.pointer("/params/requestId").cloned() else {
            return false;
        };
        let found = self
            .forwarded
            .iter()
            .find(|(_, f)| f.client == client && !matches!(f.what, Pending::OwnList))
            .map(|(k, _)| k.clone());
        let Some(key) = found else { return false };
        let Some(f) = self.forwarded.remove(&key) else {
            return false;
        };
        if let Pending::Call { step, .. } = &f.what {
            self.observe(step, Status::Failed);
        }
        let upstream_id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
        if let Some(params) = message.get_mut("params").and_then(Value::as_object_mut) {
            params.insert("requestId".into(), upstream_id);
        }
        true
    }

    /// Asks the server for its tools, to cache their annotations (a `tools/call` does not carry
    /// them).
    fn list_for_cache(&mut self) {
        if self.gone.is_some() {
            return;
        }
        let message = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {}});
        self.forward(message, Value::Null, Pending::OwnList);
    }

    fn client_response(&mut self, message: Value) {
        let key = message.get("id").map(frame::key).unwrap_or_default();
        if let Some(held) = self.held.remove(&key) {
            return self.answered(held, &message);
        }
        // An answer to the server's own request (roots, sampling, elicitation) goes back to it;
        // any other is the client's mistake, and nobody's to read.
        if !self.server_asked.remove(&key) {
            return eprintln!("sixfold: an answer from the client to no request (id {key}) was dropped");
        }
        if self.gone.is_none() && !self.send_upstream(&message) {
            self.mark_gone();
        }
    }

    /// The server cannot be reached: said once on stderr, and every later call is an error
    /// naming it.
    fn mark_gone(&mut self) -> String {
        if self.gone.is_none() {
            let status = self.upstream.status();
            let why = format!(
                "sixfold: the upstream MCP server {} has exited ({status}); restart the agent's MCP server",
                self.upstream.name
            );
            eprintln!("{why}");
            self.gone = Some(why);
        }
        self.gone.clone().unwrap_or_default()
    }

    fn upstream_ended(&mut self) {
        let why = self.mark_gone();
        // Every request still waiting for the server is answered now, with the reason.
        let waiting: Vec<Forwarded> = self.forwarded.drain().map(|(_, f)| f).collect();
        for f in waiting {
            self.fail(f.client, f.what, &why);
        }
    }

    /// A frame from the server over the limit: the request it answers gets an error, a request
    /// of its own is answered with one.
    fn upstream_too_large(&mut self, id: Option<Value>) {
        let text = format!(
            "sixfold: the upstream server {} sent a frame larger than {MAX_FRAME_BYTES} bytes; it was dropped",
            self.upstream.name
        );
        eprintln!("{text}");
        let waiting = id.as_ref().and_then(|id| self.forwarded.remove(&frame::key(id)));
        match waiting {
            Some(f) => self.fail(f.client, f.what, &text),
            None => {
                let refused = format!("sixfold: a frame larger than {MAX_FRAME_BYTES} bytes is refused");
                self.send_upstream(&frame::error(
                    id.unwrap_or(Value::Null),
                    ErrorCode::INVALID_REQUEST,
                    &refused,
                ));
            }
        }
    }

    fn upstream_frame(&mut self, bytes: &[u8]) {
        let message: Value = match serde_json::from_slice(bytes) {
            Ok(m) => m,
            Err(e) => {
                eprintln!(
                    "sixfold: the upstream server {} sent a frame that is not JSON: {e}",
                    self.upstream.name
                );
                let answer = frame::error(
                    Value::Null,
                    ErrorCode::PARSE_ERROR,
                    &format!("sixfold: the frame is not JSON: {e}"),
                );
                self.send_upstream(&answer);
                return;
            }
        };
        match frame::kind(&message) {
            Kind::Response => self.upstream_response(message),
            Kind::Notification => {
                if message.get("method").and_then(Value::as_str) == Some("notifications/tools/list_changed") {
                    self.list_for_cache();
                }
                let mut line = bytes.to_vec();
                line.push(b'\n');
                self.write_client(&line);
            }
            // The server's own requests (roots, sampling, elicitation) are the client's to answer.
            Kind::Request => {
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let key = frame::key(&id);
                // INVARIANT (fail closed): the server cannot use the proxy's own ids, so the
                // client's answer to a request of the server's is never read as the answer to
                // the proxy's ask.
                let own = id.as_str().is_some_and(|id| id.starts_with("sixfold-"));
                if own || self.server_asked.contains(&key) {
                    let answer = frame::error(
                        id,
                        ErrorCode::INVALID_REQUEST,
                        "sixfold: ids starting `sixfold-` are the proxy's, and an id still waiting for an answer cannot be used again",
                    );
                    self.send_upstream(&answer);
                } else {
                    self.server_asked.insert(key);
                    self.send_client(&message);
                }
            }
            Kind::Invalid => {
                eprintln!(
                    "sixfold: the upstream server {} sent a frame that is not JSON-RPC",
                    self.upstream.name
                );
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                let answer = frame::error(
                    id,
                    ErrorCode::INVALID_REQUEST,
                    "sixfold: the frame is not a JSON-RPC request, notification or response",
                );
                self.send_upstream(&answer);
            }
        }
    }

    fn upstream_response(&mut self, mut message: Value) {
        let key = message.get("id").map(frame::key).unwrap_or_default();
        // INVARIANT (fail closed): only an answer to a request the proxy sent and still waits
        // for reaches anyone; any other id (one the client never sent, one shaped like the
        // proxy's, one answered already or timed out) is dropped.
        let Some(f) = self.forwarded.remove(&key) else {
            return eprintln!(
                "sixfold: the upstream server {} answered a request nobody sent or that was answered already (id {key}); the answer was dropped",
                self.upstream.name
            );
        };
        if let Some(o) = message.as_object_mut() {
            o.insert("id".into(), f.client);
        }
        match f.what {
            Pending::OwnList => return self.cache(&message),
            Pending::Handshake => {
                if let Some(caps) = message
                    .pointer_mut("/result/capabilities")
                    .and_then(Value::as_object_mut)
                {
                    let tools = caps.entry("tools").or_insert_with(|| json!({}));
                    if let Some(tools) = tools.as_object_mut() {
                        tools.insert("listChanged".into(), Value::Bool(true));
                    }
                }
            }
            Pending::List => {
                self.cache(&message);
                self.filter(&mut message);
            }
            Pending::Other => {}
            Pending::Call { step, .. } => {
                let failed = message.get("error").is_some()
                    || message.pointer("/result/isError").and_then(Value::as_bool) == Some(true);
                // The answer first: the outcome's record is not on the agent's critical path.
                self.send_client(&message);
                self.observe(&step, if failed { Status::Failed } else { Status::Completed });
                return;
            }
        }
        self.send_client(&message);
    }

    fn cache(&mut self, message: &Value) {
        let Some(tools) = message.pointer("/result/tools").and_then(Value::as_array) else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            match tool
                .get("annotations")
                .cloned()
                .map(serde_json::from_value::<ToolAnnotations>)
            {
                Some(Ok(a)) => {
                    self.annotations.insert(name.to_string(), a);
                }
                // Unreadable annotations say nothing: the tool is judged as if it had none.
                _ => {
                    self.annotations.remove(name);
                }
            }
        }
    }

    /// Drops from a `tools/list` answer the tools the mode refuses whatever their arguments.
    fn filter(&mut self, message: &mut Value) {
        let trust = self.options.trust_annotations;
        let server = self.options.server.clone();
        let (mode, hidden): (Option<String>, Vec<String>) = match self.governor.judging() {
            Ok(judging) => {
                self.bundle_timeout = timeout_setting(judging);
                let known_as = judging.known_as(&self.options.command);
                let names: Vec<String> = message
                    .pointer("/result/tools")
                    .and_then(Value::as_array)
                    .map(|tools| {
                        tools
                            .iter()
                            .filter_map(|t| t.get("name").and_then(Value::as_str))
                            .filter(|name| judging.hides(&server, name, self.annotations.get(*name), trust, &known_as))
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                (Some(judging.mode.clone()), names)
            }
            // Listing is advice: when it cannot be judged, the tools are listed and every call is
            // refused as unjudgeable.
            Err(_) => (None, Vec::new()),
        };
        self.listed_under = mode;
        if let Some(tools) = message.pointer_mut("/result/tools").and_then(Value::as_array_mut) {
            tools.retain(|t| {
                t.get("name")
                    .and_then(Value::as_str)
                    .is_none_or(|n| !hidden.iter().any(|h| h == n))
            });
        }
    }

    /// Between frames: requests past their deadline are answered and cancelled, and a mode that
    /// changed since the client listed its tools is told to it.
    fn tick(&mut self) {
        self.expire(Instant::now());
        let every = Duration::from_millis(self.options.watch_ms);
        if self.options.watch_ms > 0 && self.watched.elapsed() >= every {
            self.watched = Instant::now();
            if let Ok(mode) = self.governor.mode() {
                self.mode_seen(&mode);
            }
        }
    }

    /// Answers every request past its deadline with an error and cancels it upstream.
    fn expire(&mut self, now: Instant) {
        let late: Vec<String> = self
            .forwarded
            .iter()
            .filter(|(_, f)| f.deadline <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in late {
            let Some(f) = self.forwarded.remove(&key) else { continue };
            let upstream_id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            let why = format!(
                "sixfold: the upstream server {} did not answer in time (the call timeout, `--call-timeout` or the `{TIMEOUT_SETTING}` setting); the request was cancelled",
                self.upstream.name
            );
            eprintln!("{why}");
            if self.gone.is_none() {
                let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": upstream_id, "reason": "timed out in sixfold's proxy"}});
                self.send_upstream(&cancel);
            }
            self.fail(f.client, f.what, &why);
        }
    }

    fn mode_seen(&mut self, mode: &str) {
        if !self.ready {
            return;
        }
        if let Some(listed) = &self.listed_under {
            if listed != mode {
                self.listed_under = Some(mode.to_string());
                self.send_client(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
            }
        }
    }

    fn observe(&mut self, step: &str, status: Status) {
        let event = Event::Observed {
            id: step.to_string(),
            outcome: Outcome {
                status,
                exit_code: None,
            },
            edits: Vec::new(),
            output: None,
        };
        if let Err(why) = self.governor.record(&[event]) {
            eprintln!("sixfold: {why}");
        }
    }

    /// Judges a `tools/call` (or a `resources/read`) and forwards it, refuses it, or asks.
    fn call(&mut self, mut message: Value, id: Value, resource: bool) {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let field = if resource { "uri" } else { "name" };
        let Some(name) = params.get(field).and_then(Value::as_str).map(str::to_string) else {
            return self.send_client(&frame::error(
                id,
                ErrorCode::INVALID_PARAMS,
                &format!("sixfold: the call has no `params.{field}`"),
            ));
        };
        // A resource is judged by what its URI means, and the server is sent that meaning.
        let plain = if resource { Some(uri::plain(&name)) } else { None };
        if let Some(Ok(Resource::File(path))) = &plain {
            if let Some(p) = message.get_mut("params").and_then(Value::as_object_mut) {
                p.insert("uri".into(), Value::String(uri::file_uri(path)));
            }
        }
        let input = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
        // Each call is its own step, whatever id the client gave it.
        self.steps += 1;
        let step_id = format!("mcp-{}-{}", self.options.server, self.steps);
        let mut lease = self.governor.lease();
        let unread = match &mut lease {
            Ok(Some((so_far, _))) => sixfold_core::call::unread_by(so_far, "the MCP proxy"),
            _ => None,
        };
        let mut lease_events = Vec::new();
        let (judgement, step, note, unmapped) = match (lease, self.governor.judging()) {
            (Err(why), _) => {
                let step = Step {
                    id: step_id.clone(),
                    tool: crate::record_name(&self.options.server, &name),
                    ..Step::default()
                };
                // INVARIANT (fail closed): a lease that cannot be read is not taken as none.
                (Judgement::refuse_unjudgeable("", why), step, None, false)
            }
            (Ok(lease), Ok(judging)) => {
                let known_as = judging.known_as(&self.options.command);
                let call = Call {
                    server: &self.options.server,
                    tool: &name,
                    input: &input,
                    id: step_id.clone(),
                    annotations: if resource { None } else { self.annotations.get(&name) },
                    trust_annotations: self.options.trust_annotations,
                    resource,
                    known_as: &known_as,
                };
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(0);
                let leasing = lease.as_ref().map(|(so_far, set)| sixfold_core::call::Leasing {
                    so_far,
                    set: *set,
                    now,
                    agent: None,
                });
                let judged = judging.judge_leased(&call, leasing);
                lease_events = sixfold_core::call::lease_events(&judged, now, unread.as_deref());
                let unmapped = judging.unmapped(&call);
                self.bundle_timeout = timeout_setting(judging);
                (judged.judgement, judged.step, judged.ignored, unmapped)
            }
            (Ok(_), Err(why)) => {
                let step = Step {
                    id: step_id.clone(),
                    tool: crate::record_name(&self.options.server, &name),
                    ..Step::default()
                };
                (Judgement::refuse_unjudgeable("", why), step, None, false)
            }
        };
        // INVARIANT (fail closed): a URI that cannot be made plain is refused, never judged as
        // its text.
        let judgement = match plain {
            Some(Err(why)) => Judgement::refuse_unjudgeable(&judgement.mode, why),
            _ => judgement,
        };
        if let Some(note) = note {
            eprintln!("sixfold: untrusted project bundle ignored: {note}");
        }
        let mode = judgement.mode.clone();
        self.mode_seen(&mode);
        let hint = approve_hint(&*self.governor, &step, &self.options.server, &name);
        let judged = Event::Judged {
            step: Box::new(step),
            judgement: judgement.clone(),
        };
        let mut events = vec![judged];
        events.extend(lease_events);
        let judgement = match self.governor.record(&events) {
            Ok(()) => judgement,
            // INVARIANT (fail closed): a call that cannot be put on the record is refused.
            Err(why) => Judgement::refuse_unjudgeable(&mode, why),
        };
        let unmapped = if unmapped {
            format!(
                "no effect map for `{}/{name}`: judged as reading and writing anywhere; ",
                self.options.server
            )
        } else {
            String::new()
        };
        match judgement.decision {
            Decision::Allow => self.forward(
                message,
                id,
                Pending::Call {
                    step: step_id,
                    resource,
                },
            ),
            Decision::Refuse => {
                let text = format!("sixfold refused this call: {unmapped}{}", judgement.reason);
                let text = if unmapped.is_empty() {
                    text
                } else {
                    format!("{text}; {hint}")
                };
                self.refuse(id, &text, resource);
            }
            Decision::Ask if self.elicitation && self.gone.is_none() => {
                let ask = self.own_id("ask");
                let text = format!(
                    "sixfold: the agent calls `{name}` on the MCP server `{}`, which needs your approval: {unmapped}{}. Approve this one call?",
                    self.options.server, judgement.reason
                );
                let request = json!({
                    "jsonrpc": "2.0", "id": ask, "method": "elicitation/create",
                    "params": {
                        "message": text,
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"approve": {"type": "boolean", "title": "Approve this call"}},
                            "required": ["approve"],
                        },
                    },
                });
                self.held.insert(
                    frame::key(&ask),
                    Held {
                        frame: message,
                        id,
                        step: step_id,
                        hint,
                        reason: format!("{unmapped}{}", judgement.reason),
                    },
                );
                self.send_client(&request);
            }
            Decision::Ask => {
                let text = format!(
                    "sixfold: this call needs a person's approval ({unmapped}{}), and none can be asked here; to approve it, {hint}",
                    judgement.reason
                );
                self.observe(&step_id, Status::Refused);
                self.refuse(id, &text, resource);
            }
        }
    }

    fn refuse(&mut self, id: Value, text: &str, resource: bool) {
        if resource {
            self.send_client(&frame::error(id, ErrorCode::INVALID_REQUEST, text));
        } else {
            self.send_client(&frame::tool_error(id, text));
        }
    }

    /// The person's answer to an ask. Only an explicit `accept` with `approve: true` is a yes:
    /// a headless client's automatic `cancel` or `decline` never is.
    fn answered(&mut self, held: Held, answer: &Value) {
        let action = answer.pointer("/result/action").and_then(Value::as_str);
        let approved = answer.pointer("/result/content/approve").and_then(Value::as_bool);
        let resource = held.frame.get("method").and_then(Value::as_str) == Some("resources/read");
        // INVARIANT (fail closed): anything but an explicit approval refuses the held call.
        if action == Some("accept") && approved == Some(true) {
            let what = Pending::Call {
                step: held.step,
                resource,
            };
            return self.forward(held.frame, held.id, what);
        }
        let said = action.unwrap_or("no answer");
        let text = format!(
            "sixfold: this call needs a person's approval ({}), and the answer was `{said}`, not a yes; to approve it, {}",
            held.reason, held.hint
        );
        self.observe(&held.step, Status::Refused);
        self.refuse(held.id, &text, resource);
    }
}
