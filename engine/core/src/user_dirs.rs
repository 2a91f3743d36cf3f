//! sixfold's own directories in the user's home, by the XDG base-directory convention: the
//! trust store (state) and the sandbox's proofs (cache). Kept outside any repository, so a
//! project cannot write them.

use std::path::PathBuf;

/// `$XDG_STATE_HOME/sixfold`, else `$HOME/.local/state/sixfold`; `None` when neither is set.
pub fn state_dir() -> Option<PathBuf> {
    dir("XDG_STATE_HOME", ".local/state")
}

/// `$XDG_CACHE_HOME/sixfold`, else `$HOME/.cache/sixfold`; `None` when neither is set.
pub fn cache_dir() -> Option<PathBuf> {
    dir("XDG_CACHE_HOME", ".cache")
}

/// The variable's directory when it is set and absolute (the convention ignores a relative
/// one), else the fallback under `$HOME`.
fn dir(variable: &str, under_home: &str) -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = var(variable)
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(under_home)))?;
    Some(base.join("sixfold"))
}
