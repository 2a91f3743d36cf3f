//! What a mode's `environment` confines, as the sandbox receives it: the writable roots, the
//! temp dir, the protected paths and secrets as written, the home directory `~` means, and
//! whether the network is cut.
//!
//! This is plain data: [`Environment::from_spec`] builds it from what the bundle says (the
//! core's [`EnvironmentSpec`]) and the facts of one run (the roots, the temp dir, the home).

use serde::{Deserialize, Serialize};
use sixfold_core::environment::EnvironmentSpec;
use std::path::PathBuf;

/// A mode's environment: what the kernel is asked to enforce around one command.
///
/// Everything outside [`roots`](Environment::roots) and [`tmp`](Environment::tmp) is read-only.
/// Inside them, [`protected`](Environment::protected) paths stay read-only (and cannot be
/// created when missing), and [`secrets`](Environment::secrets) are hidden everywhere.
///
/// Paths as written (in `protected` and `secrets`) take five forms:
///
/// - `~/p`: `p` under [`home`](Environment::home);
/// - `/p`: an absolute path;
/// - `p`: `p` under each workspace root (e.g. `.git/config`, `.mcp.json`);
/// - `**/p`: `p` at any depth under each workspace root (e.g. `**/.env*`, `**/.git/config`);
/// - `$NAME/p`: `p` under the path the caller's variable `NAME` holds (`$SSH_AUTH_SOCK/..` is
///   the directory of the socket); nothing when it is unset or not absolute.
///
/// A protected path ending in `/**` is kept read-only with everything under it; without, it is
/// the entry itself: a file is read-only, a directory is kept in place (it cannot be renamed,
/// removed or replaced) while what is under it stays writable. The directories between a root
/// and a protected path are kept in place too, so nothing can be moved out from above it.
///
/// The last component of a secret may hold `*`, `?` or `[…]` (e.g. `.env*`); other components
/// are literal. A wildcard in a protected path (`.git/modules/*/config`) names the matches
/// that exist when the command starts; so does `**/p`. A literal protected path that does not
/// exist yet is kept from being created by a placeholder.
///
/// ```
/// use sixfold_sandbox::{Environment, Network};
///
/// let environment = Environment {
///     roots: vec!["/work/repo".into()],
///     read_only_roots: Vec::new(),
///     tmp: Some("/tmp".into()),
///     protected: vec![".git/hooks".into(), ".git/config".into(), ".mcp.json".into()],
///     secrets: vec!["~/.ssh".into(), "~/.aws".into(), "**/.env*".into()],
///     network: Network::Cut,
///     home: "/home/me".into(),
///     ..Environment::default()
/// };
/// assert!(environment.network.is_cut());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Environment {
    /// The writable roots: absolute directories the command may change (the workspace roots).
    pub roots: Vec<PathBuf>,
    /// Workspace roots that stay read-only (an environment whose roots are not writable): like
    /// everything outside `roots` they cannot be changed, and the secrets written relative to a
    /// root (`p`, `**/p`) are looked for and hidden in them too.
    pub read_only_roots: Vec<PathBuf>,
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
    /// Tool caches outside the roots (`~/.npm`): read as they are, written to a per-project
    /// layer over them under sixfold's state directory, so the host's cache never changes.
    pub caches: Vec<String>,
    /// Which of the caller's environment variables the command gets.
    pub variables: Variables,
    /// What a missing protected file holds while it stands in (by default it is empty): the
    /// path as written (as in `protected`) and the text.
    pub placeholders: Vec<(String, String)>,
}

/// The caller's environment variables a confined command gets: an allow-list.
///
/// A variable passes when `pass` names it exactly, or when it matches a pattern of `pass` (a
/// name with `*`) and no pattern of `never` (ignoring case). Nothing else passes.
///
/// ```
/// use sixfold_sandbox::Variables;
///
/// let variables = Variables {
///     pass: vec!["PATH".into(), "CARGO_*".into(), "GITHUB_TOKEN_FOR_TESTS".into()],
///     never: vec!["*TOKEN*".into()],
/// };
/// assert!(variables.passes("PATH"));
/// assert!(variables.passes("CARGO_HOME"));
/// assert!(!variables.passes("CARGO_REGISTRY_TOKEN"));
/// assert!(variables.passes("GITHUB_TOKEN_FOR_TESTS"));
/// assert!(!variables.passes("ANTHROPIC_API_KEY"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Variables {
    /// Names and patterns that pass.
    pub pass: Vec<String>,
    /// Patterns that never pass through a pattern.
    pub never: Vec<String>,
}

impl Variables {
    /// Whether the variable `name` passes.
    pub fn passes(&self, name: &str) -> bool {
        if self.pass.iter().any(|p| !p.contains('*') && p == name) {
            return true;
        }
        let upper = name.to_ascii_uppercase();
        self.pass.iter().any(|p| p.contains('*') && wildcard(p, name))
            && !self.never.iter().any(|n| wildcard(&n.to_ascii_uppercase(), &upper))
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn wildcard(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else { return false };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*` at all: the whole name.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = rest.get(at + part.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether a confined command may reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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

impl Environment {
    /// What `spec` confines around a run in `roots` (the workspace roots), with `tmp` the
    /// system temp dir and `home` the `$HOME` sixfold runs with; `None` when `spec` confines
    /// nothing (the command then runs as it is).
    ///
    /// ```
    /// use sixfold_core::environment::EnvironmentSpec;
    /// use sixfold_sandbox::{Environment, Network};
    ///
    /// let spec = EnvironmentSpec {
    ///     confined: true,
    ///     roots_writable: false,
    ///     tmp_writable: false,
    ///     hidden: vec!["~/.ssh".into()],
    ///     network_cut: true,
    ///     ..EnvironmentSpec::unconfined("read-only")
    /// };
    /// let environment =
    ///     Environment::from_spec(&spec, &["/w".into()], "/tmp".into(), "/home/me".into()).unwrap();
    /// assert!(environment.roots.is_empty());
    /// assert_eq!(environment.read_only_roots, vec![std::path::PathBuf::from("/w")]);
    /// assert_eq!(environment.tmp, None);
    /// assert_eq!(environment.network, Network::Cut);
    ///
    /// assert!(Environment::from_spec(&EnvironmentSpec::unconfined("full"), &[], "/tmp".into(), "/".into()).is_none());
    /// ```
    pub fn from_spec(spec: &EnvironmentSpec, roots: &[PathBuf], tmp: PathBuf, home: PathBuf) -> Option<Environment> {
        if !spec.confined {
            return None;
        }
        let (roots, read_only_roots) = if spec.roots_writable {
            (roots.to_vec(), Vec::new())
        } else {
            (Vec::new(), roots.to_vec())
        };
        Some(Environment {
            roots,
            read_only_roots,
            tmp: spec.tmp_writable.then_some(tmp),
            protected: spec.read_only.clone(),
            secrets: spec.hidden.clone(),
            network: if spec.network_cut { Network::Cut } else { Network::Open },
            home,
            caches: spec.caches.clone(),
            variables: Variables {
                pass: spec.pass_variables.clone(),
                never: spec.never_variables.clone(),
            },
            placeholders: spec.placeholders.clone(),
        })
    }
}
