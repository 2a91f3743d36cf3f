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
    env: &BTreeMap<String, OsString>,
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
    refuse_earlier_star_rules(scratch, spec, env)?;
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

/// Config files larger than this are not read: they are the run's, untrusted.
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// Refuses a configuration file the run declares (a variable of `launch_config_env`) that the
/// agent CLI merges before the hooks' own and that has a `*` permission rule: the deny-all rule
/// would keep that rule's place, so the run's rules after it could let a tool through while
/// sixfold's plugin is missing. A file that cannot be read is refused too; one that is not
/// there is nothing the CLI reads.
fn refuse_earlier_star_rules(
    scratch: &Scratch<'_>,
    spec: &HooksFile,
    env: &BTreeMap<String, OsString>,
) -> Result<(), LaunchError> {
    for name in &spec.launch_config_env {
        let Some(value) = env.get(name) else { continue };
        // A relative path is the CLI's, from the directory it starts in.
        let path = scratch.workdir.join(value);
        let text = match sixfold_core::bounded::read_text(&path, MAX_CONFIG_BYTES) {
            Ok(text) => text,
            Err(sixfold_core::bounded::ReadError::Missing) => continue,
            Err(e) => {
                return Err(LaunchError::new(format!(
                    "cannot read `{}` (`{name}`), so whether it undoes sixfold's deny-all rule is unknown: {e}",
                    path.display()
                )))
            }
        };
        if sixfold_core::hook_opencode::has_star_rule(&text) {
            return Err(LaunchError::new(format!(
                "`{}` (`{name}`) has a `*` permission rule; it is merged before sixfold's deny-all rule, which would then keep its place, and the rules after it could let a tool through while sixfold's plugin is missing",
                path.display()
            ))
            .hint("remove that rule (OpenCode allows what no rule names) or give the tools it is about their own rules"));
        }
    }
    Ok(())
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
        let facts = impose(
            &scratch,
            Some(&hooks),
            None,
            &BTreeMap::new(),
            Path::new("/usr/bin/sixfold"),
        )
        .unwrap();
        assert!(facts.installed);
        assert_eq!(facts.events.unwrap(), ["PreToolUse", "Stop"]);
        assert_eq!(facts.command.unwrap(), "/usr/bin/sixfold hook claude-code");
        assert!(t.path().join("config/settings.json").is_file());
        let facts = impose(&scratch, None, None, &BTreeMap::new(), Path::new("/usr/bin/sixfold")).unwrap();
        assert!(!facts.installed && facts.reason.unwrap().contains("[hooks]"));
    }

    #[test]
    fn a_declared_config_with_a_star_rule_is_refused_before_the_plugin_goes_in() {
        let t = tempfile::tempdir().unwrap();
        let spec = spec_for_test(r#"config_home_env = "C""#);
        let hooks: HooksFile = toml::from_str(
            r#"format = "opencode-plugin"
               file = "plugin/sixfold.js"
               events = ["tool.execute.before"]
               args = ["hook", "opencode"]
               launch_config_env = ["OPENCODE_CONFIG"]"#,
        )
        .unwrap();
        let work = t.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let scratch = Scratch::make("p", &spec, t.path(), work.clone()).unwrap();
        let exe = Path::new("/usr/bin/sixfold");
        let env = |v: &str| BTreeMap::from([("OPENCODE_CONFIG".to_string(), OsString::from(v))]);
        std::fs::write(
            work.join("star.json"),
            r#"{"permission": {"*": "allow", "bash": "allow"}}"#,
        )
        .unwrap();
        std::fs::write(
            work.join("mine.json"),
            r#"{"model": "a/b", "permission": {"bash": {"*": "ask"}}}"#,
        )
        .unwrap();
        let err = impose(&scratch, Some(&hooks), None, &env("star.json"), exe).unwrap_err();
        assert!(err.to_string().contains("`*` permission rule"), "{err}");
        assert!(
            !t.path().join("config/plugin/sixfold.js").exists(),
            "refused before anything is written"
        );
        std::fs::create_dir_all(work.join("dir.json")).unwrap();
        assert!(
            impose(&scratch, Some(&hooks), None, &env("dir.json"), exe).is_err(),
            "not a regular file"
        );
        // Rules for the tools they are about stay the run's; an absent file is not read.
        for ok in ["mine.json", "absent.json"] {
            let facts = impose(&scratch, Some(&hooks), None, &env(ok), exe).unwrap();
            assert!(facts.installed, "{ok}");
        }
        assert!(t.path().join("config/plugin/sixfold.js").is_file());
        // Any other variable is not the provider file's.
        let other = BTreeMap::from([("OTHER".to_string(), OsString::from("star.json"))]);
        assert!(impose(&scratch, Some(&hooks), None, &other, exe).is_ok());
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
