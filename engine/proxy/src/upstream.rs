//! The upstream MCP server: a child process spoken to over its stdin and stdout, or a
//! streamable-HTTP server (`http.rs`). Its frames arrive on the proxy's one channel, so the
//! session handles both sides in one place.

use crate::frame::{read_line, Line, MAX_FRAME_BYTES};
use crate::http::HttpUpstream;
use crate::Input;
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

#[derive(Debug)]
enum Transport {
    Child { child: Child, stdin: Option<ChildStdin> },
    Http(HttpUpstream),
}

/// A running upstream server.
#[derive(Debug)]
pub(crate) struct Upstream {
    transport: Transport,
    /// How it is named in errors: the server name and its command or URL.
    pub(crate) name: String,
}

impl Upstream {
    /// Starts `command` with its stdout read into `inputs`; its stderr is the proxy's.
    pub(crate) fn spawn(command: &[String], name: String, inputs: Sender<Input>) -> Result<Upstream, String> {
        let (program, args) = command
            .split_first()
            .ok_or("no upstream command was given (put it after `--`)")?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the upstream server `{program}`: {e}"))?;
        let stdout = child.stdout.take().ok_or("the upstream server has no stdout")?;
        let stdin = child.stdin.take();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let line = read_line(&mut reader, MAX_FRAME_BYTES);
                let end = line == Line::End;
                if inputs.send(Input::Upstream(line)).is_err() || end {
                    return;
                }
            }
        });
        Ok(Upstream {
            transport: Transport::Child { child, stdin },
            name,
        })
    }

    /// A streamable-HTTP server at `url`.
    pub(crate) fn http(url: &str, name: String, inputs: Sender<Input>) -> Result<Upstream, String> {
        Ok(Upstream {
            transport: Transport::Http(HttpUpstream::new(url, inputs)?),
            name,
        })
    }

    /// Sends one frame, given as its line (ending in a newline): one write to a child's stdin;
    /// false when the server is gone.
    pub(crate) fn send(&mut self, line: &[u8]) -> bool {
        match &mut self.transport {
            Transport::Http(http) => http.send(line.strip_suffix(b"\n").unwrap_or(line)),
            Transport::Child { stdin, .. } => {
                let Some(pipe) = stdin.as_mut() else { return false };
                let written = pipe.write_all(line).and_then(|()| pipe.flush());
                if written.is_err() {
                    *stdin = None;
                }
                written.is_ok()
            }
        }
    }

    /// How it ended, where it has. A child that closed its output is given a moment to exit,
    /// so its exit status is what is reported, not the order in which the two were noticed.
    pub(crate) fn status(&mut self) -> String {
        match &mut self.transport {
            Transport::Child { child, .. } => {
                let deadline = Instant::now() + Duration::from_secs(2);
                loop {
                    match child.try_wait() {
                        Ok(Some(status)) => return status.to_string(),
                        Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                        _ => return "closed its output".to_string(),
                    }
                }
            }
            Transport::Http(http) if !http.reachable() => "it cannot be reached".to_string(),
            Transport::Http(_) => "its connection ended".to_string(),
        }
    }

    /// Closes a child's stdin, gives it a moment to exit, then kills it.
    pub(crate) fn stop(&mut self) {
        let Transport::Child { child, stdin } = &mut self.transport else {
            return;
        };
        *stdin = None;
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
