//! A streamable-HTTP upstream (`--upstream-url http://HOST:PORT/PATH`), spoken with the standard
//! library: each frame is one `POST`, answered with JSON (one message), an event stream (messages
//! until the answer) or `202 Accepted`. `Mcp-Session-Id` and `MCP-Protocol-Version` are kept from
//! the handshake and sent with every later frame. Plain `http` only: no TLS is built in, so a
//! remote server is reached through a local endpoint.
//!
//! Each `POST` runs on its own thread so a slow answer never holds up the session; the messages
//! it brings arrive on the session's one channel, as a child server's lines do.

use crate::frame::{read_line, Line, MAX_FRAME_BYTES};
use crate::Input;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Response headers larger than this are refused.
const MAX_HEADER_BYTES: usize = 64 * 1024;

/// Where the server is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Endpoint {
    host: String,
    port: u16,
    path: String,
}

impl Endpoint {
    /// Reads `http://HOST[:PORT][/PATH]`.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, String> {
        if url.starts_with("https://") {
            return Err(format!(
                "`{url}`: https is not built into sixfold's proxy; reach the server through a local http endpoint"
            ));
        }
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("`{url}` is not an http:// URL"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (rest.get(..i).unwrap_or_default(), rest.get(i..).unwrap_or("/")),
            None => (rest, "/"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => {
                (h, p.parse().map_err(|_| format!("`{url}` has a bad port"))?)
            }
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("`{url}` names no host"));
        }
        Ok(Endpoint {
            host: host.trim_start_matches('[').trim_end_matches(']').to_string(),
            port,
            path: path.to_string(),
        })
    }
}

/// The session's headers, learnt from the handshake.
#[derive(Debug, Default)]
struct Headers {
    session: Option<String>,
    protocol: Option<String>,
}

/// A streamable-HTTP server.
#[derive(Debug)]
pub(crate) struct HttpUpstream {
    endpoint: Endpoint,
    headers: Arc<Mutex<Headers>>,
    inputs: Sender<Input>,
    /// Cleared when the server could not be reached.
    alive: Arc<AtomicBool>,
}

impl HttpUpstream {
    pub(crate) fn new(url: &str, inputs: Sender<Input>) -> Result<HttpUpstream, String> {
        Ok(HttpUpstream {
            endpoint: Endpoint::parse(url)?,
            headers: Arc::default(),
            inputs,
            alive: Arc::new(AtomicBool::new(true)),
        })
    }

    /// Posts one frame; its answer arrives on the channel. False once the server is unreachable.
    pub(crate) fn send(&mut self, frame: &[u8]) -> bool {
        if !self.alive.load(Ordering::SeqCst) {
            return false;
        }
        let endpoint = self.endpoint.clone();
        let headers = Arc::clone(&self.headers);
        let inputs = self.inputs.clone();
        let alive = Arc::clone(&self.alive);
        let frame = frame.to_vec();
        std::thread::spawn(move || {
            if let Err(why) = post(&endpoint, &headers, &frame, &inputs) {
                match why {
                    Failure::Unreachable(why) => {
                        eprintln!("sixfold: {why}");
                        alive.store(false, Ordering::SeqCst);
                        let _ = inputs.send(Input::Upstream(Line::End));
                    }
                    // The server answered, but not with MCP: the request gets an error.
                    Failure::Answer(why) => {
                        if let Some(id) = request_id(&frame) {
                            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": format!("sixfold: {why}")}});
                            let _ = inputs.send(Input::Upstream(Line::Frame(error.to_string().into_bytes())));
                        }
                    }
                }
            }
        });
        true
    }

    pub(crate) fn reachable(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }
}

enum Failure {
    Unreachable(String),
    Answer(String),
}

fn request_id(frame: &[u8]) -> Option<Value> {
    let message: Value = serde_json::from_slice(frame).ok()?;
    message.get("method")?;
    message.get("id").cloned()
}

