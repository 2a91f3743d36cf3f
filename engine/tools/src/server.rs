//! The MCP servers on stdio (`rmcp`): the working tools, and, served alone by a second process,
//! the approval tool an agent CLI asks before it runs a tool. Both speak the `initialize`
//! generations the agent CLIs use (2025-06-18, 2025-11-25); a client that first tries
//! `server/discover` is told those versions and falls back to `initialize`.
//!
//! Each call runs on a blocking thread: a parked ask waits there without holding up the rest.

use crate::call::{Governed, Reply};
use crate::catalog::{self, Offered};
use crate::{Config, Governor};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use sixfold_core::lines::{read_line, Line};
use std::borrow::Cow;
use std::io::Write;
use std::sync::Arc;
use tokio::signal::unix::{signal, SignalKind};

/// The largest frame read from the client: a `write_file` of the largest file the tools write
/// ([`crate::files::MAX_FILE_BYTES`]), every byte escaped, fits.
const MAX_FRAME_BYTES: usize = 6 * 16 * 1024 * 1024 + 64 * 1024;

/// The tool a request too large to read is turned into, under its own id, so it is answered.
const TOO_LARGE: &str = "sixfold/request-too-large";

/// Which tools a server offers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Tools,
    Approvals,
}

#[derive(Clone)]
struct Server {
    governed: Arc<Governed>,
    role: Role,
    /// The name the governed tool server has in the agent's MCP config (for the approval tool).
    governed_server: Arc<str>,
}

fn tool(offered: Offered) -> Tool {
    let schema = match offered.schema {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Tool::new(offered.name, offered.description, Arc::new(schema))
}

fn result(reply: Reply) -> CallToolResponse {
    let content = vec![ContentBlock::text(reply.text)];
    if reply.is_error {
        CallToolResult::error(content).into()
    } else {
        CallToolResult::success(content).into()
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("sixfold", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(match self.role {
            Role::Tools => "sixfold's governed tools: every call is judged under the active mode before it runs; a refusal says why. A call that asks waits for a person's answer.".into(),
            Role::Approvals => "sixfold's answers to the agent CLI's permission prompts.".into(),
        });
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = match self.role {
            Role::Tools => catalog::tools().into_iter().map(tool).collect(),
            Role::Approvals => vec![tool(catalog::approval())],
        };
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let args = Value::Object(request.arguments.unwrap_or_default());
        let governed = Arc::clone(&self.governed);
        let role = self.role;
        let server = Arc::clone(&self.governed_server);
        let reply = tokio::task::spawn_blocking(move || match role {
            _ if name == TOO_LARGE => Reply {
                text: format!(
                    "sixfold refused this call: the request was larger than {} MiB and was not read",
                    MAX_FRAME_BYTES >> 20
                ),
                is_error: true,
            },
            Role::Tools => governed.call(&name, &args),
            Role::Approvals if name == catalog::APPROVE => governed.approve(&server, &args),
            Role::Approvals => Reply {
                text: format!("there is no tool `{name}` here"),
                is_error: true,
            },
        })
        .await
        // INVARIANT (fail closed): a call whose thread failed did not run to its end: an error.
        .unwrap_or_else(|e| Reply {
            text: format!("sixfold refused this call: it failed inside sixfold ({e})"),
            is_error: true,
        });
        Ok(result(reply))
    }
}

fn serve(server: Server) -> Result<(), String> {
    run(server)
}

/// Puts a reader in front of the transport: the client's stdin is read here, a frame at a time to
/// [`MAX_FRAME_BYTES`], and handed on through a pipe that becomes the process's stdin. A request
/// over the bound (skipped, never held) is handed on as a call of [`TOO_LARGE`] under its own id,
/// so it gets an error rather than being dropped unanswered; anything else over it (no id) is
/// noted on stderr.
fn read_ahead() -> Result<(), String> {
    let client = nix::unistd::dup(std::io::stdin()).map_err(|e| format!("cannot read stdin: {e}"))?;
    let (pipe_in, mut pipe_out) = std::io::pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
    nix::unistd::dup2_stdin(&pipe_in).map_err(|e| format!("cannot replace stdin: {e}"))?;
    drop(pipe_in);
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(std::fs::File::from(client));
        loop {
            let mut line = match read_line(&mut reader, MAX_FRAME_BYTES) {
                Line::End => return,
                Line::Frame(frame) => frame,
                Line::TooLarge(Some(id)) => {
                    let call = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": TOO_LARGE, "arguments": {}}});
                    call.to_string().into_bytes()
                }
                Line::TooLarge(None) => {
                    eprintln!(
                        "sixfold: a frame larger than {} MiB, without an id, was dropped",
                        MAX_FRAME_BYTES >> 20
                    );
                    continue;
                }
            };
            line.push(b'\n');
            if pipe_out.write_all(&line).is_err() {
                return;
            }
        }
    });
    Ok(())
}

fn run(server: Server) -> Result<(), String> {
    read_ahead()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the server's runtime: {e}"))?;
    let served = runtime.block_on(async move {
        // An agent CLI ends its servers with SIGTERM (or SIGINT) as often as by closing stdin:
        // either is the end of the session.
        let mut term = signal(SignalKind::terminate()).map_err(|e| format!("cannot watch for SIGTERM: {e}"))?;
        let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("cannot watch for SIGINT: {e}"))?;
        let governed = Arc::clone(&server.governed);
        let role = server.role;
        let (stdin, stdout) = rmcp::transport::stdio();
        // `read_ahead` has bounded every frame already: the transport's own bound never drops one.
        let transport =
            AsyncRwTransport::<RoleServer, _, _>::new(stdin, stdout).with_max_line_length(MAX_FRAME_BYTES + 1);
        let running = server
            .serve(transport)
            .await
            .map_err(|e| format!("the MCP session did not start: {e}"))?;
        let done = tokio::select! {
            done = running.waiting() => done.map(|_| ()).map_err(|e| format!("the MCP session failed: {e}")),
            _ = term.recv() => Ok(()),
            _ = int.recv() => Ok(()),
        };
        // At once: a CLI that signalled its server may not wait long before it kills it.
        if role == Role::Tools {
            governed.end();
        }
        done
    });
    // A call still parked (waiting for a person) is not waited for: the session is over, and its
    // ask expires on its own.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    served
}

/// Serves the working tools on stdio until the client closes it.
pub fn serve_tools(config: Config, governor: Box<dyn Governor>) -> Result<(), String> {
    serve(Server {
        governed: Arc::new(Governed::new(config, governor)),
        role: Role::Tools,
        governed_server: Arc::from(""),
    })
}

/// Serves the approval tool alone on stdio: it answers the permission prompts for the tools of
/// the MCP server named `governed_server` in the agent's config.
pub fn serve_approvals(config: Config, governor: Box<dyn Governor>, governed_server: &str) -> Result<(), String> {
    serve(Server {
        governed: Arc::new(Governed::new(config, governor)),
        role: Role::Approvals,
        governed_server: Arc::from(governed_server),
    })
}
