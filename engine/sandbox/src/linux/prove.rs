//! The probe: builds the environment's sandbox, tries inside it what the environment must allow
//! and what it must deny, and checks the host afterwards.

use super::placeholder::Placeholders;
use super::plan::{c_path, Payload, Plan, ProbeKind, ProbeOp};
use super::{spawn, sys};
use crate::environment::Environment;
use crate::error::SandboxError;
use crate::layout::{Hidden, Layout};
use crate::proof::{Check, Proof};
use std::net::TcpListener;
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

/// Proves `environment` on this machine.
pub(crate) fn prove(environment: &Environment) -> Proof {
    let mut checks = Vec::new();
    let mut layout = match Layout::resolve(environment) {
        Ok(layout) => layout,
        Err(e) => {
            checks.push(Check::new("sandbox", false, e.to_string()));
            return Proof::from_checks(checks);
        }
    };
    let nonce = format!(".sixfold-probe-{}-{}", std::process::id(), nanos());
    // With no secret on this machine the mask is still proven, on a canary the probe owns.
    let canary = if layout.hidden.is_empty() {
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
    if let Some(check) = home_inside_writable(environment, &layout) {
        checks.push(check);
    }
    let missing = layout.missing.clone();
    let placeholders = match Placeholders::make(&missing) {
        Ok(placeholders) => placeholders,
        Err(e) => {
            checks.push(Check::new("protected-not-creatable", false, e.to_string()));
            return finish(checks, canary);
        }
    };
    layout.hold(placeholders.paths());
    if outside_dirs(environment, &layout).is_empty() {
        checks.push(Check::new(
            "write-outside-roots",
            true,
            "every directory lies inside a writable root: there is no outside to deny",
        ));
    }
    let (ops, expectations) = match operations(environment, &layout, &missing, &nonce, port) {
        Ok(found) => found,
        Err(e) => {
            checks.push(Check::new("sandbox", false, e.to_string()));
            return finish(checks, canary);
        }
    };
    let result = Plan::new(environment, layout, Payload::Probe(ops), Path::new("/")).and_then(|plan| spawn(&plan));
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
            return finish(checks, canary);
        }
        Err(e) => {
            checks.push(Check::new("sandbox", false, e.to_string()));
            return finish(checks, canary);
        }
    };
    for (index, expectation) in expectations.iter().enumerate() {
        let outcome = results.iter().find(|(i, _)| *i == index).map(|(_, v)| *v);
        checks.push(judge(expectation, outcome));
    }
    drop(placeholders);
    for path in &missing {
        checks.push(left_behind_check(path));
    }
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
    finish(checks, canary)
}

fn finish(checks: Vec<Check>, canary: Option<PathBuf>) -> Proof {
    if let Some(dir) = canary.as_ref().and_then(|c| c.parent()) {
        let _ = std::fs::remove_dir_all(dir);
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

/// The operations the probe tries, and what each must show.
fn operations(
    environment: &Environment,
    layout: &Layout,
    missing: &[PathBuf],
    nonce: &str,
    port: Option<u16>,
) -> Result<(Vec<ProbeOp>, Vec<Expectation>), SandboxError> {
    let mut ops = Vec::new();
    let mut expectations = Vec::new();
    let mut push = |kind: ProbeKind, path: &Path, expectation: Expectation| -> Result<(), SandboxError> {
        ops.push(ProbeOp {
            kind,
            path: c_path(path)?,
            port: port.unwrap_or(0),
        });
        expectations.push(expectation);
        Ok(())
    };
    for root in &layout.writable {
        let target = root;
        let path = target.join(nonce);
        let what = format!("create `{}`", path.display());
        push(
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
        push(
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
        push(
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
    for path in &layout.read_only {
        let (kind, target) = if path.is_dir() {
            (ProbeKind::CreateFile, path.join(nonce))
        } else {
            (ProbeKind::OpenForWrite, path.clone())
        };
        push(
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
        push(
            kind,
            &target,
            Expectation {
                name: "protected-not-creatable",
                what: format!("{what} (a protected path that did not exist)"),
                must_work: false,
                absent_after: (kind == ProbeKind::CreateFile).then(|| target.clone()),
            },
        )?;
        push(
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
        push(
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
        push(
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
    Ok((ops, expectations))
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
fn left_behind_check(path: &Path) -> Check {
    if std::fs::symlink_metadata(path).is_err() {
        return Check::new(
            "placeholder-removed",
            true,
            format!("`{}` is absent again after the run", path.display()),
        );
    }
    if Placeholders::left_behind(path) {
        return Check::new(
            "placeholder-removed",
            false,
            format!("the placeholder `{}` was left on the host", path.display()),
        );
    }
    Check::new(
        "placeholder-removed",
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
