//! Credentials: shared with the operator as one declared file, copied into the scratch config
//! home under the name the provider file gives, readable by its owner only.

use super::Scratch;
use crate::error::LaunchError;
use sixfold_core::launch_facts::CredentialsFacts;
use std::path::Path;

/// Copies the declared credentials file, if any.
pub(crate) fn impose(scratch: &Scratch<'_>, declared: Option<&Path>) -> Result<CredentialsFacts, LaunchError> {
    let id = scratch.provider;
    let Some(from) = declared else {
        return Ok(CredentialsFacts::default());
    };
    let Some(name) = &scratch.spec.credentials_file else {
        return Err(LaunchError::new(format!(
            "the provider `{id}` names no credentials file, so `--credentials` cannot be used"
        ))
        .hint(format!("add `credentials_file` to `[hermetic]` in providers/{id}.toml")));
    };
    if !from.is_file() {
        return Err(LaunchError::new(format!(
            "`--credentials {}` is not a file",
            from.display()
        )));
    }
    let to = scratch.config_home.join(name);
    std::fs::copy(from, &to).map_err(|e| format!("cannot copy the credentials file `{}`: {e}", from.display()))?;
    restrict(&to);
    Ok(CredentialsFacts {
        declared: true,
        source: Some(from.display().to_string()),
        copied_to: Some(to.display().to_string()),
    })
}

#[cfg(unix)]
fn restrict(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn restrict(_: &Path) {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use crate::control::spec_for_test;

    #[test]
    fn the_declared_file_is_copied_and_nothing_else() {
        let t = tempfile::tempdir().unwrap();
        let run = t.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        let spec = spec_for_test("config_home_env = \"CFG\"\ncredentials_file = \".credentials.json\"");
        let scratch = Scratch::make("p", &spec, &run, run.clone()).unwrap();
        assert!(!impose(&scratch, None).unwrap().declared);
        let from = t.path().join("creds");
        std::fs::write(&from, "{}").unwrap();
        let facts = impose(&scratch, Some(&from)).unwrap();
        assert!(facts.declared);
        assert_eq!(
            std::fs::read_to_string(run.join("config/.credentials.json")).unwrap(),
            "{}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(run.join("config/.credentials.json"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(impose(&scratch, Some(&t.path().join("absent"))).is_err());
        let bare = spec_for_test("config_home_env = \"CFG\"");
        let scratch = Scratch { spec: &bare, ..scratch };
        assert!(impose(&scratch, Some(&from))
            .unwrap_err()
            .message
            .contains("names no credentials file"));
    }
}
