//! Setting sources: every source but the scratch config home excluded, by the provider file's
//! `setting_sources_args` (absent: they cannot be, and the row about them says so).

use super::Scratch;
use sixfold_core::launch_facts::SettingSourcesFacts;

/// The arguments that exclude the setting sources, or why there are none.
pub(crate) fn impose(scratch: &Scratch<'_>) -> SettingSourcesFacts {
    match &scratch.spec.setting_sources_args {
        Some(args) => SettingSourcesFacts {
            imposed: true,
            args: Some(args.clone()),
            reason: None,
        },
        None => SettingSourcesFacts {
            imposed: false,
            args: None,
            reason: Some(format!(
                "providers/{}.toml gives no arguments that exclude setting sources (`setting_sources_args`)",
                scratch.provider
            )),
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
    }
}
