//! sixfold's plugin for OpenCode and the permission rule beside it, as text: one source for both
//! users of them, `sixfold install opencode` (a project's or the user's config directory) and
//! the hermetic launcher (a scratch config directory). It does no I/O.
//!
//! OpenCode skips a plugin that fails to load and then runs every tool, so the plugin alone would
//! fail open. The directory's `opencode.json` therefore gets a permission rule for every tool,
//! `"*": {"<marker>": "deny", "*": "deny"}` (OpenCode then offers the model no tool at all), and
//! the plugin's `config` hook deletes exactly that rule once it has loaded. The rule goes last in
//! the `permission` map: OpenCode applies the last rule that matches, so the user's own rules
//! before it cannot let a tool through while the plugin is missing. The file is edited keeping
//! its keys in their order (the order of permission rules is their meaning).

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// The plugin's text, with `__SIXFOLD_HOOK_COMMAND__` and `__SIXFOLD_MARKER__` to fill in.
const PLUGIN: &str = include_str!("opencode_plugin.js");

/// The first line of sixfold's plugin: how uninstall knows the file is sixfold's.
const PLUGIN_HEADER: &str = "// sixfold's plugin for OpenCode:";

/// The pattern of the deny-all rule that says why every tool is denied, and marks it sixfold's.
pub const MARKER: &str = "sixfold: the plugin did not load";

/// The configuration file install edits, in the config directory.
pub const CONFIG_FILE: &str = "opencode.json";

/// The plugin's text running `command` (the hook command, run by `/bin/sh`).
pub fn plugin_text(command: &str) -> String {
    let quoted = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    PLUGIN
        .replace("__SIXFOLD_HOOK_COMMAND__", &quoted(command))
        .replace("__SIXFOLD_MARKER__", &quoted(MARKER))
}

/// Whether a plugin file's text is sixfold's.
pub fn is_sixfold_plugin(text: &str) -> bool {
    text.starts_with(PLUGIN_HEADER)
}

