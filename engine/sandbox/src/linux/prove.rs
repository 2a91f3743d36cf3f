//! The probe: builds the environment's sandbox, tries inside it what the environment must allow
//! and what it must deny, and checks the host afterwards.

use super::placeholder::Placeholders;
use super::plan::{c_path, passed, Payload, Plan, ProbeKind, ProbeOp};
use super::{spawn, sys};
use crate::environment::Environment;
use crate::error::SandboxError;
use crate::layout::{Hidden, Layout};
use crate::proof::{Check, Proof};
use std::ffi::OsString;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

/// What one probe operation must show.
struct Expectation {
    /// The check's name.
    name: &'static str,
    /// What was tried, for the detail.
    what: String,
    /// Whether the operation must work (a write inside a root) or fail.
    must_work: bool,
    /// A path that must not exist on the host afterwards (removed if it does).
    absent_after: Option<PathBuf>,
}

/// What the probe listens on from the host: sockets a command inside must not reach.
struct Listeners {
    /// A pathname socket under the system temp dir (a host socket in a writable root).
    path: Option<(PathBuf, UnixListener)>,
    /// An abstract socket of the host.
    abstract_name: Option<(String, UnixListener)>,
}

/// Proves `environment` on this machine.
pub(crate) fn prove(environment: &Environment) -> Proof {
    let mut checks = Vec::new();
    let nonce = format!(".sixfold-probe-{}-{}", std::process::id(), nanos());
    // The host's sockets the probe listens on exist before the layout is resolved, as a host
    // process's would.
    let listeners = listen(&nonce, &mut checks);
    let mut layout = match Layout::resolve(environment) {
        Ok(layout) => layout,
        Err(e) => {
            checks.push(Check::new("sandbox", false, e.to_string()));
            return finish(checks, None, listeners);
        }
    };
    // With no secret on this machine the mask is still proven, on a canary the probe owns.
    let canary = if !layout.hidden.iter().any(|h| !is_socket(&h.path)) {
        match make_canary(&nonce) {
            Ok(path) => {
                layout.hidden.push(Hidden {
                    path: path.clone(),
                    is_dir: false,
                });
                Some(path)
            }
            Err(e) => {
                checks.push(Check::new(
                    "secret-hidden",
                    false,
                    format!("cannot make a canary secret: {e}"),
                ));
                None
            }
        }
    } else {
        None
    };
    let listener = if environment.network.is_cut() {
        match TcpListener::bind("127.0.0.1:0").and_then(|l| l.set_nonblocking(true).map(|()| l)) {
            Ok(listener) => Some(listener),
            Err(e) => {
                checks.push(Check::new(
                    "network-cut",
                    false,
                    format!("cannot open a loopback listener: {e}"),
                ));
                None
            }
        }
    } else {
        None
    };
    let port = listener.as_ref().and_then(|l| l.local_addr().ok()).map(|a| a.port());

    checks.push(landlock_check());
    checks.push(variables_check(environment));
    if let Some(check) = home_inside_writable(environment, &layout) {
        checks.push(check);
    }
    let missing = layout.missing.clone();
    let texts = layout.texts.clone();
    let mounts_before = host_mounts();
    let placeholders = match Placeholders::make(&missing, &texts) {
        Ok(placeholders) => placeholders,
        Err(e) => {
            checks.push(Check::new("protected-not-creatable", false, e.to_string()));
            return finish(checks, canary, listeners);
        }
    };
    layout.hold(placeholders.held());
    if outside_dirs(environment, &layout).is_empty() {
        checks.push(Check::new(
            "write-outside-roots",
            true,
            "every directory lies inside a writable root: there is no outside to deny",
        ));
    }
    let control_before = snapshot(&layout);
    let (ops, expectations) = match operations(environment, &layout, &missing, &nonce, port, &listeners) {
        Ok(found) => found,
        Err(e) => {
            checks.push(Check::new("sandbox", false, e.to_string()));
            return finish(checks, canary, listeners);
        }
    };
    let result = Plan::new(environment, &layout, Payload::Probe(ops), Path::new("/"))
        .and_then(|plan| spawn(&plan, &layout).map(|s| (s.code, s.probe)));
    let results = match result {
        Ok((0, results)) => {
            checks.push(Check::new("sandbox", true, "built: user, mount, PID, IPC and network namespaces; read-only root; no capabilities; no_new_privs; seccomp"));
            results
        }
        Ok((code, _)) => {
            checks.push(Check::new(
                "sandbox",
                false,
                format!("the probe ended with exit status {code}"),
            ));
            return finish(checks, canary, listeners);
        }
        Err(e) => {
            checks.push(Check::new("sandbox", false, e.to_string()));
            return finish(checks, canary, listeners);
        }
    };
    for (index, expectation) in expectations.iter().enumerate() {
        let outcome = results.iter().find(|(i, _)| *i == index).map(|(_, v)| *v);
        checks.push(judge(expectation, outcome));
    }
    checks.push(control_check(&control_before, &snapshot(&layout)));
    for cache in &layout.caches {
        // What the probe wrote (and removed) in a cache is a mark in the layer: cleared.
        let _ = std::fs::remove_file(cache.layer.join("upper").join(&nonce));
    }
    drop(placeholders);
    for path in &missing {
        let text = texts.iter().find(|(p, _)| p == path).map(|(_, t)| t.as_str());
        checks.push(left_behind_check(path, text));
    }
    checks.push(mounts_check(&mounts_before, &host_mounts()));
    if let (Some(listener), Some(port)) = (&listener, port) {
        // INVARIANT (fail closed): a connection that reached the listener is a network that is
        // not cut, whatever the probe said.
        if listener.accept().is_ok() {
            checks.push(Check::new(
                "network-cut",
                false,
                format!("the host's loopback listener on port {port} received a connection"),
            ));
        }
    }
    // INVARIANT (fail closed): a connection that reached a host socket is a wall that did not
    // hold, whatever the probe said.
    if let Some((path, listener)) = &listeners.path {
        if listener.accept().is_ok() {
            checks.push(Check::new(
                "host-sockets",
                false,
                format!("the host's socket `{}` received a connection", path.display()),
            ));
        }
    }
    if let Some((name, listener)) = &listeners.abstract_name {
        if listener.accept().is_ok() {
            checks.push(Check::new(
                "host-sockets",
                false,
                format!("the host's abstract socket `@{name}` received a connection"),
            ));
        }
    }
    finish(checks, canary, listeners)
}

