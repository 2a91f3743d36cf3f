//! One proxied session: frames from the agent and from the server arrive on one channel and are
//! handled in order, so a judgement, its record and the forwarding of the call happen together.
//!
//! `tools/call` and `resources/read` are judged before they are forwarded; `tools/list` answers
//! are filtered by the mode and their annotations cached; the handshake answer (`initialize` or
//! `server/discover`) declares `tools.listChanged`; everything else passes through.

use crate::effects::Call;
use crate::frame::{self, Kind, Line, MAX_FRAME_BYTES};
use crate::upstream::Upstream;
use crate::{Governor, Input, Options};
use rmcp::model::{ErrorCode, ToolAnnotations};
use serde_json::{json, Value};
use sixfold_core::decision::{Decision, Judgement};
use sixfold_core::trace::{Event, Outcome, Status, Step};
use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::sync::mpsc::{channel, Sender};
use std::time::Duration;

/// What a forwarded request was, to handle its answer.
#[derive(Debug)]
enum Pending {
    /// `initialize` or `server/discover`: the answer declares `tools.listChanged`.
    Handshake,
    /// `tools/list`: the answer is filtered and its annotations cached.
    List,
    /// A judged call: its outcome goes on the record.
    Call { step: String },
    /// The proxy's own `tools/list`, to cache annotations before the first call.
    OwnList,
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
    pending: HashMap<String, Pending>,
    held: HashMap<String, Held>,
    annotations: HashMap<String, ToolAnnotations>,
    /// The client declared elicitation.
    elicitation: bool,
    /// The mode the client's tool list was last made under.
    listed_under: Option<String>,
    /// The client finished its handshake.
    ready: bool,
    next: u64,
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
    if options.watch_ms > 0 {
        spawn_ticker(options.watch_ms, send);
    } else {
        drop(send);
    }
    let mut session = Session {
        options,
        governor,
        out: client_out,
        upstream,
        gone: None,
        pending: HashMap::new(),
        held: HashMap::new(),
        annotations: HashMap::new(),
        elicitation: false,
        listed_under: None,
        ready: false,
        next: 0,
    };
    while let Ok(input) = inputs.recv() {
        match input {
            Input::Client(Line::End) => break,
            Input::Client(Line::TooLarge) => session.send_client(&frame::error(
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                &format!("sixfold: a frame larger than {MAX_FRAME_BYTES} bytes is refused"),
            )),
            Input::Client(Line::Frame(bytes)) => session.client_frame(&bytes),
            Input::Upstream(Line::End) => session.upstream_ended(),
            Input::Upstream(Line::TooLarge) => session.upstream_too_large(),
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

fn spawn_ticker(every_ms: u64, send: Sender<Input>) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(every_ms));
        if send.send(Input::Tick).is_err() {
            return;
        }
    });
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

    /// Passes a frame the proxy read but did not change to the client as it came, without
    /// serialising it again.
    fn pass_client(&mut self, frame: &[u8]) {
        let mut line = Vec::with_capacity(frame.len() + 1);
        line.extend_from_slice(frame);
        line.push(b'\n');
        self.write_client(&line);
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

    fn client_request(&mut self, message: Value) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match method.as_str() {
            "tools/call" => return self.call(message, id, false),
            "resources/read" => return self.call(message, id, true),
            "initialize" | "server/discover" => {
                self.elicitation = message.pointer("/params/capabilities/elicitation").is_some();
                self.pending.insert(frame::key(&id), Pending::Handshake);
            }
            "tools/list" => {
                self.pending.insert(frame::key(&id), Pending::List);
            }
            _ => {}
        }
        if let Some(why) = self.gone.clone() {
            self.pending.remove(&frame::key(&id));
            return self.send_client(&frame::error(id, ErrorCode::INTERNAL_ERROR, &why));
        }
        if !self.send_upstream(&message) {
            self.pending.remove(&frame::key(&id));
            let why = self.mark_gone();
            self.send_client(&frame::error(id, ErrorCode::INTERNAL_ERROR, &why));
        }
    }

    fn client_notification(&mut self, message: Value) {
        let initialized = message.get("method").and_then(Value::as_str) == Some("notifications/initialized");
        if self.gone.is_none() && !self.send_upstream(&message) {
            self.mark_gone();
        }
        if initialized {
            self.ready = true;
            self.list_for_cache();
        }
    }

    /// Asks the server for its tools, to cache their annotations (a `tools/call` does not carry
    /// them).
    fn list_for_cache(&mut self) {
        if self.gone.is_some() {
            return;
        }
        let id = self.own_id("list");
        self.pending.insert(frame::key(&id), Pending::OwnList);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}});
        if !self.send_upstream(&message) {
            self.mark_gone();
        }
    }

    fn client_response(&mut self, message: Value) {
        let key = message.get("id").map(frame::key).unwrap_or_default();
        if let Some(held) = self.held.remove(&key) {
            return self.answered(held, &message);
        }
        // An answer to the server's own request (roots, sampling, elicitation): the server's.
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
        let pending: Vec<(String, Pending)> = self.pending.drain().collect();
        for (key, what) in pending {
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            match what {
                Pending::OwnList => {}
                Pending::Call { step } => {
                    self.observe(&step, Status::Failed);
                    self.send_client(&frame::tool_error(id, &why));
                }
                _ => self.send_client(&frame::error(id, ErrorCode::INTERNAL_ERROR, &why)),
            }
        }
    }

    fn upstream_too_large(&mut self) {
        eprintln!(
            "sixfold: the upstream server {} sent a frame larger than {MAX_FRAME_BYTES} bytes; it was dropped",
            self.upstream.name
        );
        let message = frame::error(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            &format!("sixfold: a frame larger than {MAX_FRAME_BYTES} bytes is refused"),
        );
        self.send_upstream(&message);
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
            Kind::Response => self.upstream_response(message, bytes),
            Kind::Notification => {
                if message.get("method").and_then(Value::as_str) == Some("notifications/tools/list_changed") {
                    self.list_for_cache();
                }
                self.pass_client(bytes);
            }
            // The server's own requests (roots, sampling, elicitation) are the client's to answer.
            Kind::Request => {
                // INVARIANT (fail closed): the server cannot use the proxy's own ids, so the
                // client's answer to a request of the server's is never read as the answer to
                // the proxy's ask.
                let own = message
                    .get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| id.starts_with("sixfold-"));
                if own {
                    let id = message.get("id").cloned().unwrap_or(Value::Null);
                    let answer = frame::error(
                        id,
                        ErrorCode::INVALID_REQUEST,
                        "sixfold: ids starting `sixfold-` are the proxy's",
                    );
                    self.send_upstream(&answer);
                } else {
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

    fn upstream_response(&mut self, mut message: Value, bytes: &[u8]) {
        let key = message.get("id").map(frame::key).unwrap_or_default();
        match self.pending.remove(&key) {
            Some(Pending::OwnList) => {
                self.cache(&message);
                return;
            }
            Some(Pending::Handshake) => {
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
            Some(Pending::List) => {
                self.cache(&message);
                self.filter(&mut message);
            }
            Some(Pending::Call { step }) => {
                let failed = message.get("error").is_some()
                    || message.pointer("/result/isError").and_then(Value::as_bool) == Some(true);
                // The answer first: the outcome's record is not on the agent's critical path.
                self.pass_client(bytes);
                self.observe(&step, if failed { Status::Failed } else { Status::Completed });
                return;
            }
            None => return self.pass_client(bytes),
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
                let names: Vec<String> = message
                    .pointer("/result/tools")
                    .and_then(Value::as_array)
                    .map(|tools| {
                        tools
                            .iter()
                            .filter_map(|t| t.get("name").and_then(Value::as_str))
                            .filter(|name| judging.hides(&server, name, self.annotations.get(*name), trust))
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

    /// Between calls: a mode that changed since the client listed its tools is told to it.
    fn tick(&mut self) {
        if let Ok(mode) = self.governor.mode() {
            self.mode_seen(&mode);
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
    fn call(&mut self, message: Value, id: Value, resource: bool) {
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let field = if resource { "uri" } else { "name" };
        let Some(name) = params.get(field).and_then(Value::as_str).map(str::to_string) else {
            return self.send_client(&frame::error(
                id,
                ErrorCode::INVALID_PARAMS,
                &format!("sixfold: the call has no `params.{field}`"),
            ));
        };
        let input = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
        let step_id = match &id {
            Value::String(s) => format!("mcp-{}-{s}", self.options.server),
            other => format!("mcp-{}-{other}", self.options.server),
        };
        let call = Call {
            server: &self.options.server,
            tool: &name,
            input: &input,
            id: step_id.clone(),
            annotations: if resource { None } else { self.annotations.get(&name) },
            trust_annotations: self.options.trust_annotations,
            resource,
        };
        let (judgement, step, note) = match self.governor.judging() {
            Ok(judging) => judging.judge(&call),
            Err(why) => {
                let step = Step {
                    id: step_id.clone(),
                    tool: crate::record_name(&self.options.server, &name),
                    ..Step::default()
                };
                (Judgement::refuse_unjudgeable("", why), step, None)
            }
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
        let judgement = match self.governor.record(&[judged]) {
            Ok(()) => judgement,
            // INVARIANT (fail closed): a call that cannot be put on the record is refused.
            Err(why) => Judgement::refuse_unjudgeable(&mode, why),
        };
        match judgement.decision {
            Decision::Allow => self.forward_call(message, id, step_id, resource),
            Decision::Refuse => {
                let text = format!("sixfold refused this call: {}", judgement.reason);
                self.refuse(id, &text, resource);
            }
            Decision::Ask if self.elicitation && self.gone.is_none() => {
                let ask = self.own_id("ask");
                let text = format!(
                    "sixfold: the agent calls `{name}` on the MCP server `{}`, which needs your approval: {}. Approve this one call?",
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
                        reason: judgement.reason,
                    },
                );
                self.send_client(&request);
            }
            Decision::Ask => {
                let text = format!(
                    "sixfold: this call needs a person's approval ({}), and none can be asked here; to approve it, {hint}",
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

    fn forward_call(&mut self, message: Value, id: Value, step: String, resource: bool) {
        if let Some(why) = self.gone.clone() {
            self.observe(&step, Status::Failed);
            return self.refuse(id, &why, resource);
        }
        self.pending
            .insert(frame::key(&id), Pending::Call { step: step.clone() });
        if !self.send_upstream(&message) {
            self.pending.remove(&frame::key(&id));
            let why = self.mark_gone();
            self.observe(&step, Status::Failed);
            self.refuse(id, &why, resource);
        }
    }

    /// The person's answer to an ask. Only an explicit `accept` with `approve: true` is a yes:
    /// a headless client's automatic `cancel` or `decline` never is.
    fn answered(&mut self, held: Held, answer: &Value) {
        let action = answer.pointer("/result/action").and_then(Value::as_str);
        let approved = answer.pointer("/result/content/approve").and_then(Value::as_bool);
        // INVARIANT (fail closed): anything but an explicit approval refuses the held call.
        if action == Some("accept") && approved == Some(true) {
            let resource = held.frame.get("method").and_then(Value::as_str) == Some("resources/read");
            return self.forward_call(held.frame, held.id, held.step, resource);
        }
        let said = action.unwrap_or("no answer");
        let text = format!(
            "sixfold: this call needs a person's approval ({}), and the answer was `{said}`, not a yes; to approve it, {}",
            held.reason, held.hint
        );
        self.observe(&held.step, Status::Refused);
        let resource = held.frame.get("method").and_then(Value::as_str) == Some("resources/read");
        self.refuse(held.id, &text, resource);
    }
}
