//! The controls of the hermetic contract, one per file. Each imposes itself on the run's
//! [`Scratch`] and returns the typed launch facts it answers for; the launch composes them in
//! order and the rows judge the result. Which variables, flags and files a control uses is data
//! in the provider file's `[hermetic]`. A control that cannot be imposed as asked is a
//! [`LaunchError`](crate::error::LaunchError): nothing runs half-imposed.

pub(crate) mod credentials;
pub(crate) mod env;
pub(crate) mod governed;
pub(crate) mod governing;
pub(crate) mod hooks;
pub(crate) mod mcp;
pub(crate) mod pin;
pub(crate) mod plugins;
pub(crate) mod setting_sources;
pub(crate) mod workdir;

use crate::error::LaunchError;
use sixfold_core::format::HermeticFile;
use std::path::{Path, PathBuf};

/// What every control is imposed on: the provider's `[hermetic]` and the directories made for
/// the run.
#[derive(Debug)]
pub(crate) struct Scratch<'a> {
    /// The provider's id, for messages.
    pub(crate) provider: &'a str,
    /// The provider file's `[hermetic]`.
    pub(crate) spec: &'a HermeticFile,
    /// The run directory.
    pub(crate) run_dir: PathBuf,
    /// The scratch config home (`<run>/config`).
    pub(crate) config_home: PathBuf,
    /// The scratch `HOME` (`<run>/home`).
    pub(crate) home: PathBuf,
    /// The working directory the vendor starts in.
    pub(crate) workdir: PathBuf,
}

impl<'a> Scratch<'a> {
    /// Makes the scratch config home and `HOME` inside the run directory.
    pub(crate) fn make(
        provider: &'a str,
        spec: &'a HermeticFile,
        run_dir: &Path,
        workdir: PathBuf,
    ) -> Result<Scratch<'a>, LaunchError> {
        let scratch = Scratch {
            provider,
            spec,
            run_dir: run_dir.to_path_buf(),
            config_home: run_dir.join("config"),
            home: run_dir.join("home"),
            workdir,
        };
        for dir in [&scratch.config_home, &scratch.home] {
            std::fs::create_dir(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        }
        carry_trust(&scratch.home);
        scratch.write_files()?;
        Ok(scratch)
    }

    /// Writes the provider file's `files` (each a JSON value) inside the scratch `HOME` or
    /// config home.
    fn write_files(&self) -> Result<(), LaunchError> {
        for (template, value) in &self.spec.files {
            let path = PathBuf::from(self.expand(template));
            // INVARIANT (fail closed): the launcher writes nowhere but the run's own scratch.
            let inside = [&self.home, &self.config_home]
                .iter()
                .any(|root| path.starts_with(root))
                && path.components().all(|c| !matches!(c, std::path::Component::ParentDir));
            if !inside {
                return Err(LaunchError::new(format!(
                    "providers/{}.toml: the file `{template}` lies outside the scratch `HOME` and config home",
                    self.provider
                )));
            }
            let text = serde_json::to_string_pretty(value).map_err(|e| format!("cannot write `{template}`: {e}"))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
            }
            std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        }
        Ok(())
    }

    /// A provider file's template with `{home}`, `{config_home}` and `{workdir}` filled in.
    pub(crate) fn expand(&self, template: &str) -> String {
        template
            .replace("{home}", &self.home.display().to_string())
            .replace("{config_home}", &self.config_home.display().to_string())
            .replace("{workdir}", &self.workdir.display().to_string())
    }
}

/// The operator's trust in project bundles goes with the run: sixfold's hook inside the run reads
/// the trust store under the scratch `HOME`, and trust is in content (see `sixfold_hook::trust`),
/// so a copy of a `.sixfold/` the operator trusts is trusted in the run, and nothing else is. The
/// store is found where `sixfold trust` keeps it (`$XDG_STATE_HOME/sixfold/trust.json`, else
/// `~/.local/state/sixfold/trust.json`). A store that cannot be carried leaves the run trusting
/// nothing, so a project bundle only narrows there.
fn carry_trust(home: &Path) {
    let Some(state) = sixfold_core::user_dirs::state_dir() else {
        return;
    };
    let Ok(text) = sixfold_core::bounded::read_bytes(&state.join("trust.json"), 4 * 1024 * 1024) else {
        return;
    };
    let dir = home.join(".local/state/sixfold");
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join("trust.json"), text);
    }
}

/// A scratch for a control's unit test: a `[hermetic]` from TOML, directories in `dir`.
#[cfg(test)]
pub(crate) fn spec_for_test(toml_text: &str) -> HermeticFile {
    #[allow(clippy::expect_used)]
    toml::from_str(toml_text).expect("a test's [hermetic]")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn declared_files_are_written_inside_the_scratch_only() {
        let t = tempfile::tempdir().unwrap();
        let spec = spec_for_test(
            "config_home_env = \"C\"\n[files]\n\"{config_home}/a/lock.json\" = { packages = 1 }\n\"{home}/.config/x/node_modules/.keep\" = {}",
        );
        let run = t.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let scratch = Scratch::make("p", &spec, &run, t.path().to_path_buf()).unwrap();
        let lock: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(scratch.config_home.join("a/lock.json")).unwrap()).unwrap();
        assert_eq!(lock["packages"], 1);
        assert!(scratch.home.join(".config/x/node_modules").is_dir());
        for outside in ["{workdir}/x.json", "{home}/../escape.json", "/tmp/x.json"] {
            let spec = spec_for_test(&format!("config_home_env = \"C\"\n[files]\n\"{outside}\" = 1"));
            let run = t.path().join(format!("run{}", outside.len()));
            std::fs::create_dir(&run).unwrap();
            assert!(
                Scratch::make("p", &spec, &run, t.path().to_path_buf()).is_err(),
                "{outside}"
            );
        }
        assert!(!t.path().join("run/escape.json").exists());
    }
}
