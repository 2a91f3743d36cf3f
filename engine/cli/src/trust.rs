//! `sixfold trust`: trust a project's `.sixfold/` as it is now on this machine, so it may widen
//! what the shipped bundle allows; `--revoke` stops trusting it. Until trusted (and again once
//! its content changes) a project bundle only narrows.

use crate::output::{errln, outln};
use sixfold_hook::trust::{Standing, TrustStore};
use std::path::{Path, PathBuf};

/// Trust a project's `.sixfold/` (its modes, policies, patterns, providers, kept rules and state)
/// exactly as it is now, on this machine. A repository's own bundle may always narrow what the
/// shipped bundle allows; it widens (a wider mode, an emptied path set, a kept `allow`, the
/// state's mode) only once trusted, and a change to any of its files makes it untrusted again.
/// Review the files before trusting them: `sixfold check` lists what they hold.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The project (default: the project of the current directory).
    dir: Option<PathBuf>,
    /// Stop trusting it.
    #[arg(long)]
    revoke: bool,
}

fn fail(message: &str, hint: &str) -> u8 {
    errln!("error: {message}\n  = help: {hint}");
    1
}

/// The user's trust store, or the reason there is none.
pub(crate) fn store() -> Result<TrustStore, String> {
    TrustStore::from_env().ok_or_else(|| "neither XDG_STATE_HOME nor HOME is set, so there is no trust store".into())
}

/// `sixfold trust`: records or revokes trust in a project's `.sixfold/`.
pub(crate) fn run(args: Args) -> u8 {
    let start = match args.dir {
        Some(dir) => dir,
        None => match std::env::current_dir() {
            Ok(cwd) => cwd,
            Err(e) => {
                return fail(
                    &format!("cannot read the current directory: {e}"),
                    "pass the project's directory",
                )
            }
        },
    };
    let project = match sixfold_hook::project::place(&start) {
        Ok(p) => p,
        Err(e) => return fail(&e, "run it inside the project, or pass its directory"),
    };
    let store = match store() {
        Ok(s) => s,
        Err(e) => return fail(&e, "set HOME or XDG_STATE_HOME"),
    };
    let shown = sixfold_hook::project::dir(&project);
    if args.revoke {
        return match store.revoke(&project) {
            Ok(true) => {
                outln!("{} is no longer trusted: it only narrows", shown.display());
                0
            }
            Ok(false) => {
                outln!("{} was not trusted", shown.display());
                0
            }
            Err(e) => fail(&e, "check the trust store's permissions"),
        };
    }
    match store.record(&project) {
        Ok(Some(hash)) => {
            outln!(
                "trusted {} ({hash}); a change to any of its files makes it untrusted again",
                shown.display()
            );
            0
        }
        Ok(None) => {
            outln!(
                "{} holds no bundle files and no state: nothing to trust",
                shown.display()
            );
            0
        }
        Err(e) => fail(&e, "fix the file (`sixfold check`), then trust it"),
    }
}

/// Runs a change the user makes to the project's `.sixfold/` (`mode set`, `pattern set`,
/// `rules add|remove`) and keeps it trusted: when the bundle was trusted (or empty) before the
/// change, the new content is recorded as trusted; when it was not, it stays untrusted and the
/// user is told how to trust it. Returns the change's exit code.
pub(crate) fn keeping_trust(project: &Path, change: impl FnOnce() -> u8) -> u8 {
    let store = store().ok();
    let before = store.as_ref().map(|s| s.standing(project));
    let code = change();
    if code != 0 {
        return code;
    }
    match (store, before) {
        (Some(store), Some(Ok(Standing::Trusted | Standing::Empty))) => {
            if let Err(e) = store.record(project) {
                errln!("warning: the change is not recorded as trusted: {e}");
            }
        }
        _ => {
            let shown = sixfold_hook::project::dir(project);
            errln!(
                "note: {} is not trusted on this machine, so it only narrows what the shipped bundle allows; review it and run `sixfold trust`",
                shown.display()
            );
        }
    }
    code
}

/// Whether the project's `.sixfold/` is trusted now, in words (for `mode show`).
pub(crate) fn standing_words(project: &Path) -> &'static str {
    match store().and_then(|s| s.standing(project)) {
        Ok(Standing::Trusted) => "trusted",
        Ok(Standing::Empty) => "empty",
        Ok(Standing::Untrusted) | Err(_) => "not trusted",
    }
}
