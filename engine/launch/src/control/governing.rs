//! The governing documents: the policy bundle that governs sixfold's hooks (a copy gets a
//! `.sixfold/` of its own; in place, the nearest one upwards governs, and one above the working
//! directory is reported), the memory files above the working directory, and every governing
//! document hashed before the run and again after it.

use super::Scratch;
use crate::error::LaunchError;
use crate::files;
use serde::Serialize;
use serde_json::{json, Value};
use sixfold_core::format::AmbientFile;
use sixfold_core::launch_facts::{BundleFacts, MemoryWalkFacts};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What was found before the run.
#[derive(Debug)]
pub(crate) struct Governing {
    /// The bundle that governs sixfold's hooks.
    pub(crate) bundle: BundleFacts,
    /// The walk above the working directory for memory files.
    pub(crate) memory_walk: MemoryWalkFacts,
    /// What the run is exposed to besides the provider file's ambient inputs.
    pub(crate) ambient: Vec<AmbientFile>,
    /// The documents' hashes before the run.
    pub(crate) before: files::Governing,
}

/// The governing documents' hashes, before and after: `facts.hashes`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HashFacts {
    /// Path → hash before the run (`absent` for one that appeared after).
    pub(crate) before: BTreeMap<String, String>,
    /// Path → hash after the run.
    pub(crate) after: BTreeMap<String, String>,
    /// The documents that existed before the run.
    pub(crate) pinned: Vec<String>,
    /// False when a walk stopped at its limit.
    pub(crate) complete: bool,
}

impl HashFacts {
    /// What the attestation keeps of them.
    pub(crate) fn attested(&self) -> Value {
        json!({ "before": self.before, "after": self.after, "complete": self.complete })
    }
}

/// Pins the governing documents of the run (`copy`: the working directory is a copy the
/// launcher made; `govern`: the run's `--govern` files).
pub(crate) fn impose(
    scratch: &Scratch<'_>,
    copy: bool,
    govern: &[PathBuf],
    warnings: &mut Vec<String>,
) -> Result<Governing, LaunchError> {
    let workdir = &scratch.workdir;
    let spec = scratch.spec;
    let mut ambient = Vec::new();
    // A copy gets its own `.sixfold/`, so no bundle above it can govern it.
    let made = copy && !workdir.join(".sixfold").is_dir();
    if made {
        let dir = workdir.join(".sixfold");
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let bundle = match files::bundle_project(workdir) {
        Some(p) => {
            let inside = p.starts_with(workdir);
            if !inside {
                let why = format!(
                    "`{}` holds the nearest `.sixfold/` above the working directory: its mode and rules govern sixfold's hooks in this run, from outside the tree (its bundle files are pinned for H10)",
                    p.display()
                );
                warnings.push(why.clone());
                ambient.push(AmbientFile {
                    name: "policy bundle above the working directory".into(),
                    why,
                });
            }
            BundleFacts {
                project: Some(p.display().to_string()),
                inside,
                made,
                note: None,
            }
        }
        None => BundleFacts {
            project: None,
            inside: true,
            made: false,
            note: Some("no `.sixfold/` governs the run: the shipped bundle and its default mode do".into()),
        },
    };
    let memory_walk = files::memory_above(workdir, &spec.memory_files);
    for g in govern {
        let path = if g.is_absolute() { g.clone() } else { workdir.join(g) };
        if !path.is_file() {
            let inside = if g.is_absolute() {
                String::new()
            } else {
                format!(" in the working directory `{}`", workdir.display())
            };
            return Err(
                LaunchError::new(format!("`--govern {}`: there is no such file{inside}", g.display())).hint(
                    "a relative `--govern` path names a file inside the working directory (the copy, or the root)",
                ),
            );
        }
    }
    let before = files::governing(workdir, &spec.governing, govern);
    Ok(Governing {
        bundle,
        memory_walk,
        ambient,
        before,
    })
}

/// Hashes the governing documents again after the run, beside the hashes from before.
pub(crate) fn after(scratch: &Scratch<'_>, govern: &[PathBuf], before: &files::Governing) -> HashFacts {
    let after = files::governing(&scratch.workdir, &scratch.spec.governing, govern);
    let (hash_before, hash_after) = files::pair(before, &after);
    HashFacts {
        before: hash_before,
        after: hash_after,
        pinned: before
            .hashes
            .iter()
            .filter(|(_, h)| h.as_str() != files::ABSENT)
            .map(|(k, _)| k.clone())
            .collect(),
        complete: before.complete && after.complete,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use crate::control::spec_for_test;

    #[test]
    fn a_copy_gets_its_own_bundle_and_a_moved_document_shows() {
        let t = tempfile::tempdir().unwrap();
        let work = t.path().join("run/work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("CLAUDE.md"), "a").unwrap();
        let spec =
            spec_for_test("config_home_env = \"C\"\nmemory_files = [\"CLAUDE.md\"]\ngoverning = [\"CLAUDE.md\"]");
        let scratch = Scratch::make("p", &spec, &t.path().join("run"), work.clone()).unwrap();
        let mut warnings = Vec::new();
        let g = impose(&scratch, true, &[], &mut warnings).unwrap();
        assert!(g.bundle.made && g.bundle.inside);
        assert!(work.join(".sixfold").is_dir());
        assert_eq!(g.memory_walk.names, ["CLAUDE.md"]);
        assert!(warnings.is_empty() && g.ambient.is_empty());
        std::fs::write(work.join("CLAUDE.md"), "b").unwrap();
        let hashes = after(&scratch, &[], &g.before);
        assert_eq!(hashes.pinned, ["CLAUDE.md"]);
        assert_ne!(hashes.before["CLAUDE.md"], hashes.after["CLAUDE.md"]);
        assert_eq!(hashes.attested()["complete"], true);
    }

    #[test]
    fn a_bundle_above_is_ambient_and_a_missing_govern_file_is_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".sixfold")).unwrap();
        let work = t.path().join("root");
        std::fs::create_dir_all(&work).unwrap();
        let spec = spec_for_test("config_home_env = \"C\"");
        let run = t.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        let scratch = Scratch::make("p", &spec, &run, work).unwrap();
        let mut warnings = Vec::new();
        let g = impose(&scratch, false, &[], &mut warnings).unwrap();
        assert!(!g.bundle.inside && !g.bundle.made);
        assert_eq!(g.ambient[0].name, "policy bundle above the working directory");
        assert_eq!(warnings.len(), 1);
        let err = impose(&scratch, false, &[PathBuf::from("nope.md")], &mut warnings).unwrap_err();
        assert!(
            err.message.contains("there is no such file in the working directory"),
            "{err}"
        );
    }
}
