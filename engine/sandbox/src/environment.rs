//! What a mode's `environment` confines, as the sandbox receives it: the writable roots, the
//! temp dir, the protected paths and secrets as written, the home directory `~` means, and
//! whether the network is cut.
//!
//! This is plain data. Next it will be compiled from the bundle; today a caller builds it.

use std::path::PathBuf;

/// A mode's environment: what the kernel is asked to enforce around one command.
///
/// Everything outside [`roots`](Environment::roots) and [`tmp`](Environment::tmp) is read-only.
/// Inside them, [`protected`](Environment::protected) paths stay read-only (and cannot be
/// created when missing), and [`secrets`](Environment::secrets) are hidden everywhere.
///
/// Paths as written (in `protected` and `secrets`) take four forms:
///
/// - `~/p`: `p` under [`home`](Environment::home);
/// - `/p`: an absolute path;
/// - `p`: `p` under each writable root (e.g. `.git/config`, `.mcp.json`);
/// - `**/p`: `p` at any depth under each writable root (secrets only, e.g. `**/.env*`).
///
/// The last component of a secret may hold `*`, `?` or `[…]` (e.g. `.env*`); other components
/// are literal. A protected path is always literal: a wildcard could name paths that do not
/// exist yet, and their creation cannot be denied.
///
/// ```
/// use sixfold_sandbox::{Environment, Network};
///
/// let environment = Environment {
///     roots: vec!["/work/repo".into()],
///     tmp: Some("/tmp".into()),
///     protected: vec![".git/hooks".into(), ".git/config".into(), ".mcp.json".into()],
///     secrets: vec!["~/.ssh".into(), "~/.aws".into(), "**/.env*".into()],
///     network: Network::Cut,
///     home: "/home/me".into(),
/// };
/// assert!(environment.network.is_cut());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Environment {
    /// The writable roots: absolute directories the command may change (the workspace roots).
    pub roots: Vec<PathBuf>,
    /// The system temp dir when it is writable (`$TMPDIR`, else `/tmp`); `None` leaves it
    /// read-only like the rest of the filesystem.
    pub tmp: Option<PathBuf>,
    /// Paths that stay read-only inside the writable roots, existing or not (the protected
    /// paths: `.git/hooks`, `.git/config`, `.sixfold`, `.claude`, `.codex`, `.mcp.json`).
    pub protected: Vec<String>,
    /// Paths that cannot be read at all (the secrets: `~/.ssh`, `~/.aws`, `**/.env*`).
    pub secrets: Vec<String>,
    /// Whether the command may reach the network.
    pub network: Network,
    /// The home directory `~` stands for: the `$HOME` sixfold runs with.
    pub home: PathBuf,
}

/// Whether a confined command may reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// No network at all: an empty network namespace (not even the host's loopback), no new
    /// sockets but Unix ones, no TCP where Landlock can say so.
    #[default]
    Cut,
    /// The host's network, as it is.
    Open,
}

impl Network {
    /// Whether the network is cut.
    pub fn is_cut(self) -> bool {
        self == Network::Cut
    }
}
