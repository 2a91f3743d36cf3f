//! A pattern file: `patterns/*.toml`, an agent architecture as data.

use super::Spanned;
use crate::decision::Decision;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A pattern: an agent architecture as data.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatternFile {
    /// The pattern's id, e.g. `single`.
    pub id: String,
    /// A short name for people.
    #[serde(default)]
    pub name: Option<String>,
    /// What the architecture is.
    #[serde(default)]
    pub description: Option<String>,
    /// The meta-tools it offers: `spawn`, `compose`, `propose`, `done`, `ask_person`.
    pub meta_tools: Vec<MetaTool>,
    /// Its limits.
    #[serde(default)]
    pub limits: PatternLimits,
    /// The budget a run under this pattern may spend (steps, seconds, cents).
    #[serde(default)]
    pub lease: Option<crate::lease::Lease>,
    /// What a helper it spawns gets of what its parent has left: a share, or fixed amounts.
    #[serde(default)]
    pub carve: Option<crate::lease::Carve>,
    /// The only sub-agents it may spawn, by name; absent means any.
    #[serde(default)]
    pub helpers: Option<Vec<String>>,
    /// Spawn requests in, decision out.
    #[serde(default)]
    #[schemars(with = "Vec<SpawnExample>")]
    pub examples: Vec<Spanned<SpawnExample>>,
}

/// A meta-tool a pattern offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MetaTool {
    /// Start a sub-agent.
    Spawn,
    /// Change the plan's shape.
    Compose,
    /// Hand something to the host.
    Propose,
    /// Finish.
    Done,
    /// Ask the person a question.
    AskPerson,
}

/// A pattern's limits.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatternLimits {
    /// Sub-agents per session (absent: no limit beyond `spawn` being offered).
    #[serde(default)]
    pub spawns: Option<u32>,
    /// Rounds of a loop (critique, reflection).
    #[serde(default)]
    pub rounds: Option<u32>,
    /// Nesting depth of sub-agents.
    #[serde(default)]
    pub depth: Option<u32>,
}

/// A spawn request in, decision out.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnExample {
    /// What the example shows.
    #[serde(default)]
    pub note: Option<String>,
    /// The sub-agent asked for, by name.
    #[serde(default)]
    pub helper: Option<String>,
    /// How many sub-agents this session already spawned.
    #[serde(default)]
    pub spawned: u32,
    /// The expected decision.
    pub decision: Decision,
}
