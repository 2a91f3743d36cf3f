//! `sixfold sandbox run|check`: one command confined by a mode's environment, and the proof
//! that this machine enforces it. The bundle says what an environment confines; the sandbox
//! layer enforces and proves it; this file only wires the two and keeps proofs in a cache.

use crate::bundles::{self, BundleArgs};
use crate::output::{errln, outln};
use crate::proofs::{cache_key, cached_proof, key_digest, proven_by, store_proof, Cached};
use sixfold_core::bundle::{Bundle, Needs};
use sixfold_core::environment::EnvironmentSpec;
use sixfold_hook::trust::Standing;
use sixfold_sandbox::{Check, Environment, Proof, SandboxError, Withheld};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Exit status when the environment cannot be proven or built (as a shell's "cannot execute").
const CANNOT_CONFINE: u8 = 126;
/// Exit status when the command's program is not found (as a shell's).
const NOT_FOUND: u8 = 127;

/// Run a command confined by a mode's environment, or prove that this machine enforces it.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: SandboxCommand,
}

#[derive(Debug, clap::Subcommand)]
enum SandboxCommand {
    /// Run one command confined by a mode's environment. Exits with the command's status; 126
    /// when the environment cannot be proven on this machine (the command does not run).
    #[command(after_help = "Example:\n  sixfold sandbox run --mode workspace-write -- cargo test")]
    Run {
        #[command(flatten)]
        on: On,
        /// The digest of a proof already made for the mode's environment around these roots
        /// (the hook writes it): the environment is read from that proof instead of the bundle.
        /// When no proof that held matches the mode, the roots and the digest, the bundle is
        /// loaded and the environment proven as without it.
        #[arg(long, value_name = "DIGEST", requires = "mode")]
        proof: Option<String>,
        /// The command and its arguments (the program is looked up on `$PATH`).
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<OsString>,
    },
    /// Prove a mode's environment on this machine and print what held. Exits 0 when proven,
    /// 1 when not.
    Check {
        #[command(flatten)]
        on: On,
        /// Print `{"proven": …, "checks": [{"name", "held", "detail"}, …]}`.
        #[arg(long)]
        json: bool,
    },
}

/// Which mode, which roots, which bundle.
#[derive(Debug, clap::Args)]
struct On {
    /// The mode whose environment confines the command (see `sixfold modes`); defaults to the
    /// project's active mode (`sixfold mode show`).
    #[arg(long, value_name = "ID")]
    mode: Option<String>,
    /// A workspace root: `DIR`, or `NAME=DIR` for a named one (repeatable). Defaults to the
    /// current directory.
    #[arg(long = "root", value_name = "[NAME=]DIR")]
    roots: Vec<String>,
    #[command(flatten)]
    bundle: BundleArgs,
}

/// A mode's environment, resolved for this run.
struct Resolved {
    mode: String,
    /// The environment's name.
    id: String,
    /// `None` when the environment confines nothing.
    environment: Option<Environment>,
    /// Whether a cached proof that held was found for it already.
    proven: bool,
}

fn usage_error(message: &str, hint: &str) -> u8 {
    errln!("error: {message}\n  = help: {hint}");
    2
}

/// `sixfold sandbox`.
pub(crate) fn run(args: Args) -> u8 {
    match args.command {
        SandboxCommand::Run { on, proof, command } => run_line(&on, proof.as_deref(), &command),
        SandboxCommand::Check { on, json } => match resolve(&on) {
            Ok(resolved) => check(&resolved, json),
            Err(code) => code,
        },
    }
}

/// `sixfold sandbox run`.
fn run_line(on: &On, proof: Option<&str>, command: &[OsString]) -> u8 {
    match resolve_proven(on, proof).map_or_else(|| resolve(on), Ok) {
        Ok(resolved) => run_confined(&resolved, command),
        Err(code) => code,
    }
}

/// The line the hook writes before every contained command (`call.rs`: `run --mode M --root
/// DIR [--root NAME=DIR]… --proof DIGEST [--no-project] -- CMD…`, the words after `sandbox`),
/// run without clap, which would first build the parser of every subcommand. Only that shape,
/// each value non-empty and not starting with `-`, is read here; `None` sends any other
/// spelling through clap, and a test holds this reading to clap's.
pub(crate) fn hook_line(words: &[OsString]) -> Option<u8> {
    let (on, proof, command) = read_hook_line(words)?;
    Some(run_line(&on, Some(&proof), command))
}

