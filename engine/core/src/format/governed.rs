//! A provider's governed mode (`[governed]` in `providers/*.toml`): how its CLI is launched with
//! its own file and shell tools off and sixfold's governed tools (`sixfold serve-tools`) offered
//! instead. Which flags, files and configuration that takes is data, so adding a provider's
//! governed mode is a change to its file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a provider's CLI runs governed.
///
/// In every string of `args`, `files` and `config`: `{sixfold}` is the sixfold binary,
/// `{workdir}` the working directory, `{session}` the session's id and `{file:NAME}` the path of
/// the file written from `files.NAME`. An array element that is exactly `{serve_args}` becomes
/// the extra arguments of `sixfold serve-tools` (`--mode M`, `--ask-timeout S`), or nothing.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GovernedFile {
    /// Arguments added to a governed launch, before the run's own.
    #[serde(default)]
    pub args: Vec<String>,
    /// Files written into the run directory, by name, as JSON (e.g. an MCP config, a model
    /// catalog).
    #[serde(default)]
    pub files: BTreeMap<String, serde_json::Value>,
    /// The flag that sets one configuration value (e.g. `-c`): each of `config` is passed as
    /// `FLAG KEY=VALUE`, the value written as TOML.
    #[serde(default)]
    pub config_flag: Option<String>,
    /// Configuration values set with `config_flag`, by key.
    #[serde(default)]
    pub config: BTreeMap<String, serde_json::Value>,
    /// Variables set in the vendor's environment, for a CLI that takes its configuration there
    /// rather than from flags: a value exactly `{content:NAME}` is the JSON of `files.NAME`
    /// itself (e.g. a whole configuration), any other is rendered like `args`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The MCP servers the governed launch adds, by the names the CLI knows them by.
    #[serde(default)]
    pub servers: Vec<String>,
    /// Prefixes of the tool names a governed run may offer the model (e.g. `mcp__sixfold__`):
    /// a tool in the vendor's record without one is a built-in tool (the governed row's gap).
    #[serde(default)]
    pub offered_prefixes: Vec<String>,
}
