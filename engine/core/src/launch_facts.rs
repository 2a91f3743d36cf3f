//! The launch facts: what the hermetic launcher imposed on a run, held before spawning, as the
//! rows read them under `facts.launch`.
//!
//! Vendor-neutral: which variables, flags and files these are is data in the provider file; the
//! launch layer builds the facts (each control contributing its part) and serialises them. The
//! JSON Schema of [`LaunchFacts`] is published (`sixfold schema launch-facts`), and the launch
//! rows' examples are checked against it where they are run (`sixfold check`, CI:
//! [`check_example`]), so row scripts and the launcher cannot drift apart. Not at every load: making
//! the schema costs about 0.4 ms, which a hook that never runs an example should not pay.

use crate::verdict::Strictness;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::OnceLock;

/// What the launcher imposed on a hermetic run: `facts.launch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchFacts {
    /// The strictness the run was launched under.
    pub hermetic: Strictness,
    /// The vendor's CLI, as an absolute path.
    pub binary: String,
    /// The argv the vendor is started with, its binary first.
    pub argv: Vec<String>,
    /// The directory the vendor is started in.
    pub cwd: String,
    /// Where that directory came from.
    pub workdir: WorkdirFacts,
    /// The child's environment: keys only, never a value.
    pub env: EnvFacts,
    /// The scratch config home.
    pub config_home: ConfigHomeFacts,
    /// The scratch `HOME` made for the run.
    pub home: String,
    /// The credentials file, when one was declared.
    pub credentials: CredentialsFacts,
    /// The exact MCP set.
    pub mcp: McpFacts,
    /// The exclusion of setting sources.
    pub setting_sources: SettingSourcesFacts,
    /// The declared plugins.
    pub plugins: Vec<PluginFacts>,
    /// Their names: the set the vendor's record must show.
    pub plugin_names: Vec<String>,
    /// sixfold's own hooks in the scratch config home.
    pub hooks: HooksFacts,
    /// What in the argv or environment skips hooks or customizations.
    pub skips: SkipFacts,
    /// The vendor's version, pinned.
    pub pin: PinFacts,
    /// The walk above the working directory for memory files.
    pub memory_walk: MemoryWalkFacts,
    /// The policy bundle that governs sixfold's hooks in the run.
    pub bundle: BundleFacts,
    /// The governed controls, when the run is governed (`--governed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governed: Option<GovernedFacts>,
}

/// Where the run works.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum WorkdirFacts {
    /// A fresh copy of a tree, made inside the run directory.
    Copy {
        /// The copy.
        path: String,
        /// The tree it was copied from.
        source: String,
        /// What the copy made.
        copy: CopyFacts,
    },
    /// A directory used in place.
    Root {
        /// The directory.
        path: String,
        /// Whether the run declared it (`--root`), or it is where sixfold was launched.
        declared: bool,
    },
}

/// What a copy of the working tree made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CopyFacts {
    /// Files copied.
    pub files: u64,
    /// Directories made.
    pub dirs: u64,
    /// Symbolic links recreated as links.
    pub symlinks: u64,
    /// Of those, links whose target lies outside the copied tree (the copy still reaches them).
    pub symlinks_outside: Vec<String>,
    /// Bytes copied.
    pub bytes: u64,
}

/// The child's environment, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvFacts {
    /// Built by the launcher (true), or inherited from the operator.
    pub constructed: bool,
    /// Every key the child gets.
    pub keys: Vec<String>,
    /// Keys passed through from the provider file's allow-list.
    pub allowed: Vec<String>,
    /// Keys the run declared (`--env`, `--api-key-env`).
    pub declared: Vec<String>,
    /// Keys the launcher set itself.
    pub set: Vec<String>,
    /// The one variable the run declared may carry an API key.
    pub api_key_env: Option<String>,
    /// The provider file's API-key variables the child has.
    pub api_keys_present: Vec<String>,
}

