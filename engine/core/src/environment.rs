//! Environments, compiled: what a sandbox must enforce around a command, as a description that
//! names no vendor and no operating-system mechanism. A sandbox layer turns it into its own
//! terms; the core only says what is confined.

use serde::Serialize;

/// An environment, compiled from `[environments.NAME]`: its path sets expanded into paths as
/// written, each meaning the path itself and everything under it.
///
/// Paths as written take four forms: `~/p` (under the home directory), `/p` (absolute), `p`
/// (under each workspace root) and `**/p` (at any depth under each workspace root).
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
        }
    }
}

/// A path set's globs as paths as written, each meaning the path and everything under it:
/// `p/**` is `p`, and a glob already covered by another (`p/**` beside `p`, `**/p/**` beside
/// `**/p`) is left out. Other globs are kept as they are.
pub(crate) fn written_paths(globs: &[String]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for glob in globs {
        let path = glob.strip_suffix("/**").unwrap_or(glob);
        if !path.is_empty() && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_glob_under_a_path_is_the_path() {
        let globs = [
            ".git/hooks",
            ".git/hooks/**",
            "~/.config/gcloud/**",
            "**/.sixfold/**",
            "**/.env*",
        ];
        assert_eq!(
            written_paths(&globs.map(String::from)),
            vec![".git/hooks", "~/.config/gcloud", "**/.sixfold", "**/.env*"]
        );
    }
}