fn read_hook_line(words: &[OsString]) -> Option<(On, String, &[OsString])> {
    let value = |word: Option<&OsString>| -> Option<String> {
        let value = word?.to_str()?;
        (!value.is_empty() && !value.starts_with('-')).then(|| value.to_string())
    };
    let mut at = words.iter();
    if at.next()?.to_str()? != "run" || at.next()?.to_str()? != "--mode" {
        return None;
    }
    let mode = value(at.next())?;
    let mut roots = Vec::new();
    let mut word = at.next()?.to_str()?;
    while word == "--root" {
        roots.push(value(at.next())?);
        word = at.next()?.to_str()?;
    }
    if roots.is_empty() || word != "--proof" {
        return None;
    }
    let proof = value(at.next())?;
    let mut word = at.next()?.to_str()?;
    let no_project = word == "--no-project";
    if no_project {
        word = at.next()?.to_str()?;
    }
    let command = at.as_slice();
    if word != "--" || command.is_empty() {
        return None;
    }
    let on = On {
        mode: Some(mode),
        roots,
        bundle: BundleArgs {
            bundles: Vec::new(),
            no_project,
        },
    };
    Some((on, proof, command))
}

/// The mode's environment for the roots given; a usage error (exit 2) when the mode or its
/// environment does not exist or the bundle has errors.
fn resolve(on: &On) -> Result<Resolved, u8> {
    let mode = match &on.mode {
        Some(mode) => mode.clone(),
        None => active_mode()
            .map_err(|message| usage_error(&message, "name the mode with --mode ID (see `sixfold modes`)"))?,
    };
    let workspace = crate::judge::workspace(&on.roots)
        .map_err(|message| usage_error(&message, "--root DIR for the primary root, --root NAME=DIR for others"))?;
    let (sources, mut diagnostics) = bundles::sources(&on.bundle);
    // An environment needs no prices.
    let (bundle, mut found) = Bundle::load_for(&sources, &Needs::mode(&mode).with_prices(false));
    diagnostics.append(&mut found);
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        // INVARIANT (fail closed): a broken bundle may have held a stricter environment; nothing
        // runs under what is left of it.
        return Err(usage_error(
            "the bundle has errors, so nothing was run",
            "run `sixfold check` for the full report",
        ));
    }
    if bundle.mode(&mode).is_none() {
        // Only the named mode was read; the hint lists them all.
        let (all, _) = Bundle::load(&sources);
        return Err(crate::names::report(&all.unknown_mode(&mode)));
    }
    let spec = environment_of(&bundle, &mode)?;
    let roots: Vec<PathBuf> = workspace.roots().iter().map(|r| r.path.clone()).collect();
    let environment = environment_around(spec, &roots);
    let id = spec.id.clone();
    // Freed at exit: a bundle freed now costs the run a tenth of its start-up.
    std::mem::forget(bundle);
    Ok(Resolved {
        mode,
        id,
        environment,
        proven: false,
    })
}

/// The environment a proof already made holds, when `--proof` names one that held for this
/// mode around these roots: the bundle is not loaded (the hook loaded it when it wrote the
/// command). `None` sends the run the long way.
fn resolve_proven(on: &On, digest: Option<&str>) -> Option<Resolved> {
    let (mode, digest) = (on.mode.as_ref()?, digest?);
    let workspace = crate::judge::workspace(&on.roots).ok()?;
    let roots: Vec<PathBuf> = workspace.roots().iter().map(|r| r.path.clone()).collect();
    let (id, environment) = proven_by(mode, digest, &roots)?;
    Some(Resolved {
        mode: mode.clone(),
        id,
        environment: Some(environment),
        proven: true,
    })
}

/// What `spec` confines around `roots` in this process (its temp dir and `$HOME`): the same
/// for `sixfold sandbox run` and for the hook, so both find the same cached proof.
fn environment_around(spec: &EnvironmentSpec, roots: &[PathBuf]) -> Option<Environment> {
    Environment::from_spec(spec, roots, std::env::temp_dir(), crate::proofs::home())
}

