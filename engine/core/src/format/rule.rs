//! Rules and their examples, written in mode and policy files alike.

use crate::decision::Decision;
use crate::effects::{EffectFields, EffectProfile};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A rule: when its conditions hold (and its script, if any, agrees), it decides.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// Unique within its file.
    pub id: String,
    /// What it decides when it matches.
    pub decision: Decision,
    /// Why, in words a person can read, e.g. "writes outside the workspace".
    pub reason: String,
    /// Conditions over the six fields; all must hold. Empty matches every step. For `reads` and
    /// `writes`, the condition holds when any place the step touches matches any entry: `any`
    /// (anything at all), `workspace` (inside a root), `tmp` (the system temp dir), `outside` (a
    /// known path elsewhere), `unknown` (`*`), `@NAME` (a path set declared in a policy file),
    /// `covers:@NAME` (a place that may hold a member of the set without naming it: `.` holds
    /// `.git/hooks`; an existing directory holds what `**/…` matches below it), or
    /// a path glob (`~/`, `/` or root-relative). A yes/no field holds when the step's equals it.
    #[serde(default)]
    pub when: EffectFields,
    /// Part of the mode's ceiling: where this rule holds, no kept rule, project rule or
    /// approval decides more permissively than it (secrets and protected paths lie outside
    /// every ceiling but `full`'s).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ceiling: bool,
    /// A Rhai file beside this one (path relative to this file).
    #[serde(default)]
    pub script: Option<String>,
    /// The function in `script` to call as `f(effects, context)`: it returns `true` (or a reason
    /// string) when the rule applies, `false` or `()` when it does not.
    #[serde(default)]
    pub function: Option<String>,
}

/// An example of judgement: effects (and context) in, decision out.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgementExample {
    /// What the example shows, for the report when it fails.
    #[serde(default)]
    pub note: Option<String>,
    /// The mode to judge with. In a mode file, that mode; in a policy file, absent means the
    /// policy's rules alone, with `allow` where none matches.
    #[serde(default)]
    pub mode: Option<String>,
    /// The step's effects. Paths resolve against an example workspace: the primary root is
    /// `/workspace`, home is `/home/user`, the temp dir is `/tmp`.
    #[serde(default)]
    pub effects: EffectProfile,
    /// Extra context handed to scripts.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub context: BTreeMap<String, toml::Value>,
    /// The expected decision.
    pub decision: Decision,
}
