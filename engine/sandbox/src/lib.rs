//! The sandbox layer: a mode's `environment` enforced by the Linux kernel, and proven by a probe
//! before anything relies on it.
//!
//! [`run`] runs one command confined: in its own user, mount, PID, IPC and (when the network is
//! cut) network namespaces, with the whole filesystem read-only except the writable roots, the
//! protected paths read-only again inside them (and not creatable when missing), the secrets
//! masked, no capabilities, `no_new_privs`, a Landlock ruleset as a second wall for writes and
//! a seccomp filter. Stdin, stdout and stderr pass through; so does the exit status; when the
//! command ends, every process it started ends too.
//!
//! [`prove`] builds the same sandbox around a probe that tries what must work and what must
//! not, and returns what it observed as a [`Proof`]. Only what runs inside a proven sandbox is
//! `contained`.
//!
//! This crate holds mechanism only: what an environment confines is the bundle's data (the core's
//! `EnvironmentSpec`, turned into an [`Environment`] by [`Environment::from_spec`]), and it
//! decides nothing about a step. It is not a container runtime: it gives no
//! private copy of anything, and a denied write fails; it never lands somewhere else.
//!
//! Linux only; elsewhere [`run`] and [`prove`] say so.

mod deadline;
mod environment;
mod error;
mod layer_work;
mod layout;
#[cfg(target_os = "linux")]
mod linux;
mod lock_file;
mod proof;
mod repositories;
mod walk;

pub use deadline::{arm_deadline, Deadline};
pub use environment::{Environment, Network, Variables};
pub use error::SandboxError;
pub use proof::{Check, Proof};
pub use repositories::Quarantined;

use std::ffi::OsString;
use std::path::Path;

/// Runs `argv` (program and arguments; the program is looked up on `$PATH`) confined by
/// `environment`, in the directory `cwd`, with this process's environment variables, stdin,
/// stdout and stderr. Returns the command's exit status (128 + the signal when a signal ended
/// it). Blocks until the command and everything it started have ended.
///
/// ```no_run
/// use sixfold_sandbox::{run, Environment, Network};
///
/// let environment = Environment {
///     roots: vec!["/work/repo".into()],
///     read_only_roots: Vec::new(),
///     tmp: Some("/tmp".into()),
///     protected: vec![".git/config".into(), ".mcp.json".into()],
///     secrets: vec!["~/.ssh".into()],
///     network: Network::Cut,
///     home: "/home/me".into(),
///     ..Environment::default()
/// };
/// let status = run(&environment, &["cargo".into(), "test".into()], "/work/repo".as_ref())?;
/// # Ok::<(), sixfold_sandbox::SandboxError>(())
/// ```
///
/// # Errors
///
/// When the environment cannot be enforced here, says what is missing; the command never runs
/// unconfined:
///
/// ```
/// use sixfold_sandbox::{run, Environment};
///
/// let environment = Environment { roots: vec!["relative/path".into()], ..Environment::default() };
/// let error = run(&environment, &["true".into()], "/".as_ref()).unwrap_err();
/// assert!(error.to_string().contains("is not an absolute path"));
/// ```
pub fn run(environment: &Environment, argv: &[OsString], cwd: &Path) -> Result<i32, SandboxError> {
    run_reporting(environment, argv, cwd).map(|outcome| outcome.status)
}

/// How a confined command ended, and what the sandbox did after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The command's exit status (128 + the signal when a signal ended it).
    pub status: i32,
    /// The git repositories the command made below a writable root, renamed aside so the
    /// host's git never runs their config or hooks (a submodule the command added would make
    /// the host's `git status` enter it).
    pub quarantined: Vec<Quarantined>,
    /// Whether every root was searched for them (a tree larger than the walk's bound is not).
    pub searched_all: bool,
}

/// [`run`], and what the sandbox did after the command ended (see [`Outcome`]).
///
/// # Errors
///
/// As [`run`].
pub fn run_reporting(environment: &Environment, argv: &[OsString], cwd: &Path) -> Result<Outcome, SandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::run(environment, argv, cwd)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (environment, argv, cwd);
        Err(SandboxError::Unsupported {
            what: "the sandbox is built from Linux namespaces, Landlock and seccomp; this is not Linux".to_string(),
        })
    }
}

/// How a path was withheld from a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Withheld {
    /// Hidden (a secret, a host socket): it reads as an empty, unreadable entry.
    Hidden,
    /// Read-only (a protected path): writing, removing or renaming it fails.
    ReadOnly,
    /// Kept in place (`.git`, the directories above a protected path): it cannot be renamed
    /// or removed, though what is under it can change.
    KeptInPlace,
}

/// What `environment` withholds inside the directories `within` (the workspace roots), for a
/// message when a command fails on it (`git reset --hard` of a tree that tracks `.env` fails
/// with "device or resource busy" on the mask). Resolved against the filesystem now, sorted
/// by path; empty when the environment cannot be resolved.
///
/// ```
/// use sixfold_sandbox::{withheld, Environment, Withheld};
///
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join(".env"), "K=v").unwrap();
/// let environment = Environment {
///     roots: vec![dir.path().into()],
///     secrets: vec!["**/.env*".into()],
///     ..Environment::default()
/// };
/// let found = withheld(&environment, &[dir.path().into()]);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].1, Withheld::Hidden);
/// ```
pub fn withheld(environment: &Environment, within: &[std::path::PathBuf]) -> Vec<(std::path::PathBuf, Withheld)> {
    // The caches are not what is withheld, and laying one out takes its layer (a work
    // directory set aside, for the next run to remove) when no sandbox will mount it.
    let without_caches = Environment {
        caches: Vec::new(),
        ..environment.clone()
    };
    let Ok(layout) = layout::Layout::resolve(&without_caches) else {
        return Vec::new();
    };
    let within: Vec<std::path::PathBuf> = within
        .iter()
        .filter_map(|d| sixfold_core::scope::resolve_path(Path::new("/"), d))
        .collect();
    let inside = |path: &Path| within.iter().any(|d| path.starts_with(d));
    let mut found: Vec<(std::path::PathBuf, Withheld)> = layout
        .hidden
        .iter()
        .map(|h| (h.path.clone(), Withheld::Hidden))
        .chain(layout.kept.iter().map(|k| {
            let how = if k.read_only {
                Withheld::ReadOnly
            } else {
                Withheld::KeptInPlace
            };
            (k.path.clone(), how)
        }))
        .filter(|(path, _)| inside(path))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// Proves `environment` on this machine: a probe runs inside it and observes that a write inside
/// each root works, a write outside every root is denied, protected paths cannot be written (nor
/// created when missing), secrets cannot be read and, when the network is cut, a listener the
/// probe opens on the host's loopback cannot be reached. Nothing is sent off this machine.
///
/// The probe creates and removes a file in each root; when no secret exists it proves the mask
/// on a canary file of its own under the system temp dir.
///
/// ```
/// use sixfold_sandbox::{prove, Environment};
///
/// // A root that does not exist cannot be proven, and the proof says why.
/// let environment = Environment { roots: vec!["/nonexistent/sixfold".into()], ..Environment::default() };
/// let proof = prove(&environment);
/// assert!(!proof.proven);
/// assert!(proof.failed().any(|c| c.detail.contains("is not a directory")));
/// ```
pub fn prove(environment: &Environment) -> Proof {
    #[cfg(target_os = "linux")]
    {
        linux::prove::prove(environment)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = environment;
        Proof::from_checks(vec![Check::new(
            "sandbox",
            false,
            "the sandbox is built from Linux namespaces, Landlock and seccomp; this is not Linux",
        )])
    }
}