/// `SIXFOLD_SANDBOX=off`: the hook and the governed tools never judge a command contained (every step is judged
/// as it is, so `workspace-write` asks for what it cannot read). It can only make judgements
/// stricter.
pub(crate) const SANDBOX_ENV: &str = "SIXFOLD_SANDBOX";

/// The sandbox layer for the hook, unless `SIXFOLD_SANDBOX=off` says not to contain.
pub(crate) fn for_hook() -> Option<&'static dyn sixfold_core::call::Sandboxes> {
    match std::env::var(SANDBOX_ENV).as_deref() {
        Ok("off") => None,
        _ => Some(&Prover),
    }
}

/// The sandbox layer as the hook sees it: whether a mode's environment is proven here (a cached
/// proof, or proven once now and cached), and this binary to run a command inside it.
#[derive(Debug)]
pub(crate) struct Prover;

impl sixfold_core::call::Sandboxes for Prover {
    fn proven(&self, mode: &str, spec: &EnvironmentSpec, roots: &[PathBuf]) -> Result<Option<String>, String> {
        let Some(environment) = environment_around(spec, roots) else {
            return Ok(None);
        };
        // A cached proof is a file read: the hook never probes per call. A failed one is kept a
        // short while too, so a machine that cannot prove does not probe at every command.
        let key = cache_key(mode, &spec.id, &environment);
        let proof = match cached_proof(&key) {
            Some(Cached::Proven) => return Ok(Some(key_digest(&key))),
            Some(Cached::Failed(proof)) => proof,
            None => {
                let proof = sixfold_sandbox::prove(&environment);
                store_proof(&key, (&spec.id, &environment), &proof);
                proof
            }
        };
        if proof.proven {
            return Ok(Some(key_digest(&key)));
        }
        let failed: Vec<String> = proof.failed().map(|c| format!("{}: {}", c.name, c.detail)).collect();
        Err(failed.join("; "))
    }

    fn program(&self) -> Option<PathBuf> {
        std::env::current_exe().ok()
    }
}

/// The environment the mode names.
fn environment_of<'b>(bundle: &'b Bundle, mode: &str) -> Result<&'b EnvironmentSpec, u8> {
    let Some(found) = bundle.mode(mode) else {
        return Err(crate::names::report(&bundle.unknown_mode(mode)));
    };
    let Some(name) = &found.environment else {
        return Err(usage_error(
            &format!("mode `{mode}` names no environment, so there is nothing to enforce"),
            &format!("add `environment = \"NAME\"` to {}", found.file),
        ));
    };
    bundle.environment(name).ok_or_else(|| {
        usage_error(
            &format!("mode `{mode}` needs the environment `{name}`, which does not exist"),
            "environments are declared in policy files under [environments.NAME]",
        )
    })
}

/// The project's active mode, as the hooks read it: the mode its `.sixfold/` names only once that
/// content is trusted (a cloned repository cannot pick `full` for itself), else the default.
fn active_mode() -> Result<String, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let project = sixfold_hook::project_of(&cwd)?;
    let state = sixfold_hook::state::State::load(&project)?;
    let standing = crate::trust::store()
        .ok()
        .and_then(|store| store.standing(&project).ok())
        .unwrap_or(Standing::Untrusted);
    // INVARIANT (fail closed): an untrusted project's state never chooses the environment.
    if standing == Standing::Untrusted {
        let named = state.mode_for(None);
        if named != sixfold_hook::DEFAULT_MODE {
            errln!(
                "note: the project's `.sixfold/` names mode `{named}` but is not trusted on this machine; using `{}` (`sixfold trust` after reviewing it, or pass --mode)",
                sixfold_hook::DEFAULT_MODE
            );
        }
        return Ok(sixfold_hook::DEFAULT_MODE.to_string());
    }
    Ok(state.mode_for(None))
}

