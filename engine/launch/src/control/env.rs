//! The environment: built, not inherited. The provider file's allow-list passes through what
//! the operator has set, the launcher sets its own variables (the scratch config home first),
//! and the run adds what it declares (`--env`, `--api-key-env`). Keys are facts; values never.

use super::Scratch;
use crate::error::LaunchError;
use crate::request::EnvArg;
use sixfold_core::launch_facts::EnvFacts;
use std::collections::BTreeMap;
use std::ffi::OsString;

/// The child's environment, and its facts.
#[derive(Debug)]
pub(crate) struct Environment {
    /// Every variable the child gets.
    pub(crate) vars: BTreeMap<String, OsString>,
    /// What the rows see of it.
    pub(crate) facts: EnvFacts,
}

/// Builds the environment from the operator's (`operator` reads one of its variables).
pub(crate) fn impose(
    scratch: &Scratch<'_>,
    operator: &dyn Fn(&str) -> Option<OsString>,
    declared_args: &[EnvArg],
    api_key_env: Option<&str>,
) -> Result<Environment, LaunchError> {
    let spec = scratch.spec;
    let mut vars: BTreeMap<String, OsString> = BTreeMap::new();
    let mut allowed = Vec::new();
    for key in &spec.env_allow {
        if let Some(value) = operator(key) {
            vars.insert(key.clone(), value);
            allowed.push(key.clone());
        }
    }
    let mut set = Vec::new();
    for (key, template) in &spec.env_set {
        vars.insert(key.clone(), OsString::from(scratch.expand(template)));
        set.push(key.clone());
    }
    for (key, value) in spec.setting_sources_env.iter().flatten() {
        vars.insert(key.clone(), OsString::from(value));
        set.push(key.clone());
    }
    vars.insert(
        spec.config_home_env.clone(),
        scratch.config_home.clone().into_os_string(),
    );
    set.push(spec.config_home_env.clone());
    let mut declared = Vec::new();
    for e in declared_args {
        if e.name == spec.config_home_env {
            return Err(LaunchError::new(format!(
                "`--env {}` would replace the scratch config home the launcher makes for the run",
                e.name
            ))
            .hint("declare credentials with `--credentials FILE`; settings come from the scratch config home only"));
        }
        if spec.setting_sources_env.iter().flatten().any(|(k, _)| *k == e.name) {
            return Err(LaunchError::new(format!(
                "`--env {}` would undo what keeps other setting sources out of the run",
                e.name
            ))
            .hint("settings come from the scratch config home and what the run declares only"));
        }
        vars.insert(e.name.clone(), declared_value(e, operator)?);
        declared.push(e.name.clone());
    }
    if let Some(key) = api_key_env {
        if !declared.iter().any(|d| d == key) {
            let value = operator(key).ok_or_else(|| {
                LaunchError::new(format!("`--api-key-env {key}` names a variable that is not set")).hint(format!(
                    "set {key} in sixfold's environment, or pass `--env {key}=…` too"
                ))
            })?;
            vars.insert(key.to_string(), value);
            declared.push(key.to_string());
        }
    }
    set.sort();
    set.dedup();
    let facts = EnvFacts {
        constructed: true,
        keys: vars.keys().cloned().collect(),
        allowed,
        declared,
        set,
        api_key_env: api_key_env.map(str::to_string),
        api_keys_present: spec
            .api_key_env
            .iter()
            .filter(|k| vars.contains_key(*k))
            .cloned()
            .collect(),
    };
    Ok(Environment { vars, facts })
}

/// With `--hermetic off`: the operator's whole environment, with what the run declares over it.
pub(crate) fn inherited(declared_args: &[EnvArg]) -> Result<Vec<(String, OsString)>, LaunchError> {
    let operator = |key: &str| std::env::var_os(key);
    let mut env: Vec<(String, OsString)> = std::env::vars_os()
        .filter_map(|(k, v)| k.into_string().ok().map(|k| (k, v)))
        .collect();
    for e in declared_args {
        let value = declared_value(e, &operator)?;
        env.retain(|(k, _)| k != &e.name);
        env.push((e.name.clone(), value));
    }
    Ok(env)
}

fn declared_value(e: &EnvArg, operator: &dyn Fn(&str) -> Option<OsString>) -> Result<OsString, LaunchError> {
    match &e.value {
        Some(v) => Ok(OsString::from(v)),
        None => operator(&e.name).ok_or_else(|| {
            LaunchError::new(format!("`--env {}` passes a variable that is not set", e.name))
                .hint(format!("set it, or give its value: `--env {}=VALUE`", e.name))
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use crate::control::spec_for_test;

    fn operator(key: &str) -> Option<OsString> {
        match key {
            "PATH" => Some("/bin".into()),
            "SECRET" => Some("s3cret".into()),
            "KEY" => Some("k".into()),
            _ => None,
        }
    }

    #[test]
    fn only_allowed_set_and_declared_keys_reach_the_child() {
        let t = tempfile::tempdir().unwrap();
        let spec = spec_for_test(
            r#"config_home_env = "CFG"
               env_allow = ["PATH", "LANG"]
               env_set = { HOME = "{home}" }
               api_key_env = ["KEY", "OTHER_KEY"]"#,
        );
        let scratch = Scratch::make("p", &spec, t.path(), t.path().to_path_buf()).unwrap();
        let declared = [EnvArg::parse("A=1").unwrap()];
        let env = impose(&scratch, &operator, &declared, Some("KEY")).unwrap();
        assert_eq!(env.facts.keys, ["A", "CFG", "HOME", "KEY", "PATH"]);
        assert_eq!(env.facts.allowed, ["PATH"]);
        assert_eq!(env.facts.set, ["CFG", "HOME"]);
        assert_eq!(env.facts.declared, ["A", "KEY"]);
        assert_eq!(env.facts.api_keys_present, ["KEY"]);
        assert!(env.facts.constructed);
        assert!(!env.vars.contains_key("SECRET"));
        assert_eq!(env.vars["HOME"], t.path().join("home").into_os_string());
    }

    #[test]
    fn what_cannot_be_built_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let spec = spec_for_test(r#"config_home_env = "CFG""#);
        let scratch = Scratch::make("p", &spec, t.path(), t.path().to_path_buf()).unwrap();
        let over = [EnvArg::parse("CFG=/elsewhere").unwrap()];
        assert!(impose(&scratch, &operator, &over, None)
            .unwrap_err()
            .message
            .contains("scratch config home"));
        let unset = [EnvArg::parse("NOT_SET").unwrap()];
        assert!(impose(&scratch, &operator, &unset, None)
            .unwrap_err()
            .message
            .contains("not set"));
        assert!(impose(&scratch, &operator, &[], Some("NOT_SET"))
            .unwrap_err()
            .message
            .contains("not set"));
    }
}
