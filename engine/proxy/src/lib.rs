//! The MCP proxy layer: an agent's MCP server runs behind `sixfold mcp-proxy`, which speaks MCP
//! on stdio to the agent and to the server, and judges every `tools/call` and `resources/read` by
//! its effects before it is forwarded.
//!
//! The proxy forwards frames rather than terminating the protocol with rmcp's service handlers:
//! what is known to have no effect (listing, prompts, either protocol generation's handshake)
//! passes through, what it judges it reads with rmcp's model types, and any other method is
//! refused. Nothing that could act reaches the server unjudged.
//!
//! It holds no policy and reads no project state itself: a [`Governor`] (the CLI's, over the hook
//! layer's state file, trust store and event log) says what a call is judged under and keeps the
//! record.

mod effects;
mod frame;
mod http;
mod session;
mod upstream;

pub use effects::{
    from_annotations, has_map, known_as, record_name, trusts, Call, Judging, KNOWN_AS_SETTING, TRUST_SETTING,
};
pub use frame::{read_line, Line, MAX_FRAME_BYTES};
pub use session::run;

use sixfold_core::trace::Event;
use std::time::Duration;

/// The policy setting (in any policy's `[settings]`) bounding how long a forwarded request waits
/// for the server, in seconds: `mcp_call_timeout_secs = 120` (the smallest set wins).
pub const TIMEOUT_SETTING: &str = "mcp_call_timeout_secs";

/// How long a forwarded request waits for the server when neither `--call-timeout` nor the
/// bundle says.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// What the proxy needs from outside its layer: what to judge under, and the record.
pub trait Governor: Send {
    /// What a call is judged under now: the project's bundle and active mode, read afresh
    /// (cached while nothing changed). An error refuses the call.
    fn judging(&mut self) -> Result<&Judging, String>;
    /// The active mode, read cheaply (between calls, to tell the client its tools changed).
    fn mode(&mut self) -> Result<String, String>;
    /// Appends events to the session's record. An error refuses the call it records.
    fn record(&mut self, events: &[Event]) -> Result<(), String>;
    /// The session's record folded so far and the lease set for it (`sixfold lease set`), to
    /// check and charge the lease with; `None`: this proxy charges no lease. An error refuses
    /// the call.
    fn lease(&mut self) -> Result<Option<(sixfold_core::trace::SoFar, sixfold_core::lease::Lease)>, String> {
        Ok(None)
    }
    /// The command that approves an act, for a refusal's reason.
    fn approve_hint(&self, act: &str) -> String {
        format!("sixfold rules add --allow '{act}'")
    }
}

/// How the proxy runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The server's name: in tool names on the record and in errors.
    pub server: String,
    /// The upstream command and its arguments.
    pub command: Vec<String>,
    /// A streamable-HTTP server's URL (`http://` only), used instead of a command.
    pub url: Option<String>,
    /// Trust the server's tool annotations for this run.
    pub trust_annotations: bool,
    /// How often the mode is looked at between calls, in milliseconds (0: never).
    pub watch_ms: u64,
    /// `--call-timeout`: how long a forwarded request waits for the server (over the bundle's
    /// setting).
    pub call_timeout: Option<Duration>,
}

/// What arrives on the session's one channel.
#[derive(Debug)]
pub(crate) enum Input {
    /// A line from the agent.
    Client(Line),
    /// A line from the server.
    Upstream(Line),
    /// Time to look at the mode.
    Tick,
}