/// A JSON value whose objects keep their keys in the order they were written.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(n)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("a number JSON cannot hold"))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Json, E> {
                Ok(Json::String(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut entries: Vec<(String, Json)> = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Json>()? {
                    // A repeated key: the last one counts, as for every JSON reader.
                    entries.retain(|(k, _)| *k != key);
                    entries.push((key, value));
                }
                Ok(Json::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// The deny-all rule: `{"<marker>": "deny", "*": "deny"}` for the permission `*`.
fn deny_all() -> Json {
    Json::Object(vec![
        (MARKER.into(), Json::String("deny".into())),
        ("*".into(), Json::String("deny".into())),
    ])
}

fn parse(text: &str) -> Result<Vec<(String, Json)>, String> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    match serde_json::from_str::<Json>(text) {
        Ok(Json::Object(entries)) => Ok(entries),
        Ok(_) => Err("it is not a JSON object".into()),
        Err(e) => Err(format!(
            "it is not JSON that sixfold can edit ({e}); OpenCode's comments and trailing commas are not kept"
        )),
    }
}

fn print(entries: Vec<(String, Json)>) -> Result<String, String> {
    let text = serde_json::to_string_pretty(&Json::Object(entries)).map_err(|e| format!("cannot write JSON: {e}"))?;
    Ok(format!("{text}\n"))
}

/// The config file's text with the deny-all rule last in its `permission` map. Unchanged where
/// the rule is there already; an error where the file's `permission` is one word for every tool
/// or has a `*` rule of its own (sixfold would replace it, and lifting it would widen it).
pub fn deny_text(text: &str) -> Result<String, String> {
    let mut root = parse(text)?;
    let position = root.iter().position(|(k, _)| k == "permission");
    let rules = match position.and_then(|i| root.get_mut(i)) {
        None => {
            root.push(("permission".into(), Json::Object(vec![("*".into(), deny_all())])));
            return print(root);
        }
        Some((_, Json::Object(rules))) => rules,
        Some(_) => {
            return Err(
                "its `permission` is one word for every tool; write it as `{\"*\": \"<word>\"}` rules per tool first, and sixfold adds its own after them"
                    .into(),
            )
        }
    };
    match rules.iter().find(|(k, _)| k == "*") {
        Some((_, rule)) if *rule == deny_all() => {
            if rules.last().is_some_and(|(k, _)| k == "*") {
                return Ok(text.to_string());
            }
            // Not last: a rule after it would let a tool through while the plugin is missing.
            rules.retain(|(k, _)| k != "*");
        }
        Some(_) => {
            return Err(
                "its `permission` has a `*` rule of its own; sixfold denies every tool with a `*` rule until its plugin has loaded, so move yours to the tools it is about first"
                    .into(),
            )
        }
        None => {}
    }
    rules.push(("*".into(), deny_all()));
    print(root)
}

/// The config file's text without the deny-all rule (and without `permission` if nothing else
/// is in it); `None` where nothing is left in the file at all.
pub fn lift_text(text: &str) -> Result<Option<String>, String> {
    let mut root = parse(text)?;
    let mut changed = false;
    if let Some((_, Json::Object(rules))) = root.iter_mut().find(|(k, _)| k == "permission") {
        let before = rules.len();
        rules.retain(|(k, v)| !(k == "*" && *v == deny_all()));
        changed = rules.len() != before;
        if changed && rules.is_empty() {
            root.retain(|(k, _)| k != "permission");
        }
    }
    if !changed {
        return Ok(Some(text.to_string()));
    }
    if root.is_empty() {
        return Ok(None);
    }
    print(root).map(Some)
}

/// Whether a config file's text has a `*` permission rule (a file that is not plain JSON: whether
/// its text names one at all, so a commented file is not taken for one without).
pub fn has_star_rule(text: &str) -> bool {
    match parse(text) {
        Ok(root) => root
            .iter()
            .any(|(k, v)| k == "permission" && matches!(v, Json::Object(rules) if rules.iter().any(|(k, _)| k == "*"))),
        Err(_) => text.contains("\"*\""),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use serde_json::Value;

    fn keys(text: &str) -> Vec<String> {
        let Json::Object(root) = serde_json::from_str::<Json>(text).unwrap() else {
            panic!()
        };
        let Some((_, Json::Object(rules))) = root.into_iter().find(|(k, _)| k == "permission") else {
            panic!()
        };
        rules.into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn the_deny_all_rule_goes_last_and_the_users_rules_keep_their_order() {
        let mine = r#"{"model": "x/y", "permission": {"webfetch": "allow", "bash": {"git *": "allow", "*": "ask"}, "edit": "allow"}}"#;
        let denied = deny_text(mine).unwrap();
        assert_eq!(keys(&denied), ["webfetch", "bash", "edit", "*"]);
        // The user's pattern rules keep their order too (it is their meaning).
        let v: Value = serde_json::from_str(&denied).unwrap();
        assert_eq!(v["permission"]["*"][MARKER], "deny");
        assert!(
            denied.contains("\"git *\": \"allow\",\n      \"*\": \"ask\""),
            "{denied}"
        );
        assert_eq!(deny_text(&denied).unwrap(), denied, "installing twice changes nothing");
        let lifted = lift_text(&denied).unwrap().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&lifted).unwrap(),
            serde_json::from_str::<Value>(mine).unwrap()
        );
        assert_eq!(
            serde_json::from_str::<Json>(&lifted).unwrap(),
            serde_json::from_str::<Json>(mine).unwrap()
        );
        // A rule of sixfold's that is not last is moved last.
        let moved =
            r#"{"permission": {"*": {"sixfold: the plugin did not load": "deny", "*": "deny"}, "bash": "allow"}}"#;
        assert_eq!(keys(&deny_text(moved).unwrap()), ["bash", "*"]);
    }

    #[test]
    fn a_file_install_created_is_removed_by_uninstall() {
        for empty in ["", "  \n", "{}"] {
            let denied = deny_text(empty).unwrap();
            assert_eq!(keys(&denied), ["*"]);
            assert_eq!(lift_text(&denied).unwrap(), None, "{empty:?}");
        }
        // Nothing of sixfold's: unchanged, byte for byte.
        let theirs = "{\"permission\":{\"*\":\"deny\"}}";
        assert_eq!(lift_text(theirs).unwrap().as_deref(), Some(theirs));
    }

    #[test]
    fn what_sixfold_cannot_add_to_safely_is_refused() {
        for text in [
            r#"{"permission": "allow"}"#,
            r#"{"permission": {"*": "ask", "bash": "allow"}}"#,
            r#"{"permission": {"*": "deny"}}"#,
            "[1]",
            "{\"a\": 1, // note\n}",
        ] {
            assert!(deny_text(text).is_err(), "{text}");
        }
        // A `*` rule inside one tool's patterns is the user's and stays.
        assert!(deny_text(r#"{"permission": {"bash": {"*": "ask"}}}"#).is_ok());
    }

    #[test]
    fn the_plugin_runs_the_hook_command_as_written() {
        let text = plugin_text("'/opt/my tools/sixfold' hook opencode");
        assert!(is_sixfold_plugin(&text));
        assert!(
            text.contains(r#"const COMMAND = "'/opt/my tools/sixfold' hook opencode";"#),
            "{text}"
        );
        assert!(text.contains(&format!("const MARKER = \"{MARKER}\";")));
        assert!(!text.contains("__SIXFOLD"));
        // Once loaded it marks the resolved configuration with its own file (the launcher's H8).
        assert!(text.contains("cfg.sixfold_plugin = import.meta.url;"), "{text}");
        assert!(!is_sixfold_plugin("export const mine = async () => ({});"));
    }
}
