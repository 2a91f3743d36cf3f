//! Environments, compiled: what a sandbox must enforce around a command, as a description that
//! names no vendor and no operating-system mechanism. A sandbox layer turns it into its own
//! terms; the core only says what is confined.

use serde::Serialize;
use std::collections::BTreeSet;

/// An environment, compiled from `[environments.NAME]`: its path sets expanded into paths as
/// written.
///
/// Paths as written take five forms: `~/p` (under the home directory), `/p` (absolute), `p`
/// (under each workspace root), `**/p` (at any depth under each workspace root) and `$NAME/p`
/// (under the path the caller's variable `NAME` holds). A path ending in `/**` means it and
/// everything under it; without, the entry itself (a directory kept in place, its contents
/// as the rest of the root).
///
/// ```
/// use sixfold_core::environment::EnvironmentSpec;
///
/// let full = EnvironmentSpec::unconfined("full");
/// assert!(!full.confined);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvironmentSpec {
    /// Its name, as modes name it.
    pub id: String,
    /// What it is for.
    pub description: Option<String>,
    /// The file it was written in.
    pub file: String,
    /// `false`: nothing is confined, and the fields below say nothing.
    pub confined: bool,
    /// Whether the workspace roots may be written.
    pub roots_writable: bool,
    /// Whether the system temp dir may be written.
    pub tmp_writable: bool,
    /// Paths that stay read-only inside writable roots, existing or not.
    pub read_only: Vec<String>,
    /// Paths that cannot be read.
    pub hidden: Vec<String>,
    /// Whether the network is cut.
    pub network_cut: bool,
    /// Tool caches read as they are and written to a per-project layer (paths as written).
    pub caches: Vec<String>,
    /// Names and patterns of the caller's environment variables that pass.
    pub pass_variables: Vec<String>,
    /// Patterns of names that never pass through a pattern (matched ignoring case).
    pub never_variables: Vec<String>,
    /// What a missing protected file holds while it stands in: (path as written, text).
    pub placeholders: Vec<(String, String)>,
}

impl EnvironmentSpec {
    /// An environment that confines nothing.
    pub fn unconfined(id: &str) -> EnvironmentSpec {
        EnvironmentSpec {
            id: id.to_string(),
            description: None,
            file: String::new(),
            confined: false,
            roots_writable: true,
            tmp_writable: true,
            read_only: Vec::new(),
            hidden: Vec::new(),
            network_cut: false,
            caches: Vec::new(),
            pass_variables: Vec::new(),
            never_variables: Vec::new(),
            placeholders: Vec::new(),
        }
    }
}

/// A path set's globs as paths as written: `p/**` (the path and everything under it) stays as
/// it is and covers `p` beside it; `p` alone is the entry itself. Other globs are kept as they
/// are, each once.
pub(crate) fn written_paths(globs: &[&str]) -> Vec<String> {
    // Ordered sets, not scans of the list (an environment names path sets of dozens of globs
    // each), and not hashed ones: a few comparisons of short text cost less than hashing it.
    let under: BTreeSet<&str> = globs.iter().filter_map(|g| g.strip_suffix("/**")).collect();
    let mut kept = BTreeSet::new();
    globs
        .iter()
        .filter(|g| !g.is_empty() && **g != "/**" && !under.contains(*g) && kept.insert(**g))
        .map(|g| (*g).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_under_a_path_is_the_path() {
        let globs = [
            ".git/hooks",
            ".git/hooks/**",
            ".git/hooks",
            "~/.config/gcloud/**",
            "**/.sixfold/**",
            "**/.env*",
        ];
        assert_eq!(
            written_paths(&globs),
            vec![".git/hooks/**", "~/.config/gcloud/**", "**/.sixfold/**", "**/.env*"]
        );
    }

    proptest::proptest! {
        /// The sets give what scanning the whole list for each glob gave.
        #[test]
        fn written_paths_are_the_scanned_ones(picks in proptest::collection::vec(0usize..8, 0..24)) {
            let pool = ["a", "a/**", "/**", "", "~/.x", "~/.x/**", "b/**", "a/**/**"];
            let globs: Vec<&str> = picks.iter().map(|&i| pool[i]).collect();
            let mut scanned: Vec<String> = Vec::new();
            for glob in &globs {
                let covered = globs.iter().any(|g| g.strip_suffix("/**") == Some(*glob));
                if !glob.is_empty() && *glob != "/**" && !covered && !scanned.iter().any(|p| p == glob) {
                    scanned.push((*glob).to_string());
                }
            }
            proptest::prop_assert_eq!(written_paths(&globs), scanned);
        }
    }
}
