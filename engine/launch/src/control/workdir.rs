//! The working directory: a fresh copy the launcher owns (`--copy`), a declared root (`--root`),
//! or the directory sixfold was launched in.

use crate::error::LaunchError;
use crate::files;
use crate::request::Workdir;
use sixfold_core::launch_facts::WorkdirFacts;
use std::path::{Path, PathBuf};

/// Makes or checks the working directory; a copy's links that leave it are a warning.
pub(crate) fn prepare(
    workdir: &Workdir,
    run_dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<(PathBuf, WorkdirFacts), LaunchError> {
    match workdir {
        Workdir::Copy(src) => {
            let dst = run_dir.join("work");
            let copy = files::copy_tree(src, &dst).map_err(|e| {
                LaunchError::new(format!(
                    "cannot copy `{}` into the run's working directory: {e}",
                    src.display()
                ))
            })?;
            if !copy.symlinks_outside.is_empty() {
                warnings.push(format!(
                    "the copy keeps {} link(s) that point outside it: {}",
                    copy.symlinks_outside.len(),
                    copy.symlinks_outside.join(", ")
                ));
            }
            let dst = dst.canonicalize().unwrap_or(dst);
            let source = src.canonicalize().unwrap_or_else(|_| src.clone());
            let facts = WorkdirFacts::Copy {
                path: dst.display().to_string(),
                source: source.display().to_string(),
                copy,
            };
            Ok((dst, facts))
        }
        Workdir::Root(dir) => {
            let dir = dir
                .canonicalize()
                .map_err(|e| LaunchError::new(format!("`--root {}`: {e}", dir.display())))?;
            if !dir.is_dir() {
                return Err(LaunchError::new(format!(
                    "`--root {}` is not a directory",
                    dir.display()
                )));
            }
            let facts = WorkdirFacts::Root {
                path: dir.display().to_string(),
                declared: true,
            };
            Ok((dir, facts))
        }
        Workdir::Current => {
            let dir = std::env::current_dir()
                .and_then(|d| d.canonicalize())
                .map_err(|e| LaunchError::new(format!("cannot read the current directory: {e}")))?;
            let facts = WorkdirFacts::Root {
                path: dir.display().to_string(),
                declared: false,
            };
            Ok((dir, facts))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn a_copy_is_made_inside_the_run_and_a_root_is_used_in_place() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("f"), "x").unwrap();
        let run = t.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        let mut warnings = Vec::new();
        let (dir, facts) = prepare(&Workdir::Copy(src.clone()), &run, &mut warnings).unwrap();
        assert_eq!(dir, run.canonicalize().unwrap().join("work"));
        assert!(dir.join("f").is_file());
        let WorkdirFacts::Copy { copy, .. } = facts else {
            panic!("{facts:?}")
        };
        assert_eq!(copy.files, 1);
        let (dir, facts) = prepare(&Workdir::Root(src.clone()), &run, &mut warnings).unwrap();
        assert_eq!(dir, src.canonicalize().unwrap());
        assert!(matches!(facts, WorkdirFacts::Root { declared: true, .. }));
        let err = prepare(&Workdir::Root(src.join("f")), &run, &mut warnings).unwrap_err();
        assert!(err.message.contains("is not a directory"), "{err}");
        assert!(warnings.is_empty());
    }
}
