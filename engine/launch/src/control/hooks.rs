//! sixfold's own hooks: installed in the scratch config home (by [`crate::hooks`], and read
//! back), so the run is governed; and what in the argv or environment would skip them.

use super::Scratch;
use crate::error::LaunchError;
use sixfold_core::format::{HermeticFile, HooksFile, RecordFile};
use sixfold_core::launch_facts::{HooksFacts, SkipFacts};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

/// The record field in which a vendor says whether sixfold's hooks loaded (`loaded`, or why not).
const CONFIRMING_FIELD: &str = "hooks";

/// Installs the hooks the provider file's `[hooks]` table describes, running `exe`; where the
/// provider's `record` has a `hooks` field, the row needs the vendor to say they loaded.
pub(crate) fn impose(
    scratch: &Scratch<'_>,
    spec: Option<&HooksFile>,
    record: Option<&RecordFile>,
    exe: &Path,
) -> Result<HooksFacts, LaunchError> {
    let Some(spec) = spec else {
        return Ok(HooksFacts {
            reason: Some(format!(
                "providers/{}.toml says no way to install sixfold's hooks (no `[hooks]`)",
                scratch.provider
            )),
            ..HooksFacts::default()
        });
    };
    // The launcher writes hooks into a settings file, or (`opencode-plugin`) a plugin and the
    // deny-all rule it lifts; any other format is not installed, and the row about them says so.
    if !matches!(
        spec.format.as_str(),
        "settings-json" | "config-toml" | crate::hooks::OPENCODE_PLUGIN
    ) {
        return Ok(HooksFacts {
            reason: Some(format!(
                "the launcher cannot install hooks of the format `{}` (providers/{}.toml) in a scratch config home",
                spec.format, scratch.provider
            )),
            ..HooksFacts::default()
        });
    }
    let done = crate::hooks::install(&scratch.config_home, spec, exe)
        .map_err(|e| LaunchError::new(format!("cannot install sixfold's hooks: {e}")))?;
    Ok(HooksFacts {
        installed: true,
        file: Some(done.file),
        events: Some(done.events),
        command: Some(done.command),
        reason: None,
        // A vendor that skips a hook it cannot load (OpenCode's plugin) must say they loaded.
        confirmed_by: record
            .filter(|r| r.fields.contains_key(CONFIRMING_FIELD))
            .map(|_| CONFIRMING_FIELD.to_string()),
    })
}

/// The flags in `argv` (after the binary; `--flag` or `--flag=…`) and the variables in `env`
/// the provider file says skip hooks or customizations.
pub(crate) fn skips(spec: &HermeticFile, argv: &[String], env: &BTreeMap<String, OsString>) -> SkipFacts {
    let skipping = |arg: &String| {
        spec.skip_flags
            .iter()
            .any(|f| arg == f || arg.strip_prefix(f.as_str()).is_some_and(|rest| rest.starts_with('=')))
    };
    SkipFacts {
        flags: argv.iter().skip(1).filter(|a| skipping(a)).cloned().collect(),
        env: spec.skip_env.iter().filter(|k| env.contains_key(*k)).cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use crate::control::spec_for_test;

    #[test]
    fn hooks_are_installed_where_the_provider_file_says() {
        let t = tempfile::tempdir().unwrap();
        let spec = spec_for_test(r#"config_home_env = "C""#);
        let hooks: HooksFile = toml::from_str(
            r#"format = "settings-json"
               file = "settings.json"
               events = ["PreToolUse", "Stop"]
               tool_events = ["PreToolUse"]
               args = ["hook", "claude-code"]"#,
        )
        .unwrap();
        let scratch = Scratch::make("p", &spec, t.path(), t.path().to_path_buf()).unwrap();
        let facts = impose(&scratch, Some(&hooks), None, Path::new("/usr/bin/sixfold")).unwrap();
        assert!(facts.installed);
        assert_eq!(facts.events.unwrap(), ["PreToolUse", "Stop"]);
        assert_eq!(facts.command.unwrap(), "/usr/bin/sixfold hook claude-code");
        assert!(t.path().join("config/settings.json").is_file());
        let facts = impose(&scratch, None, None, Path::new("/usr/bin/sixfold")).unwrap();
        assert!(!facts.installed && facts.reason.unwrap().contains("[hooks]"));
    }

    #[test]
    fn skipping_flags_and_variables_are_found() {
        let spec = spec_for_test("config_home_env = \"C\"\nskip_flags = [\"--bare\"]\nskip_env = [\"SIMPLE\"]");
        let argv: Vec<String> = ["--bare", "-p", "--bare=1", "--barely"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let env: BTreeMap<String, OsString> = [("SIMPLE".to_string(), OsString::from("1"))].into();
        let facts = skips(&spec, &argv, &env);
        assert_eq!(facts.flags, ["--bare=1"], "the binary itself is not an argument");
        assert_eq!(facts.env, ["SIMPLE"]);
        assert!(skips(&spec, &argv, &BTreeMap::new()).env.is_empty());
    }
}
