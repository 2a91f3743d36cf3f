//! The project's state in `.sixfold/state.toml`: the active mode (per project, or per session)
//! and the active pattern. Read at every hook call, so a change takes effect at the next one.

use serde::{Deserialize, Serialize};
use sixfold_core::bounded::{self, ReadError};
use sixfold_core::lease::Lease;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A state file larger than this is refused: it holds a few lines.
pub const MAX_STATE_BYTES: u64 = 256 * 1024;

/// The state file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// The active mode for every session without its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The active pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The lease set for the project (`sixfold lease set`): it narrows the mode's and pattern's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
    /// Per-session overrides.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sessions: BTreeMap<String, SessionState>,
}

/// One session's overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionState {
    /// The session's mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The lease set for the session: it narrows the project's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
}

/// The text of a project's state file; `None` where there is none. A file that is not a regular
/// file, is larger than [`MAX_STATE_BYTES`] or is not UTF-8 is an error.
pub fn read_text(project: &Path) -> Result<Option<String>, String> {
    let file = path(project);
    match bounded::read_text(&file, MAX_STATE_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(ReadError::Missing) => Ok(None),
        // INVARIANT (fail closed): a state that cannot be read is an error, never the default mode.
        Err(e) => Err(format!("`{}` cannot be read: {e}", file.display())),
    }
}

/// Where the state lives.
pub fn path(project: &Path) -> PathBuf {
    crate::project::dir(project).join("state.toml")
}

impl State {
    /// The lease set for a session: the project's, narrowed by the session's own.
    pub fn lease_for(&self, session: &str) -> Lease {
        let project = self.lease.unwrap_or_default();
        match self.sessions.get(session).and_then(|s| s.lease) {
            Some(own) => project.narrowed(&own),
            None => project,
        }
    }

    /// Reads the state; a missing file is the default state, a broken one (or one that is not a
    /// regular file, or larger than [`MAX_STATE_BYTES`]) an error.
    pub fn load(project: &Path) -> Result<State, String> {
        State::parse(project, read_text(project)?.as_deref())
    }

    /// The state of a project whose `.sixfold/` was read already (its state file with it).
    pub fn of(project: &Path, layer: &crate::ProjectLayer) -> Result<State, String> {
        State::parse(project, layer.state.clone()?.as_deref())
    }

    /// The state a state file's text says; no text is the default state.
    fn parse(project: &Path, text: Option<&str>) -> Result<State, String> {
        let Some(text) = text else {
            return Ok(State::default());
        };
        toml::from_str(text).map_err(|e| format!("`{}` cannot be read: {}", path(project).display(), e.message()))
    }

    /// Writes the state (to a temporary file, then renamed, so a reader never sees half of it).
    pub fn save(&self, project: &Path) -> Result<(), String> {
        let file = path(project);
        let dir = crate::project::dir(project);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        let text = toml::to_string_pretty(self).map_err(|e| format!("cannot write the state: {e}"))?;
        let tmp = dir.join(format!(".state.toml.{}", std::process::id()));
        std::fs::write(&tmp, text).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &file).map_err(|e| format!("cannot write `{}`: {e}", file.display()))
    }

    /// The mode a session runs in.
    pub fn mode_for(&self, session: Option<&str>) -> String {
        session
            .and_then(|s| self.sessions.get(s))
            .and_then(|s| s.mode.clone())
            .or_else(|| self.mode.clone())
            .unwrap_or_else(|| crate::DEFAULT_MODE.to_string())
    }

    /// The active pattern.
    pub fn pattern(&self) -> String {
        self.pattern
            .clone()
            .unwrap_or_else(|| crate::DEFAULT_PATTERN.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_by_session_then_project_then_default() {
        let mut s = State::default();
        assert_eq!(s.mode_for(Some("x")), crate::DEFAULT_MODE);
        s.mode = Some("full".into());
        s.sessions.insert(
            "x".into(),
            SessionState {
                mode: Some("read-only".into()),
                lease: None,
            },
        );
        assert_eq!(s.mode_for(Some("x")), "read-only");
        assert_eq!(s.mode_for(Some("y")), "full");
        let t = tempfile::tempdir().unwrap();
        s.save(t.path()).unwrap();
        assert_eq!(State::load(t.path()).unwrap(), s);
        std::fs::write(path(t.path()), "mode = [").unwrap();
        assert!(State::load(t.path()).is_err());
    }

    /// A state file that is a symlink to an endless device, a FIFO, or too large is an error
    /// at once, never a hang, never the default state.
    #[cfg(unix)]
    #[test]
    fn a_state_file_that_is_not_a_small_regular_file_is_an_error() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(crate::project::dir(t.path())).unwrap();
        let file = path(t.path());
        std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
        assert!(State::load(t.path()).unwrap_err().contains("not a regular file"));
        std::fs::remove_file(&file).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(&file)
            .status()
            .unwrap()
            .success());
        assert!(State::load(t.path()).unwrap_err().contains("FIFO"));
        std::fs::remove_file(&file).unwrap();
        let big = format!(
            "mode = \"ask\"\n{}",
            "#\n".repeat(usize::try_from(MAX_STATE_BYTES).unwrap())
        );
        std::fs::write(&file, big).unwrap();
        assert!(State::load(t.path()).unwrap_err().contains("larger"));
    }
}