fn run_confined(resolved: &Resolved, command: &[OsString]) -> u8 {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            errln!("error: cannot read the current directory: {e}");
            return CANNOT_CONFINE;
        }
    };
    let Some(environment) = &resolved.environment else {
        return run_plainly(command, &cwd);
    };
    // A failed proof cached by the hook is not taken here: a person's run proves afresh.
    let key = || cache_key(&resolved.mode, &resolved.id, environment);
    let cached = resolved.proven || matches!(cached_proof(&key()), Some(Cached::Proven));
    let failed = (!cached)
        .then(|| {
            let proof = sixfold_sandbox::prove(environment);
            store_proof(&key(), (&resolved.id, environment), &proof);
            proof
        })
        .filter(|proof| !proof.proven);
    if let Some(proof) = failed {
        // INVARIANT (fail closed): an environment this machine does not enforce runs nothing,
        // never the command with less confinement.
        errln!(
            "error: the environment `{}` of mode `{}` cannot be proven on this machine, so the command did not run",
            resolved.id,
            resolved.mode
        );
        for failed in proof.failed() {
            errln!("  {}: {}", failed.name, failed.detail);
        }
        errln!(
            "  = help: `sixfold sandbox check --mode {}` shows every check",
            resolved.mode
        );
        return CANNOT_CONFINE;
    }
    match sixfold_sandbox::run_reporting(environment, command, &cwd) {
        Ok(outcome) => {
            for moved in &outcome.quarantined {
                errln!(
                    "sixfold sandbox: the command made a git repository at `{}`; it was renamed to `{}` so the host's git never runs its config or hooks (review it before renaming it back)",
                    moved.path.display(),
                    moved.moved_to.display()
                );
            }
            if !outcome.searched_all {
                errln!(
                    "sixfold sandbox: warning: the workspace is too large to search for git repositories the command made; review new `.git` entries before running git"
                );
            }
            if outcome.status != 0 {
                explain_failure(resolved, environment, outcome.status);
            }
            exit_code(outcome.status)
        }
        Err(error) => {
            errln!("error: {error}");
            match error {
                SandboxError::NotFound { .. } => NOT_FOUND,
                _ => CANNOT_CONFINE,
            }
        }
    }
}

/// Most withheld paths named after a failed command; the rest are counted.
const MAX_NAMED: usize = 8;

/// After a command failed inside: what the sandbox withheld that it may have failed on (the
/// masked and read-only paths in the roots, the network), on sixfold's own stderr lines, so a
/// "device or resource busy" on a masked `.env` or a failed download says where it came from.
fn explain_failure(resolved: &Resolved, environment: &Environment, status: i32) {
    let roots: Vec<PathBuf> = environment
        .roots
        .iter()
        .chain(environment.read_only_roots.iter())
        .cloned()
        .collect();
    let found = sixfold_sandbox::withheld(environment, &roots);
    let named: Vec<String> = found
        .iter()
        .filter(|(_, how)| *how != Withheld::KeptInPlace)
        .map(|(path, how)| {
            let what = match how {
                Withheld::Hidden => "hidden",
                _ => "read-only",
            };
            format!("`{}` ({what})", path.display())
        })
        .collect();
    let prefix = format!(
        "sixfold sandbox: the command exited with status {status} inside the environment `{}` of mode `{}`",
        resolved.id, resolved.mode
    );
    if !named.is_empty() {
        let more = named.len().saturating_sub(MAX_NAMED);
        let mut list = named.into_iter().take(MAX_NAMED).collect::<Vec<_>>().join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        errln!(
            "{prefix}; masked there: {list} (a failure on one of them, such as `device or resource busy`, `read-only file system` or `permission denied`, is the sandbox's)"
        );
    } else {
        errln!("{prefix}");
    }
    if environment.network.is_cut() {
        errln!(
            "sixfold sandbox: the network is cut here: a command that needs it (a download, an install, a fetch) fails; offline builds from a tool's cache work"
        );
    }
}

/// Runs a command under an environment that confines nothing.
fn run_plainly(command: &[OsString], cwd: &Path) -> u8 {
    let Some((program, args)) = command.split_first() else {
        return usage_error("no command to run", "put it after `--`");
    };
    match std::process::Command::new(program).args(args).current_dir(cwd).status() {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            exit_code(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            errln!("error: program `{}` not found on `$PATH`", program.to_string_lossy());
            NOT_FOUND
        }
        Err(e) => {
            errln!("error: cannot start `{}`: {e}", program.to_string_lossy());
            CANNOT_CONFINE
        }
    }
}

/// A status as a process exit code (statuses beyond 255 wrap, as a shell's do).
fn exit_code(status: i32) -> u8 {
    u8::try_from(status.rem_euclid(256)).unwrap_or(1)
}

