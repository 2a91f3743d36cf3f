//! Kept rules: approvals that became act rules, in the project's `.sixfold/policies/kept.toml`
//! (an ordinary policy file, so `sixfold check` validates it and judgement reads it next time).

use serde::{Deserialize, Serialize};
use sixfold_core::decision::Decision;
use sixfold_core::format::ActRuleFile;
use sixfold_core::names::{Kind, Unknown};
use std::path::{Path, PathBuf};

/// A kept-rules file larger than this is refused (the same bound as any bundle file).
const MAX_KEPT_BYTES: u64 = 1024 * 1024;

/// The policy id of the kept rules.
pub const POLICY: &str = "kept";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeptFile {
    id: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    acts: Vec<ActRuleFile>,
}

/// Where kept rules live.
pub fn path(project: &Path) -> PathBuf {
    crate::project::dir(project).join("policies").join("kept.toml")
}

/// What kind of act a rule names, guessed from its text: a domain (`crates.io`), a path glob
/// (anything with `/`, `*` or a leading `.`/`~`), else a command prefix.
pub fn classify_act(act: &str) -> &'static str {
    let looks_like_domain = !act.contains(' ')
        && !act.contains('/')
        && act.contains('.')
        && !act.starts_with('.')
        && act
            .split('.')
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        && act
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.chars().all(|c| c.is_ascii_alphabetic()));
    if looks_like_domain {
        "domain"
    } else if act.contains('/') || act.contains('*') || act.starts_with('.') || act.starts_with('~') {
        "path"
    } else {
        "command"
    }
}

fn load(project: &Path) -> Result<KeptFile, String> {
    let file = path(project);
    match sixfold_core::bounded::read_text(&file, MAX_KEPT_BYTES) {
        Ok(text) => toml::from_str(&text).map_err(|e| format!("`{}` cannot be read: {}", file.display(), e.message())),
        Err(sixfold_core::bounded::ReadError::Missing) => Ok(KeptFile {
            id: POLICY.into(),
            description: Some("Rules kept from approvals (`sixfold rules add`).".into()),
            acts: Vec::new(),
        }),
        Err(e) => Err(format!("`{}` cannot be read: {e}", file.display())),
    }
}

fn save(project: &Path, kept: &KeptFile) -> Result<(), String> {
    let file = path(project);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let text = toml::to_string_pretty(kept).map_err(|e| format!("cannot write the rules: {e}"))?;
    let header =
        "#:schema ../schema/policy.json\n# Kept by `sixfold rules add`; edit with `sixfold rules add|remove`.\n";
    let tmp = file.with_extension(format!("toml.{}", std::process::id()));
    std::fs::write(&tmp, format!("{header}{text}")).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &file).map_err(|e| format!("cannot write `{}`: {e}", file.display()))
}

/// Adds a rule; returns its id.
pub fn add(project: &Path, decision: Decision, act: &str, mode: Option<&str>) -> Result<String, String> {
    let act = act.trim();
    if act.is_empty() {
        return Err("the act is empty".into());
    }
    let mut kept = load(project)?;
    let n = kept
        .acts
        .iter()
        .filter_map(|a| a.id.strip_prefix("rule-").and_then(|n| n.parse::<u64>().ok()))
        .max()
        .unwrap_or(0)
        + 1;
    let id = format!("rule-{n}");
    let kind = classify_act(act);
    kept.acts.push(ActRuleFile {
        id: id.clone(),
        decision,
        command: (kind == "command").then(|| act.to_string()),
        path: (kind == "path").then(|| act.to_string()),
        domain: (kind == "domain").then(|| act.to_string()),
        modes: mode.map(|m| vec![m.to_string()]),
        note: None,
    });
    save(project, &kept)?;
    Ok(format!("{POLICY}/{id}"))
}

/// The kept rules.
pub fn list(project: &Path) -> Result<Vec<ActRuleFile>, String> {
    Ok(load(project)?.acts)
}

/// Why a kept rule was not removed.
#[derive(Debug)]
pub enum NotRemoved {
    /// There is no kept rule of that id.
    Unknown(Unknown),
    /// The kept rules could not be read or written.
    Failed(String),
}

/// Removes a rule by id (`rule-3` or `kept/rule-3`).
pub fn remove(project: &Path, id: &str) -> Result<(), NotRemoved> {
    let id = id.strip_prefix("kept/").unwrap_or(id);
    let mut kept = load(project).map_err(NotRemoved::Failed)?;
    let before = kept.acts.len();
    let ids: Vec<String> = kept.acts.iter().map(|a| a.id.clone()).collect();
    kept.acts.retain(|a| a.id != id);
    if kept.acts.len() == before {
        return Err(NotRemoved::Unknown(Unknown::new(Kind::Rule, id, ids)));
    }
    save(project, &kept).map_err(NotRemoved::Failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acts_are_told_apart() {
        assert_eq!(classify_act("crates.io"), "domain");
        assert_eq!(classify_act("cargo test"), "command");
        assert_eq!(classify_act("src/**"), "path");
        assert_eq!(classify_act(".env"), "path");
        assert_eq!(classify_act("make"), "command");
        assert_eq!(classify_act("v1.2"), "command");
    }

    #[test]
    fn add_list_remove() {
        let t = tempfile::tempdir().unwrap();
        let id = add(t.path(), Decision::Allow, "cargo test", Some("ask")).unwrap();
        assert_eq!(id, "kept/rule-1");
        add(t.path(), Decision::Refuse, "docs/**", None).unwrap();
        let rules = list(t.path()).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[1].path.as_deref(), Some("docs/**"));
        remove(t.path(), "kept/rule-1").unwrap();
        assert_eq!(list(t.path()).unwrap().len(), 1);
        assert!(remove(t.path(), "rule-9").is_err());
        let (bundle, d) = crate::load_bundle(t.path());
        assert!(d.is_empty(), "{d:#?}");
        assert_eq!(bundle.act_rules().len(), 1);
    }
}