/// Opens the host sockets the probe tries to reach from inside.
fn listen(nonce: &str, checks: &mut Vec<Check>) -> Listeners {
    let dir = std::env::temp_dir().join(format!("{}-sockets", nonce.trim_start_matches('.')));
    let path = std::fs::create_dir(&dir)
        .and_then(|()| {
            let path = dir.join("agent.sock");
            let listener = UnixListener::bind(&path)?;
            listener.set_nonblocking(true)?;
            Ok((path, listener))
        })
        .map_err(|e| {
            checks.push(Check::new(
                "host-sockets",
                false,
                format!("cannot open a socket under `{}`: {e}", dir.display()),
            ))
        })
        .ok();
    let abstract_name = abstract_listener(nonce)
        .map_err(|e| {
            checks.push(Check::new(
                "host-sockets",
                false,
                format!("cannot open an abstract socket: {e}"),
            ))
        })
        .ok();
    Listeners { path, abstract_name }
}

fn abstract_listener(nonce: &str) -> std::io::Result<(String, UnixListener)> {
    use std::os::linux::net::SocketAddrExt;
    let name = nonce.trim_start_matches('.').to_string();
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
    let listener = UnixListener::bind_addr(&address)?;
    listener.set_nonblocking(true)?;
    Ok((name, listener))
}

