//! The run directory: made fresh for each launch, it keeps the copy, the scratch config home and
//! `HOME`, the MCP config, `attestation.json` and `report.json`.

use crate::error::LaunchError;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Makes `sixfold-launch-<provider>-<pid>-<time>-<n>` in `base` (default: the system temp dir).
pub(crate) fn make(provider: &str, base: Option<&Path>) -> Result<PathBuf, LaunchError> {
    let base = base.map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create `{}`: {e}", base.display()))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    for attempt in 0..100u32 {
        let dir = base.join(format!(
            "sixfold-launch-{provider}-{}-{stamp}-{attempt}",
            std::process::id()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir.canonicalize().unwrap_or(dir)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(LaunchError::new(format!("cannot create `{}`: {e}", dir.display()))),
        }
    }
    Err(LaunchError::new(format!(
        "cannot make a run directory in `{}`",
        base.display()
    )))
}

/// Writes `value` as pretty JSON; a failure is a warning (the run goes on).
pub(crate) fn write_json(path: &Path, value: &Value, warnings: &mut Vec<String>) {
    let written = serde_json::to_string_pretty(value)
        .map_err(|e| e.to_string())
        .and_then(|text| std::fs::write(path, text + "\n").map_err(|e| e.to_string()));
    if let Err(e) = written {
        warnings.push(format!("cannot write `{}`: {e}", path.display()));
    }
}

/// Seconds since the Unix epoch (0 when the clock is before it).
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn each_run_gets_a_fresh_directory() {
        let t = tempfile::tempdir().unwrap();
        let a = make("p", Some(t.path())).unwrap();
        let b = make("p", Some(t.path())).unwrap();
        assert_ne!(a, b);
        assert!(a.is_dir() && b.is_dir());
        let mut warnings = Vec::new();
        write_json(&a.join("x.json"), &serde_json::json!({"k": 1}), &mut warnings);
        assert!(warnings.is_empty());
        write_json(&a.join("no/such/dir.json"), &serde_json::json!({}), &mut warnings);
        assert_eq!(warnings.len(), 1);
    }
}