fn check(resolved: &Resolved, json: bool) -> u8 {
    let proof = match &resolved.environment {
        Some(environment) => {
            // A check always proves afresh; what it observed replaces the cached proof.
            let proof = sixfold_sandbox::prove(environment);
            store_proof(
                &cache_key(&resolved.mode, &resolved.id, environment),
                (&resolved.id, environment),
                &proof,
            );
            proof
        }
        None => Proof::from_checks(vec![Check::new(
            "sandbox",
            true,
            format!(
                "the environment `{}` confines nothing: a command runs as it is",
                resolved.id
            ),
        )]),
    };
    if json {
        crate::output::json(&proof);
    } else {
        for c in &proof.checks {
            outln!(
                "{:4}  {:24}  {}",
                if c.held { "held" } else { "FAIL" },
                c.name,
                c.detail
            );
        }
        let verdict = if proof.proven { "proven" } else { "not proven" };
        outln!(
            "{verdict}: the environment `{}` of mode `{}`",
            resolved.id,
            resolved.mode
        );
    }
    u8::from(!proof.proven)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

    fn words(line: &[&str]) -> Vec<OsString> {
        line.iter().map(OsString::from).collect()
    }

    /// How clap reads the words after `sandbox`, as `sixfold sandbox …` does.
    fn by_clap(words: &[OsString]) -> Option<String> {
        let command = <Args as clap::Args>::augment_args(clap::Command::new("sandbox"));
        let matches = command
            .try_get_matches_from(std::iter::once(OsString::from("sandbox")).chain(words.iter().cloned()))
            .ok()?;
        match Args::from_arg_matches(&matches).ok()?.command {
            SandboxCommand::Run { on, proof, command } => Some(format!("{on:?} {proof:?} {command:?}")),
            SandboxCommand::Check { .. } => None,
        }
    }

    fn by_hand(words: &[OsString]) -> Option<String> {
        read_hook_line(words).map(|(on, proof, command)| format!("{on:?} {:?} {command:?}", Some(proof)))
    }

    #[test]
    fn the_hook_line_reads_as_clap_reads_it() {
        for line in [
            &[
                "run",
                "--mode",
                "workspace-write",
                "--root",
                "/w",
                "--proof",
                "ab12",
                "--",
                "true",
            ][..],
            &[
                "run", "--mode", "m", "--root", "/w", "--root", "docs=/d", "--proof", "ab", "--", "bash", "-c", "x --y",
            ],
            &[
                "run",
                "--mode",
                "m",
                "--root",
                "/w",
                "--proof",
                "ab",
                "--no-project",
                "--",
                "true",
            ],
            &[
                "run", "--mode", "m", "--root", "/w w", "--proof", "ab", "--", "--proof", "--", "-x",
            ],
        ] {
            let words = words(line);
            let hand = by_hand(&words);
            assert!(hand.is_some(), "{line:?} is the hook's line");
            assert_eq!(hand, by_clap(&words), "{line:?}");
        }
    }

    #[test]
    fn any_other_spelling_is_left_to_clap() {
        for line in [
            &[][..],
            &["run", "--mode", "m", "--root", "/w", "--", "true"],
            &["run", "--mode", "m", "--proof", "ab", "--", "true"],
            &["run", "--mode=m", "--root", "/w", "--proof", "ab", "--", "true"],
            &["run", "--mode", "m", "--root", "-w", "--proof", "ab", "--", "true"],
            &["run", "--mode", "", "--root", "/w", "--proof", "ab", "--", "true"],
            &["run", "--mode", "m", "--proof", "ab", "--root", "/w", "--", "true"],
            &[
                "run", "--mode", "m", "--root", "/w", "--proof", "ab", "--bundle", "/b", "--", "true",
            ],
            &["run", "--mode", "m", "--root", "/w", "--proof", "ab", "--"],
            &["run", "--mode", "m", "--root", "/w", "--proof", "ab", "true"],
            &["check", "--mode", "m", "--root", "/w", "--proof", "ab", "--", "true"],
        ] {
            assert_eq!(by_hand(&words(line)), None, "{line:?}");
        }
        // Words that are not UTF-8 are clap's to read (and to refuse).
        use std::os::unix::ffi::OsStringExt;
        let mut line = words(&["run", "--mode", "m", "--root", "/w", "--proof", "ab", "--", "true"]);
        line[4] = OsString::from_vec(b"/w\xff".to_vec());
        assert_eq!(by_hand(&line), None);
    }
}