/// The config home the vendor reads its settings from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigHomeFacts {
    /// The variable that points the vendor at it.
    pub var: String,
    /// The directory.
    pub path: String,
    /// Made for the run (true), or the operator's.
    pub scratch: bool,
}

/// A declared credentials file, copied into the scratch config home.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CredentialsFacts {
    /// Whether the run declared one.
    pub declared: bool,
    /// The file it was copied from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Where it was copied to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied_to: Option<String>,
}

/// A governed run: the vendor's own tools off, sixfold's governed tools served instead.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GovernedFacts {
    /// Whether the governed controls were imposed.
    pub imposed: bool,
    /// The arguments that impose them.
    pub args: Vec<String>,
    /// The MCP servers serving sixfold's tools (and its approval tool).
    pub servers: Vec<String>,
    /// The files written for it (an MCP config, a model catalog).
    pub files: Vec<String>,
    /// Prefixes of the tool names the model may be offered; any other tool is a built-in one.
    pub offered_prefixes: Vec<String>,
    /// The mode the tools are pinned to; absent, the project's active mode is followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The session the tools record under.
    pub session: String,
}

/// The MCP servers the vendor is given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpFacts {
    /// Whether the set was imposed as exactly these servers.
    pub imposed: bool,
    /// The servers' names.
    pub servers: Vec<String>,
    /// The MCP config file the launcher wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
    /// The arguments that impose it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// The file the run declared (`--mcp-config`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared: Option<String>,
    /// Why it was not imposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The exclusion of setting sources other than the scratch config home.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingSourcesFacts {
    /// Whether they were excluded.
    pub imposed: bool,
    /// The arguments that exclude them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// The variables that exclude them (`KEY=VALUE`), set in the run's environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Why they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A declared plugin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PluginFacts {
    /// Its name.
    pub name: String,
    /// Its directory, when the run gave one to load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// sixfold's own hooks in the scratch config home.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HooksFacts {
    /// Whether they were written and read back.
    pub installed: bool,
    /// The settings file they are in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The events they are registered for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
    /// The command each event runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Why they were not installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The vendor's record field that must say they loaded (`loaded`), where the vendor skips
    /// hooks it cannot load (OpenCode's plugin): written is not enough there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_by: Option<String>,
}

/// What the run passes that skips hooks or customizations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkipFacts {
    /// Arguments in the argv the provider file says skip them.
    pub flags: Vec<String>,
    /// Variables in the environment the provider file says skip them.
    pub env: Vec<String>,
}

/// The vendor's version and the pin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PinFacts {
    /// The version the run pins: declared, else the one found at launch.
    pub version: Option<String>,
    /// Whether the run declared it (`--pin`).
    pub declared: bool,
    /// The version the binary gave at launch.
    pub found: Option<String>,
    /// Why none could be found.
    pub found_error: Option<String>,
}

/// A walk of the directories above the working directory for memory files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryWalkFacts {
    /// The working directory the walk started from.
    pub from: String,
    /// The directories looked in, nearest first.
    pub dirs: Vec<String>,
    /// The memory files looked for.
    pub names: Vec<String>,
    /// The memory files found.
    pub found: Vec<String>,
}

/// The policy bundle that governs sixfold's hooks in the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BundleFacts {
    /// The directory holding the nearest `.sixfold/`, if any.
    pub project: Option<String>,
    /// Whether it lies inside the working directory.
    pub inside: bool,
    /// Whether the launcher made its `.sixfold/` (a copy gets one of its own).
    pub made: bool,
    /// What governs the run when no `.sixfold/` does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The help line of a diagnostic from [`check_example`].
pub const EXAMPLE_HINT: &str =
    "an example's `launch` facts are typed: see `sixfold schema launch-facts` (docs/schema/launch-facts.json)";

/// The JSON Schema of [`LaunchFacts`], made once.
pub fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::to_value(schemars::schema_for!(LaunchFacts)).unwrap_or_default())
}