fn is_socket(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// What the allow-list of variables lets through, tried on the caller's own variables and on
/// canary credentials.
fn variables_check(environment: &Environment) -> Check {
    const CANARIES: [&str; 5] = [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "NPM_CONFIG__AUTHTOKEN",
    ];
    let canaries = CANARIES
        .iter()
        .map(|name| (OsString::from(name), OsString::from("canary")));
    let all: Vec<(OsString, OsString)> = std::env::vars_os().chain(canaries).collect();
    let through = passed(all.iter().cloned(), &environment.variables);
    // INVARIANT (fail closed): a credential passes only when the environment names it exactly.
    let leaked: Vec<String> = through
        .iter()
        .filter_map(|(name, _)| name.to_str())
        .filter(|name| CANARIES.contains(name) && !environment.variables.pass.iter().any(|p| p == name))
        .map(|name| format!("`{name}`"))
        .collect();
    if !leaked.is_empty() {
        return Check::new(
            "environment-variables",
            false,
            format!("credentials pass into the command: {}", leaked.join(", ")),
        );
    }
    Check::new(
        "environment-variables",
        true,
        format!(
            "{} of {} variables pass (an allow-list); the canary credentials {} are withheld",
            through.len(),
            all.len(),
            CANARIES.map(|c| format!("`{c}`")).join(", ")
        ),
    )
}

/// The host's mount table, to see that nothing the sandbox mounted shows there.
fn host_mounts() -> Option<String> {
    sixfold_core::bounded::read_text(Path::new("/proc/self/mountinfo"), 4 * 1024 * 1024).ok()
}

fn mounts_check(before: &Option<String>, after: &Option<String>) -> Check {
    match (before, after) {
        (Some(before), Some(after)) if before == after => Check::new(
            "leftovers",
            true,
            "the host's mount table is the same after the run: no mount point survives",
        ),
        (Some(_), Some(_)) => Check::new("leftovers", false, "the host's mount table changed while the probe ran"),
        _ => Check::new("leftovers", false, "cannot read the host's mount table"),
    }
}

/// A kept entry as the host sees it: its path, and its device, inode, size and modification
/// time (seconds, nanoseconds), or `None` when it is gone.
type Seen = (PathBuf, Option<(u64, u64, u64, i64, i64)>);

/// The identity, size and modification time of each kept entry, as the host sees it.
fn snapshot(layout: &Layout) -> Vec<Seen> {
    use std::os::unix::fs::MetadataExt;
    layout
        .kept
        .iter()
        .map(|k| {
            // A directory only kept in place may change inside (a repository's objects); it
            // must stay the same entry. What is read-only must not change at all.
            let meta = std::fs::symlink_metadata(&k.path).ok().map(|m| {
                if k.read_only {
                    (m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec())
                } else {
                    (m.dev(), m.ino(), 0, 0, 0)
                }
            });
            (k.path.clone(), meta)
        })
        .collect()
}

/// The repository's control files and the other protected paths, as the host sees them after
/// the probe tried to rename, replace and write them: unchanged, so the host's `git status`,
/// `git commit` and `git log` read nothing the probe could plant.
fn control_check(before: &[Seen], after: &[Seen]) -> Check {
    let changed: Vec<String> = before
        .iter()
        .zip(after)
        .filter(|((_, b), (_, a))| b != a || b.is_none())
        .map(|((path, _), _)| format!("`{}`", path.display()))
        .collect();
    if changed.is_empty() {
        Check::new(
            "repository-control",
            true,
            format!(
                "{} protected entries (`.git` itself, its control files, the directories above them) are unchanged on the host after the probe",
                before.len()
            ),
        )
    } else {
        Check::new(
            "repository-control",
            false,
            format!("changed on the host: {}", changed.join(", ")),
        )
    }
}

fn finish(checks: Vec<Check>, canary: Option<PathBuf>, listeners: Listeners) -> Proof {
    if let Some(dir) = canary.as_ref().and_then(|c| c.parent()) {
        let _ = std::fs::remove_dir_all(dir);
    }
    if let Some((path, listener)) = listeners.path {
        drop(listener);
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    Proof::from_checks(checks)
}

fn nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// A file with known content in a fresh directory under the system temp dir.
fn make_canary(nonce: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(nonce.trim_start_matches('.'));
    std::fs::create_dir(&dir)?;
    let path = dir.join("secret");
    std::fs::write(&path, "canary")?;
    Ok(path)
}

fn landlock_check() -> Check {
    match sys::landlock_abi() {
        Some(abi) => Check::new(
            "landlock",
            true,
            format!("Landlock ABI {abi}: a second wall for writes"),
        ),
        None => Check::new(
            "landlock",
            true,
            "not available: the read-only mounts are the only wall for writes",
        ),
    }
}

/// The operations the probe tries, and what each must show, in the same order.
struct Probe {
    ops: Vec<ProbeOp>,
    expectations: Vec<Expectation>,
    port: u16,
}

impl Probe {
    fn push(&mut self, kind: ProbeKind, path: &Path, expectation: Expectation) -> Result<(), SandboxError> {
        self.push_with(kind, path, Path::new("/"), expectation)
    }

    fn push_with(
        &mut self,
        kind: ProbeKind,
        path: &Path,
        other: &Path,
        expectation: Expectation,
    ) -> Result<(), SandboxError> {
        self.ops.push(ProbeOp {
            kind,
            path: c_path(path)?,
            port: self.port,
            other: c_path(other)?,
        });
        self.expectations.push(expectation);
        Ok(())
    }
}

/// The operations the probe tries, and what each must show.
fn operations(
    environment: &Environment,
    layout: &Layout,
    missing: &[PathBuf],
    nonce: &str,
    port: Option<u16>,
    listeners: &Listeners,
) -> Result<(Vec<ProbeOp>, Vec<Expectation>), SandboxError> {
    let mut probe = Probe {
        ops: Vec::new(),
        expectations: Vec::new(),
        port: port.unwrap_or(0),
    };
    // A cache's layer is writable only for its overlay's mount (checked below).
    let layers: Vec<&Path> = layout.caches.iter().map(|c| c.layer.as_path()).collect();
    for root in layout.writable.iter().filter(|r| !layers.contains(&r.as_path())) {
        let target = root;
        let path = target.join(nonce);
        let what = format!("create `{}`", path.display());
        probe.push(
            ProbeKind::CreateFile,
            &path,
            Expectation {
                name: "write-inside-root",
                what,
                must_work: true,
                absent_after: Some(path.clone()),
            },
        )?;
        // As `cargo test` makes `target/` at the root of a fresh repository.
        let dir = target.join(format!("{nonce}-dir"));
        probe.push(
            ProbeKind::MakeDir,
            &dir,
            Expectation {
                name: "write-inside-root",
                what: format!("create the directory `{}`", dir.display()),
                must_work: true,
                absent_after: Some(dir.clone()),
            },
        )?;
    }
    for dir in outside_dirs(environment, layout) {
        let path = dir.join(nonce);
        probe.push(
            ProbeKind::CreateFile,
            &path,
            Expectation {
                name: "write-outside-roots",
                what: format!("create `{}`", path.display()),
                must_work: false,
                absent_after: Some(path.clone()),
            },
        )?;
    }
    for path in layout.read_only() {
        let (kind, target) = if path.is_dir() {
            (ProbeKind::CreateFile, path.join(nonce))
        } else {
            (ProbeKind::OpenForWrite, path.to_path_buf())
        };
        probe.push(
            kind,
            &target,
            Expectation {
                name: "protected-read-only",
                what: format!("write `{}`", target.display()),
                must_work: false,
                absent_after: (kind == ProbeKind::CreateFile).then(|| target.clone()),
            },
        )?;
    }
    for path in missing {
        // The placeholder stands there now: it can be neither replaced nor filled.
        let (kind, target, what) = if path.is_dir() {
            let inside = path.join(nonce);
            (
                ProbeKind::CreateFile,
                inside.clone(),
                format!("create `{}`", inside.display()),
            )
        } else {
            (
                ProbeKind::OpenForWrite,
                path.clone(),
                format!("write `{}`", path.display()),
            )
        };
        probe.push(
            kind,
            &target,
            Expectation {
                name: "protected-not-creatable",
                what: format!("{what} (a protected path that did not exist)"),
                must_work: false,
                absent_after: (kind == ProbeKind::CreateFile).then(|| target.clone()),
            },
        )?;
        probe.push(
            ProbeKind::Remove,
            path,
            Expectation {
                name: "protected-not-creatable",
                what: format!("remove the placeholder `{}` to create it anew", path.display()),
                must_work: false,
                absent_after: None,
            },
        )?;
    }
    for hidden in &layout.hidden {
        probe.push(
            ProbeKind::Read,
            &hidden.path,
            Expectation {
                name: "secret-hidden",
                what: format!("read `{}`", hidden.path.display()),
                must_work: false,
                absent_after: None,
            },
        )?;
    }
    if let Some(port) = port {
        probe.push(
            ProbeKind::Connect,
            Path::new("/"),
            Expectation {
                name: "network-cut",
                what: format!("connect to the host's loopback listener on 127.0.0.1:{port}"),
                must_work: false,
                absent_after: None,
            },
        )?;
    }
    for path in layout.pinned() {
        let moved = path.with_file_name(format!(
            "{}{nonce}",
            path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
        ));
        probe.push_with(
            ProbeKind::Rename,
            path,
            &moved,
            Expectation {
                name: "repository-control",
                what: format!("rename `{}` to rebuild it", path.display()),
                must_work: false,
                absent_after: Some(moved.clone()),
            },
        )?;
        // Its contents (a repository's objects, refs and index) stay writable.
        let inside = path.join(nonce);
        probe.push(
            ProbeKind::CreateFile,
            &inside,
            Expectation {
                name: "write-inside-root",
                what: format!("create `{}` inside an entry kept in place", inside.display()),
                must_work: true,
                absent_after: Some(inside.clone()),
            },
        )?;
    }
    if let Some((path, _)) = &listeners.path {
        probe.push(
            ProbeKind::ConnectUnix,
            path,
            Expectation {
                name: "host-sockets",
                what: format!("connect to the host's socket `{}`", path.display()),
                must_work: false,
                absent_after: None,
            },
        )?;
    }
    if let Some((name, _)) = &listeners.abstract_name {
        probe.push(
            ProbeKind::ConnectAbstract,
            Path::new(name),
            Expectation {
                name: "host-sockets",
                what: format!("connect to the host's abstract socket `@{name}`"),
                must_work: false,
                absent_after: None,
            },
        )?;
    }
    probe.push(
        ProbeKind::Keyring,
        Path::new("/"),
        Expectation {
            name: "keyring",
            what: "ask for the session keyring (`keyctl`)".to_string(),
            must_work: false,
            absent_after: None,
        },
    )?;
    if environment.home.is_absolute()
        && environment.home.is_dir()
        && !layout.hidden.iter().any(|h| environment.home.starts_with(&h.path))
    {
        // Tool caches under `$HOME` (`~/.cargo/registry`, `~/.npm`) are read from there.
        probe.push(
            ProbeKind::Read,
            &environment.home,
            Expectation {
                name: "caches",
                what: format!(
                    "read the home directory `{}`, where tool caches are",
                    environment.home.display()
                ),
                must_work: true,
                absent_after: None,
            },
        )?;
    }
    for cache in &layout.caches {
        let path = cache.path.join(nonce);
        probe.push(
            ProbeKind::CreateFile,
            &path,
            Expectation {
                name: "caches",
                what: format!(
                    "write `{}` in a tool cache, kept in the project's layer `{}`",
                    path.display(),
                    cache.layer.display()
                ),
                must_work: true,
                // INVARIANT: the host's own cache never changes.
                absent_after: Some(path.clone()),
            },
        )?;
        // INVARIANT: only the overlay writes the layer; nothing a later run's mount or clean-up
        // would follow can be planted there.
        let planted = cache.layer.join(nonce);
        probe.push(
            ProbeKind::CreateFile,
            &planted,
            Expectation {
                name: "caches",
                what: format!("create `{}` in the layer itself", planted.display()),
                must_work: false,
                absent_after: Some(planted.clone()),
            },
        )?;
    }
    Ok((probe.ops, probe.expectations))
}

/// A failed check when the home directory lies inside a writable directory (a `$TMPDIR` of `/`
/// or of a parent of `$HOME`): its dotfiles, and through them everything the user runs later,
/// could be changed from inside.
fn home_inside_writable(environment: &Environment, layout: &Layout) -> Option<Check> {
    if !environment.home.is_absolute() {
        return None;
    }
    let home = sixfold_core::scope::resolve_path(Path::new("/"), &environment.home)?;
    let writable = layout.writable_root_of(&home)?;
    // INVARIANT (fail closed): an environment that lets a command write the home directory is
    // not the one the mode asked for, whatever else held.
    Some(Check::new(
        "write-outside-roots",
        false,
        format!(
            "the home directory `{}` lies inside the writable `{}` (is `$TMPDIR` a parent of `$HOME`?)",
            home.display(),
            writable.display()
        ),
    ))
}

/// Directories outside every writable root where a write is tried: each root's parent and the
/// home directory (places the user can normally write to, so a denial means something).
fn outside_dirs(environment: &Environment, layout: &Layout) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = layout
        .writable
        .iter()
        .filter_map(|r| r.parent().map(Path::to_path_buf))
        .collect();
    // A workspace root that is not writable is outside every writable root too.
    dirs.extend(layout.roots.iter().cloned());
    if environment.home.is_absolute() {
        dirs.push(environment.home.clone());
    }
    dirs.retain(|d| {
        d.is_dir() && layout.writable_root_of(d).is_none() && !layout.hidden.iter().any(|h| d.starts_with(&h.path))
    });
    dirs.sort();
    dirs.dedup();
    dirs
}

/// After the run: the placeholder for a missing protected path is not left on the host (it may
/// remain while another run holds it, or when something real was created there meanwhile).
fn left_behind_check(path: &Path, text: Option<&str>) -> Check {
    if std::fs::symlink_metadata(path).is_err() {
        return Check::new(
            "leftovers",
            true,
            format!("`{}` is absent again after the run", path.display()),
        );
    }
    if Placeholders::left_behind(path, text) {
        return Check::new(
            "leftovers",
            false,
            format!("the placeholder `{}` was left on the host", path.display()),
        );
    }
    Check::new(
        "leftovers",
        true,
        format!(
            "`{}` exists after the run, held by another run or made by someone else",
            path.display()
        ),
    )
}

fn judge(expectation: &Expectation, outcome: Option<i32>) -> Check {
    let Some(outcome) = outcome else {
        // INVARIANT (fail closed): an operation the probe did not report is not a check that held.
        return Check::new(
            expectation.name,
            false,
            format!("{}: the probe did not report", expectation.what),
        );
    };
    let worked = outcome == 0;
    let mut held = worked == expectation.must_work;
    let mut detail = if worked {
        format!("{}: it worked", expectation.what)
    } else {
        format!("{}: denied ({})", expectation.what, describe(outcome))
    };
    if let Some(path) = &expectation.absent_after {
        if std::fs::symlink_metadata(path).is_ok() {
            held = false;
            detail.push_str("; it exists on the host afterwards (removed)");
            let _ = std::fs::remove_file(path).or_else(|_| std::fs::remove_dir(path));
        }
    }
    Check::new(expectation.name, held, detail)
}

fn describe(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}