fn post(endpoint: &Endpoint, headers: &Mutex<Headers>, frame: &[u8], inputs: &Sender<Input>) -> Result<(), Failure> {
    let address = (endpoint.host.as_str(), endpoint.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| Failure::Unreachable(format!("cannot resolve `{}`", endpoint.host)))?;
    let unreachable = |e: std::io::Error| {
        Failure::Unreachable(format!(
            "the upstream MCP server at http://{}:{}{} cannot be reached: {e}",
            endpoint.host, endpoint.port, endpoint.path
        ))
    };
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(10)).map_err(unreachable)?;
    let mut request = format!(
        "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        endpoint.path,
        endpoint.host,
        endpoint.port,
        frame.len()
    );
    if let Ok(h) = headers.lock() {
        if let Some(s) = &h.session {
            request.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
        }
        if let Some(p) = &h.protocol {
            request.push_str(&format!("MCP-Protocol-Version: {p}\r\n"));
        }
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .and_then(|()| stream.write_all(frame))
        .and_then(|()| stream.flush())
        .map_err(unreachable)?;
    let mut reader = BufReader::new(stream);
    let head = read_head(&mut reader).map_err(Failure::Answer)?;
    if let Some(session) = head.header("mcp-session-id") {
        if let Ok(mut h) = headers.lock() {
            h.session = Some(session.to_string());
        }
    }
    if head.status == 202 || head.status == 204 {
        return Ok(());
    }
    if !(200..300).contains(&head.status) {
        return Err(Failure::Answer(format!(
            "the upstream MCP server answered HTTP {}",
            head.status
        )));
    }
    let body: Box<dyn Read> = if head
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        Box::new(Chunked::new(reader))
    } else if let Some(len) = head.header("content-length").and_then(|l| l.parse::<u64>().ok()) {
        Box::new(reader.take(len))
    } else {
        Box::new(reader)
    };
    let mut body = BufReader::new(body);
    let asked = request_id(frame);
    let mut answered = false;
    let mut deliver = |bytes: Vec<u8>| {
        if let Ok(message) = serde_json::from_slice::<Value>(&bytes) {
            if let Some(version) = message.pointer("/result/protocolVersion").and_then(Value::as_str) {
                if let Ok(mut h) = headers.lock() {
                    h.protocol = Some(version.to_string());
                }
            }
            answered |= message.get("method").is_none() && asked.is_some() && message.get("id") == asked.as_ref();
        }
        inputs.send(Input::Upstream(Line::Frame(bytes))).is_ok()
    };
    let events = head
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/event-stream"));
    if events {
        read_events(&mut body, &mut deliver);
        // A stream that ended without the answer (an event over the bound is dropped): the
        // request is answered now rather than at its timeout.
        if let Some(id) = asked.filter(|_| !answered) {
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603,
                "message": format!("sixfold: the upstream's event stream ended without the answer (an event over {MAX_FRAME_BYTES} bytes is dropped)")}});
            let _ = inputs.send(Input::Upstream(Line::Frame(error.to_string().into_bytes())));
        }
    } else {
        let mut bytes = Vec::new();
        let _ = (&mut body).take(MAX_FRAME_BYTES as u64 + 1).read_to_end(&mut bytes);
        if bytes.len() > MAX_FRAME_BYTES {
            // One POST carries one request: its answer is the one too large.
            let _ = inputs.send(Input::Upstream(Line::TooLarge(request_id(frame))));
        } else if !bytes.is_empty() {
            deliver(bytes);
        }
    }
    Ok(())
}

/// A response's status and headers.
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_head(reader: &mut impl BufRead) -> Result<Head, String> {
    let mut lines = Vec::new();
    let mut total = 0;
    loop {
        match read_line(reader, MAX_HEADER_BYTES) {
            Line::Frame(line) => {
                total += line.len();
                if total > MAX_HEADER_BYTES {
                    return Err("the upstream's HTTP headers are too large".into());
                }
                let text = String::from_utf8_lossy(&line).trim_end_matches('\r').to_string();
                if text.is_empty() {
                    break;
                }
                lines.push(text);
            }
            Line::TooLarge(_) => return Err("the upstream's HTTP headers are too large".into()),
            Line::End => return Err("the upstream closed the connection without an answer".into()),
        }
    }
    let status = lines
        .first()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("the upstream's answer is not HTTP")?;
    let headers = lines
        .iter()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    Ok(Head { status, headers })
}