/// Checks the value a row example writes under `facts.launch` against [`LaunchFacts`]. An
/// example gives only what its row reads, so nothing is required; every key it writes must be a
/// field of the launch facts, with the right type. The error names the key and what was wrong.
///
/// ```
/// use serde_json::json;
/// use sixfold_core::launch_facts::check_example;
/// assert!(check_example(&json!({ "config_home": { "scratch": true } })).is_ok());
/// let err = check_example(&json!({ "config_home": { "scrach": true } })).unwrap_err();
/// assert!(err.contains("`facts.launch.config_home.scrach` is not a launch fact"), "{err}");
/// assert!(check_example(&json!({ "argv": "claude -p" })).is_err());
/// ```
pub fn check_example(launch: &Value) -> Result<(), String> {
    let schema = schema();
    // INVARIANT (fail closed): without a schema to check against, no example passes.
    if !schema.is_object() {
        return Err("the launch facts' schema could not be made".into());
    }
    let defs = schema.get("$defs").and_then(Value::as_object);
    fits(launch, schema, defs, "facts.launch")
}

/// Whether `value` fits `schema`, with every property optional.
fn fits(value: &Value, schema: &Value, defs: Option<&Map<String, Value>>, at: &str) -> Result<(), String> {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let name = target.rsplit('/').next().unwrap_or_default();
        // INVARIANT (fail closed): a reference the schema cannot resolve rejects the example
        // rather than letting it through unchecked.
        let def = defs
            .and_then(|d| d.get(name))
            .ok_or_else(|| format!("`{at}`: the launch facts' schema has no `{name}`"))?;
        return fits(value, def, defs, at);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let errors: Vec<String> = branches.iter().filter_map(|b| fits(value, b, defs, at).err()).collect();
            if errors.len() < branches.len() {
                return Ok(());
            }
            // One branch that is not `null` explains itself best; several, by the first.
            return Err(errors
                .into_iter()
                .next()
                .unwrap_or_else(|| format!("`{at}` fits no form")));
        }
    }
    if let Some(want) = schema.get("type") {
        let allowed: Vec<&str> = match want {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !allowed.is_empty() && !allowed.iter().any(|t| is_type(value, t)) {
            let wanted: Vec<&str> = allowed.iter().filter(|t| **t != "null").map(|t| article(t)).collect();
            return Err(format!(
                "`{at}` is {}, and the launch facts have it as {}",
                article(type_name(value)),
                wanted.join(" or ")
            ));
        }
    }
    if let Some(constant) = schema.get("const") {
        if constant != value {
            return Err(format!("`{at}` is {value}, and the launch facts have it as {constant}"));
        }
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        if !choices.contains(value) {
            let shown: Vec<String> = choices.iter().map(Value::to_string).collect();
            return Err(format!(
                "`{at}` is {value}, and the launch facts have it as one of {}",
                shown.join(", ")
            ));
        }
    }
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let other = schema.get("additionalProperties").filter(|a| a.is_object());
            for (key, item) in map {
                let here = format!("{at}.{key}");
                match (properties.and_then(|p| p.get(key)), other) {
                    (Some(s), _) | (None, Some(s)) => fits(item, s, defs, &here)?,
                    (None, None) => {
                        let known: Vec<&str> = properties
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        let near = nearest(key, &known)
                            .map(|k| format!(" (did you mean `{k}`?)"))
                            .unwrap_or_default();
                        return Err(format!("`{here}` is not a launch fact{near}"));
                    }
                }
            }
            Ok(())
        }
        Value::Array(items) => match schema.get("items") {
            Some(s) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, item)| fits(item, s, defs, &format!("{at}[{i}]"))),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

