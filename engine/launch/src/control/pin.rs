//! The pin: the vendor's version, asked of the binary as it will run (with the constructed
//! environment, in the working directory), against `--pin`, else the version found is the pin.

use crate::probe;
use sixfold_core::format::ProviderFile;
use sixfold_core::launch_facts::PinFacts;
use std::ffi::OsString;
use std::path::Path;

/// Asks the binary its version and pins it; a version older than the provider file's oldest
/// known one is a warning.
pub(crate) fn impose(
    provider: &ProviderFile,
    binary: &Path,
    env: &[(String, OsString)],
    workdir: &Path,
    declared: Option<&str>,
    warnings: &mut Vec<String>,
) -> PinFacts {
    let found = probe::ask_version(provider, binary, Some(env), Some(workdir));
    let oldest = provider.readiness.as_ref().and_then(|r| r.min_version.as_ref());
    if let (Ok(version), Some(min)) = (&found, oldest) {
        if probe::older_than(version, min) {
            warnings.push(format!(
                "{} {version} is older than {min}, the oldest sixfold knows how to launch and read",
                provider.id
            ));
        }
    }
    pin(declared, found)
}

/// The pin from the declared version and the one found.
pub(crate) fn pin(declared: Option<&str>, found: Result<String, String>) -> PinFacts {
    let (found, found_error) = match found {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    };
    PinFacts {
        version: declared.map(str::to_string).or_else(|| found.clone()),
        declared: declared.is_some(),
        found,
        found_error,
    }
}

/// A declared pin the binary does not match: `(pin, found)`.
pub(crate) fn mismatch(pin: &PinFacts) -> Option<(&str, &str)> {
    match (pin.declared, pin.version.as_deref(), pin.found.as_deref()) {
        (true, Some(pinned), Some(found)) if pinned != found => Some((pinned, found)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn the_declared_pin_wins_and_a_mismatch_is_seen() {
        let found = pin(None, Ok("2.1.0".into()));
        assert_eq!(found.version.as_deref(), Some("2.1.0"));
        assert!(!found.declared);
        assert_eq!(mismatch(&found), None);
        let held = pin(Some("2.1.0"), Ok("2.1.0".into()));
        assert_eq!(mismatch(&held), None);
        let moved = pin(Some("2.0.0"), Ok("2.1.0".into()));
        assert_eq!(mismatch(&moved), Some(("2.0.0", "2.1.0")));
        let unknown = pin(None, Err("exited with 1".into()));
        assert_eq!(unknown.version, None);
        assert_eq!(unknown.found_error.as_deref(), Some("exited with 1"));
        assert_eq!(mismatch(&pin(Some("2.0.0"), Err("no".into()))), None);
    }

    #[cfg(unix)]
    #[test]
    fn the_binary_is_asked_as_it_will_run() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("vendor");
        std::fs::write(&bin, "#!/bin/sh\necho \"vendor $WANT\"\n").unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let provider: ProviderFile = toml::from_str(
            "id = \"v\"\n[binary]\nnames = [\"vendor\"]\nversion_args = [\"--version\"]\n[readiness]\nmin_version = \"2.0.0\"",
        )
        .unwrap();
        let env = [("WANT".to_string(), OsString::from("1.5.0"))];
        let mut warnings = Vec::new();
        let facts = impose(&provider, &bin, &env, t.path(), None, &mut warnings);
        assert_eq!(facts.found.as_deref(), Some("1.5.0"));
        assert!(warnings[0].contains("older than 2.0.0"), "{warnings:?}");
    }
}