/// Server-sent events: each event's `data:` lines joined are one message.
fn read_events(reader: &mut impl BufRead, mut deliver: impl FnMut(Vec<u8>) -> bool) {
    let mut data: Vec<u8> = Vec::new();
    loop {
        match read_line(reader, MAX_FRAME_BYTES) {
            Line::Frame(line) => {
                let line = line.strip_suffix(b"\r").unwrap_or(&line).to_vec();
                if line.is_empty() {
                    if !data.is_empty() && !deliver(std::mem::take(&mut data)) {
                        return;
                    }
                } else if let Some(rest) = line.strip_prefix(b"data:") {
                    if !data.is_empty() {
                        data.push(b'\n');
                    }
                    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
                    if data.len() + rest.len() > MAX_FRAME_BYTES {
                        data.clear();
                        continue;
                    }
                    data.extend_from_slice(rest);
                }
            }
            Line::TooLarge(_) => data.clear(),
            Line::End => {
                if !data.is_empty() {
                    deliver(data);
                }
                return;
            }
        }
    }
}

/// A chunked body read as a plain one.
struct Chunked<R: BufRead> {
    inner: R,
    left: u64,
    done: bool,
}

impl<R: BufRead> Chunked<R> {
    fn new(inner: R) -> Chunked<R> {
        Chunked {
            inner,
            left: 0,
            done: false,
        }
    }
}

impl<R: BufRead> Read for Chunked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        if self.left == 0 {
            let mut size = String::new();
            // A chunk's size line is short; a longer one is not HTTP.
            (&mut self.inner).take(1024).read_line(&mut size)?;
            if size.trim().is_empty() {
                // The CRLF that ends the previous chunk.
                size.clear();
                (&mut self.inner).take(1024).read_line(&mut size)?;
            }
            let hex = size.trim().split(';').next().unwrap_or_default();
            let Ok(n) = u64::from_str_radix(hex, 16) else {
                self.done = true;
                return Ok(0);
            };
            if n == 0 {
                self.done = true;
                return Ok(0);
            }
            self.left = n;
        }
        let want = buf.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let got = self.inner.read(buf.get_mut(..want).unwrap_or_default())?;
        if got == 0 {
            self.done = true;
        }
        self.left -= got as u64;
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let e = Endpoint::parse("http://127.0.0.1:3001/mcp").unwrap();
        assert_eq!((e.host.as_str(), e.port, e.path.as_str()), ("127.0.0.1", 3001, "/mcp"));
        let e = Endpoint::parse("http://localhost").unwrap();
        assert_eq!((e.port, e.path.as_str()), (80, "/"));
        assert!(Endpoint::parse("https://x.invalid/").unwrap_err().contains("https"));
        assert!(Endpoint::parse("ftp://x").is_err());
    }

    #[test]
    fn chunked_event_streams_become_messages() {
        let mut body = Vec::new();
        for piece in ["event: ", "message\ndata: {\"id\":", "1}\n\n"] {
            body.extend_from_slice(format!("{:x}\r\n{piece}\r\n", piece.len()).as_bytes());
        }
        body.extend_from_slice(b"0\r\n\r\n");
        let mut reader = BufReader::new(Chunked::new(&body[..]));
        let mut got = Vec::new();
        read_events(&mut reader, |m| {
            got.push(String::from_utf8(m).unwrap());
            true
        });
        assert_eq!(got, vec!["{\"id\":1}".to_string()]);
    }

    #[test]
    fn heads() {
        let mut r = &b"HTTP/1.1 202 Accepted\r\nMcp-Session-Id: abc\r\n\r\n"[..];
        let h = read_head(&mut r).unwrap();
        assert_eq!(h.status, 202);
        assert_eq!(h.header("mcp-session-id"), Some("abc"));
    }
}
