//! Setting sources: every source but the scratch config home excluded, by the provider file's
//! `setting_sources_args` and `setting_sources_env` (neither: they cannot be, and the row about
//! them says so). The variables are set by the environment control.

use super::Scratch;
use sixfold_core::launch_facts::SettingSourcesFacts;

/// The arguments and variables that exclude the setting sources, or why there are none.
pub(crate) fn impose(scratch: &Scratch<'_>) -> SettingSourcesFacts {
    let spec = scratch.spec;
    let env: Vec<String> = spec
        .setting_sources_env
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    match (&spec.setting_sources_args, env.is_empty()) {
        (None, true) => SettingSourcesFacts {
            imposed: false,
            args: None,
            env,
            reason: Some(format!(
                "providers/{}.toml gives no arguments or variables that exclude setting sources (`setting_sources_args`, `setting_sources_env`)",
                scratch.provider
            )),
        },
        (args, _) => SettingSourcesFacts {
            imposed: true,
            args: Some(args.clone().unwrap_or_default()),
            env,
            reason: None,
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use crate::control::spec_for_test;

    #[test]
    fn the_provider_file_decides() {
        let t = tempfile::tempdir().unwrap();
        let spec = spec_for_test("config_home_env = \"C\"\nsetting_sources_args = [\"--setting-sources=user\"]");
        let scratch = Scratch::make("p", &spec, t.path(), t.path().to_path_buf()).unwrap();
        assert_eq!(impose(&scratch).args.unwrap(), ["--setting-sources=user"]);
        let bare = spec_for_test("config_home_env = \"C\"");
        let scratch = Scratch { spec: &bare, ..scratch };
        let facts = impose(&scratch);
        assert!(!facts.imposed);
        assert!(facts.reason.unwrap().contains("providers/p.toml"));
        let by_env = spec_for_test("config_home_env = \"C\"\nsetting_sources_env = { NO_PROJECT = \"1\" }");
        let scratch = Scratch {
            spec: &by_env,
            ..scratch
        };
        let facts = impose(&scratch);
        assert!(facts.imposed);
        assert_eq!(facts.env, ["NO_PROJECT=1"]);
    }
}
