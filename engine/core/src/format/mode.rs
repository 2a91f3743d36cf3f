//! A mode file: `modes/ID.toml`, or `modes/ID.md` with TOML front matter.

use super::rule::{JudgementExample, RuleFile};
use super::Spanned;
use crate::decision::Decision;
use crate::effects::EffectFields;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A mode: a policy (what runs, what asks, what is refused, judged by effects), a behaviour and a
/// presentation. Written as `modes/ID.toml`, or `modes/ID.md` with this as TOML front matter
/// between `+++` lines and the role prompt as the body.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeFile {
    /// The mode's id: lowercase words joined by `-`. The file's name must be the id.
    pub id: String,
    /// A short name for people.
    #[serde(default)]
    pub name: Option<String>,
    /// One or two sentences on what the mode is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Another mode this one narrows: its ceiling, rules and default are inherited, and this
    /// mode may only make them stricter (checked when the bundle loads).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub extends: Option<Spanned<String>>,
    /// The decision when no rule matches (inherited when extending; `refuse` otherwise).
    #[serde(default)]
    pub default: Option<Decision>,
    /// The environment this mode needs (what a sandbox must enforce around a command), by the
    /// name of an `[environments.NAME]` table in a policy file, e.g. `workspace-write`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub environment: Option<Spanned<String>>,
    /// Ids of policies whose rules this mode applies, e.g. `["secrets", "protected"]`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub include: Vec<Spanned<String>>,
    /// The widest effects the mode admits; a step beyond it is refused before any rule runs.
    /// A field left out is not limited: `reads`/`writes` the most it may read or write (`["*"]`
    /// for anything, `[]` for nothing), `reaches`/`costs` `false` to refuse a step that does,
    /// `reversible`/`contained` `true` to admit only steps that are.
    #[serde(default)]
    pub ceiling: Option<EffectFields>,
    /// Who the agent is under this mode.
    #[serde(default)]
    pub behaviour: Option<BehaviourFile>,
    /// The budget a run under this mode may spend (steps, seconds, cents); a mode that extends
    /// another runs under the least of both.
    #[serde(default)]
    pub lease: Option<crate::lease::Lease>,
    /// The mode's own rules; the strictest matching rule wins.
    #[serde(default)]
    #[schemars(with = "Vec<RuleFile>")]
    pub rules: Vec<Spanned<RuleFile>>,
    /// Effects (and context) in, expected decision out; run by `sixfold check`.
    #[serde(default)]
    #[schemars(with = "Vec<JudgementExample>")]
    pub examples: Vec<Spanned<JudgementExample>>,
}

/// Who the agent is under a mode.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BehaviourFile {
    /// The role prompt (in a `.md` mode, the body).
    #[serde(default)]
    pub role: Option<String>,
    /// The model to ask for, when the provider lets us choose.
    #[serde(default)]
    pub model: Option<String>,
    /// The tools offered; absent means the provider's own set.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// How long a step that asks waits for a person's answer in a governed run, in seconds,
    /// before it is refused (absent: `sixfold serve-tools --ask-timeout`, else 300).
    #[serde(default)]
    pub ask_timeout_secs: Option<u64>,
}