fn is_type(value: &Value, name: &str) -> bool {
    match name {
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        other => type_name(value) == other,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn article(name: &str) -> &'static str {
    match name {
        "boolean" => "a boolean",
        "integer" => "an integer",
        "number" => "a number",
        "string" => "a string",
        "array" => "a list",
        "object" => "a table",
        _ => "null",
    }
}

/// The known key closest to a misspelt one, if it is close.
fn nearest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (distance(key, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

/// Edit distance (insertions, deletions, substitutions).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let above = row.get(j + 1).copied().unwrap_or(0);
            let left = row.get(j).copied().unwrap_or(0);
            let cost = usize::from(ca != *cb);
            let best = (above + 1).min(left + 1).min(diagonal + cost);
            diagonal = above;
            if let Some(cell) = row.get_mut(j + 1) {
                *cell = best;
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use serde_json::json;

    fn whole() -> LaunchFacts {
        LaunchFacts {
            hermetic: Strictness::Strict,
            binary: "/bin/agent".into(),
            argv: vec!["/bin/agent".into(), "-p".into()],
            cwd: "/tmp/run/work".into(),
            workdir: WorkdirFacts::Copy {
                path: "/tmp/run/work".into(),
                source: "/src".into(),
                copy: CopyFacts::default(),
            },
            env: EnvFacts::default(),
            config_home: ConfigHomeFacts::default(),
            home: "/tmp/run/home".into(),
            credentials: CredentialsFacts::default(),
            mcp: McpFacts::default(),
            setting_sources: SettingSourcesFacts::default(),
            plugins: vec![PluginFacts {
                name: "p".into(),
                path: None,
            }],
            plugin_names: vec!["p".into()],
            hooks: HooksFacts::default(),
            skips: SkipFacts::default(),
            pin: PinFacts::default(),
            memory_walk: MemoryWalkFacts::default(),
            bundle: BundleFacts::default(),
            governed: None,
        }
    }

    #[test]
    fn whole_facts_fit_their_own_schema_and_read_back() {
        let facts = whole();
        let value = serde_json::to_value(&facts).unwrap();
        check_example(&value).unwrap();
        assert_eq!(value["workdir"]["kind"], "copy");
        assert_eq!(value["hermetic"], "strict");
        let back: LaunchFacts = serde_json::from_value(value).unwrap();
        assert_eq!(back, facts);
    }

    #[test]
    fn partial_facts_fit() {
        for example in [
            json!({}),
            json!({ "workdir": { "kind": "copy" } }),
            json!({ "workdir": { "kind": "root", "declared": true } }),
            json!({ "pin": { "declared": false, "found_error": "exited with 1" } }),
            json!({ "plugins": [{ "name": "x" }], "env": { "api_key_env": "KEY" } }),
            json!({ "hooks": { "installed": false, "reason": "none" }, "skips": { "flags": [], "env": [] } }),
        ] {
            check_example(&example).unwrap_or_else(|e| panic!("{example}: {e}"));
        }
    }

    #[test]
    fn misspelt_or_mistyped_facts_are_named() {
        let err = check_example(&json!({ "config_hom": { "scratch": true } })).unwrap_err();
        assert_eq!(
            err,
            "`facts.launch.config_hom` is not a launch fact (did you mean `config_home`?)"
        );
        let err = check_example(&json!({ "env": { "keys": "PATH" } })).unwrap_err();
        assert_eq!(
            err,
            "`facts.launch.env.keys` is a string, and the launch facts have it as a list"
        );
        let err = check_example(&json!({ "plugins": [{ "name": 3 }] })).unwrap_err();
        assert_eq!(
            err,
            "`facts.launch.plugins[0].name` is a number, and the launch facts have it as a string"
        );
        let err = check_example(&json!({ "workdir": { "kind": "elsewhere" } })).unwrap_err();
        assert!(err.contains("`facts.launch.workdir.kind`"), "{err}");
        let err = check_example(&json!({ "hermetic": "sometimes" })).unwrap_err();
        assert!(err.contains("`facts.launch.hermetic`"), "{err}");
        assert!(check_example(&json!("launch")).is_err());
    }

    #[test]
    fn near_keys_are_suggested_and_far_ones_not() {
        assert_eq!(nearest("scrach", &["scratch", "path"]), Some("scratch"));
        assert_eq!(nearest("colour", &["scratch", "path"]), None);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
