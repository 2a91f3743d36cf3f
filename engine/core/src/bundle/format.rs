//! The bundle's file formats, as written. Every table refuses unknown keys.
//!
//! `sixfold schema KIND` prints the JSON Schema of each of these, so an editor can validate and
//! complete the files.

use crate::decision::Decision;
use crate::effects::EffectProfile;
use crate::verdict::{Assertion, Severity, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

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
    /// The environment mode this mode needs (what a sandbox must enforce), e.g. `workspace-write`.
    #[serde(default)]
    pub environment: Option<String>,
    /// Ids of policies whose rules this mode applies, e.g. `["secrets", "protected"]`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub include: Vec<Spanned<String>>,
    /// The widest effects the mode admits; a step beyond it is refused before any rule runs.
    /// A field left out is not limited.
    #[serde(default)]
    pub ceiling: Option<CeilingFile>,
    /// Who the agent is under this mode.
    #[serde(default)]
    pub behaviour: Option<BehaviourFile>,
    /// The mode's own rules; the strictest matching rule wins.
    #[serde(default)]
    #[schemars(with = "Vec<RuleFile>")]
    pub rules: Vec<Spanned<RuleFile>>,
    /// Effects (and context) in, expected decision out; run by `sixfold check`.
    #[serde(default)]
    #[schemars(with = "Vec<JudgementExample>")]
    pub examples: Vec<Spanned<JudgementExample>>,
}

/// The widest effects a mode admits. A field left out is not limited.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CeilingFile {
    /// The most it may read (`["*"]` for anything).
    #[serde(default)]
    pub reads: Option<Vec<String>>,
    /// The most it may write (`[]` for nothing).
    #[serde(default)]
    pub writes: Option<Vec<String>>,
    /// Whether it may leave this machine.
    #[serde(default)]
    pub reaches: Option<bool>,
    /// `true`: only steps that can be undone.
    #[serde(default)]
    pub reversible: Option<bool>,
    /// `true`: only steps inside a proven boundary.
    #[serde(default)]
    pub contained: Option<bool>,
    /// Whether it may spend money.
    #[serde(default)]
    pub costs: Option<bool>,
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
}

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
    /// Conditions over the six fields; all must hold. Empty matches every step.
    #[serde(default)]
    pub when: WhenFile,
    /// A Rhai file beside this one (path relative to this file).
    #[serde(default)]
    pub script: Option<String>,
    /// The function in `script` to call as `f(effects, context)`: it returns `true` (or a reason
    /// string) when the rule applies, `false` or `()` when it does not.
    #[serde(default)]
    pub function: Option<String>,
}

/// Conditions over the six fields. For `reads` and `writes`, the condition holds when any place
/// the step touches matches any entry: `any` (anything at all), `workspace` (inside a root),
/// `tmp` (the system temp dir), `outside` (a known path elsewhere), `unknown` (`*`), `@NAME`
/// (a path set declared in a policy file), or a path glob (`~/`, `/` or root-relative).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhenFile {
    /// What the step reads.
    #[serde(default)]
    pub reads: Option<Vec<String>>,
    /// What the step writes.
    #[serde(default)]
    pub writes: Option<Vec<String>>,
    /// Whether the step leaves this machine.
    #[serde(default)]
    pub reaches: Option<bool>,
    /// Whether the step can be undone.
    #[serde(default)]
    pub reversible: Option<bool>,
    /// Whether the step is inside a proven boundary.
    #[serde(default)]
    pub contained: Option<bool>,
    /// Whether the step spends money.
    #[serde(default)]
    pub costs: Option<bool>,
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

/// A policy file: path sets, reusable rules, rows, and examples.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// The policy's id; modes name it in `include`.
    pub id: String,
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Named sets of path globs, referred to as `@NAME` in rules. Names are shared across the
    /// bundle. A glob starting with `~/` is under the home directory, one starting with `/` is
    /// absolute, any other is relative to a workspace root (and `**/…` matches anywhere).
    #[serde(default)]
    pub paths: BTreeMap<String, PathSetFile>,
    /// Rules a mode applies when it includes this policy.
    #[serde(default)]
    #[schemars(with = "Vec<RuleFile>")]
    pub rules: Vec<Spanned<RuleFile>>,
    /// Rows: things that must hold about a run, each ending in a verdict.
    #[serde(default)]
    #[schemars(with = "Vec<RowFile>")]
    pub rows: Vec<Spanned<RowFile>>,
    /// Examples for the rules (effects in, decision out).
    #[serde(default)]
    #[schemars(with = "Vec<JudgementExample>")]
    pub examples: Vec<Spanned<JudgementExample>>,
    /// Examples for the rows (facts in, verdict out).
    #[serde(default)]
    #[schemars(with = "Vec<VerdictExample>")]
    pub row_examples: Vec<Spanned<VerdictExample>>,
    /// Command rules: how a shell command maps to effects (used by the command classifier).
    #[serde(default)]
    #[schemars(with = "Vec<CommandRuleFile>")]
    pub commands: Vec<Spanned<CommandRuleFile>>,
    /// Wrapper programs (`timeout`, `nice`, `env`, …) stripped before a command is classified.
    #[serde(default)]
    pub wrappers: Vec<WrapperFile>,
    /// What MCP tools do, by `SERVER` or `SERVER/TOOL` (the more specific wins). A tool of a
    /// server named nowhere gets the conservative profile.
    #[serde(default)]
    pub mcp: BTreeMap<String, ToolFile>,
    /// Act rules: decisions about a named act (a command prefix, a path glob or a domain), kept
    /// from a person's approvals. They narrow anything and widen only within the mode's ceiling.
    #[serde(default)]
    #[schemars(with = "Vec<ActRuleFile>")]
    pub acts: Vec<Spanned<ActRuleFile>>,
    /// Tunable data for this policy's scripts, handed to them as `context.settings`
    /// (and to row scripts as `settings`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub settings: BTreeMap<String, toml::Value>,
}

/// A named set of path globs.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathSetFile {
    /// What the set is.
    #[serde(default)]
    pub description: Option<String>,
    /// The globs.
    pub globs: Vec<String>,
}

/// One thing that must hold about a run.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RowFile {
    /// The row's id, unique in the bundle (e.g. `H4`, `suite-before-success-claim`).
    pub id: String,
    /// What must hold, in words.
    pub title: String,
    /// Where the evidence comes from.
    pub assertion: Assertion,
    /// Whether a verdict other than ok counts against the run.
    pub severity: Severity,
    /// What the row is evaluated over: a run's `trace` (replay, the live hooks) or its `launch`.
    #[serde(default)]
    pub facts: FactsKind,
    /// A data check over one fact.
    #[serde(default)]
    pub check: Option<FactCheckFile>,
    /// For an effect row: the rows whose holding is its evidence (ok when all are ok, gap when
    /// any is a gap, else unk).
    #[serde(default)]
    pub evidence: Option<Vec<String>>,
    /// A Rhai file beside this one.
    #[serde(default)]
    pub script: Option<String>,
    /// What the agent should do when the row is a gap (said when a live hook blocks on it).
    #[serde(default)]
    pub remedy: Option<String>,
    /// The function in `script`, called as `f(facts, settings)`: it returns `"ok"`, `"gap"` or
    /// `"unk"`, or a map `#{verdict: …, evidence: …}`.
    #[serde(default)]
    pub function: Option<String>,
    /// A function in `script` that folds over a trace's steps, called as `f(state, step, settings)`
    /// for each step in order (starting from an empty map) and returning the new state. Then
    /// `function` gets the facts without `steps` and with `state`. A run is then read one step at a
    /// time, so memory does not grow with its length.
    #[serde(default)]
    pub each_step: Option<String>,
}

/// What a row is evaluated over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FactsKind {
    /// A run's trace: its steps, edits, outcomes and final claim.
    #[default]
    Trace,
    /// A launch: what was imposed and what the vendor recorded.
    Launch,
}

/// A data check: look up one fact by its dotted path and compare it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FactCheckFile {
    /// Dotted path into the facts, e.g. `record.apiKeySource`. Missing means unk.
    pub fact: String,
    /// Values for which the row holds; any other value is a gap.
    #[serde(default)]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub ok: Option<Vec<toml::Value>>,
    /// Values for which the row does not hold; any other value is ok.
    #[serde(default)]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub gap: Option<Vec<toml::Value>>,
}

/// An example of a verdict: facts in, verdict out.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerdictExample {
    /// What the example shows.
    #[serde(default)]
    pub note: Option<String>,
    /// The row it is about.
    pub row: String,
    /// The facts.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub facts: BTreeMap<String, toml::Value>,
    /// The expected verdict.
    pub verdict: Verdict,
}

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

/// A provider: an agent CLI as data.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    /// The provider's id, e.g. `claude-code`.
    pub id: String,
    /// Its name for people.
    #[serde(default)]
    pub name: Option<String>,
    /// What it is.
    #[serde(default)]
    pub description: Option<String>,
    /// How to find it.
    pub binary: BinaryFile,
    /// The map from its tool names to effects. A tool not listed gets the conservative profile.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolFile>,
    /// How to ask whether it is ready to run (signed in, recent enough). Absent: nobody can ask,
    /// and a present binary's status is `unknown`.
    #[serde(default)]
    pub readiness: Option<ReadinessFile>,
    /// How to launch it headless.
    #[serde(default)]
    pub launch: Option<LaunchFile>,
    /// How sixfold's hooks are registered in its settings: read by `sixfold install` and by a
    /// hermetic launch (in the scratch config home). Absent: sixfold has no hook adapter for it,
    /// and the hermetic row about its hooks is unk.
    #[serde(default)]
    pub hooks: Option<HooksFile>,
    /// The knobs of a hermetic launch. Absent: a hermetic launch of this provider is refused.
    #[serde(default)]
    pub hermetic: Option<HermeticFile>,
    /// Where its own record of a run is, and which of its fields evidence which row.
    #[serde(default)]
    pub record: Option<RecordFile>,
}

/// How to ask whether a provider's CLI is ready to run. Only exit codes are read: the output of
/// a status command may name an account, so it is never printed, kept or logged.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadinessFile {
    /// Arguments that ask whether it is signed in, e.g. `["auth", "status"]`. Empty: nobody can
    /// ask, and the status is `unknown`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Exit codes of `args` that mean ready.
    #[serde(default)]
    pub ready_exit: Vec<i32>,
    /// Exit codes of `args` that mean signed out. Any other answer is `unknown`.
    #[serde(default)]
    pub signed_out_exit: Vec<i32>,
    /// How long to wait for an answer, in milliseconds (default 10000); past it, `unknown`.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// A regular expression over what `binary.version_args` prints: its first group (else the
    /// whole match) is the version. Absent: the first word that starts with a digit.
    #[serde(default)]
    pub version_pattern: Option<String>,
    /// The oldest version sixfold knows how to launch and read; an older one is `unsupported`.
    #[serde(default)]
    pub min_version: Option<String>,
}

/// How to launch a provider's CLI headless.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchFile {
    /// Arguments put before the run's own to run it headless, e.g. `["-p"]` or `["exec"]`.
    #[serde(default)]
    pub headless_args: Vec<String>,
    /// Give it no standard input (a CLI that would otherwise wait to read more).
    #[serde(default)]
    pub close_stdin: bool,
}

/// The knobs of a hermetic launch: what the launcher sets, copies, passes and watches.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HermeticFile {
    /// The variable that relocates its config home (settings, sessions, credentials); the
    /// launcher points it at a scratch directory made for the run.
    pub config_home_env: String,
    /// The file name, inside the config home, that a declared credentials file is copied to.
    /// Absent: credentials cannot be declared.
    #[serde(default)]
    pub credentials_file: Option<String>,
    /// Variables passed through from the operator's environment when set; nothing else is
    /// inherited.
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// Variables the launcher sets itself. In a value, `{home}` is a scratch home directory made
    /// for the run, `{config_home}` the scratch config home and `{workdir}` the working directory.
    #[serde(default)]
    pub env_set: BTreeMap<String, String>,
    /// Variables that carry an API key; the attestation names which of them the run has.
    #[serde(default)]
    pub api_key_env: Vec<String>,
    /// Arguments added to every hermetic launch, before the run's own.
    #[serde(default)]
    pub args: Vec<String>,
    /// Arguments that make the MCP server set exactly the one given; `{file}` is the MCP config
    /// file the launcher writes (the declared one, or an empty set). Absent: the set cannot be
    /// imposed, and a run that declares MCP servers is refused.
    #[serde(default)]
    pub mcp_args: Option<Vec<String>>,
    /// The MCP config file's table of servers (e.g. `mcpServers`): its keys are the declared set.
    #[serde(default)]
    pub mcp_servers_key: Option<String>,
    /// Arguments that exclude every setting source but the scratch config home. Absent: they
    /// cannot be excluded, and the row about them is unk.
    #[serde(default)]
    pub setting_sources_args: Option<Vec<String>>,
    /// Arguments that load one declared plugin directory; `{path}` is its path. Absent: plugin
    /// directories cannot be declared.
    #[serde(default)]
    pub plugin_args: Option<Vec<String>>,
    /// A JSON file inside a plugin directory whose `name` is the plugin's name (else the
    /// directory's name is).
    #[serde(default)]
    pub plugin_manifest: Option<String>,
    /// Memory files it discovers in the working directory and the directories above it (paths
    /// relative to each directory); the launcher walks the ancestors of the working directory for them.
    #[serde(default)]
    pub memory_files: Vec<String>,
    /// Governing documents, hashed before and after the run: a name without `/` anywhere in the
    /// working tree, a path with `/` relative to the working directory.
    #[serde(default)]
    pub governing: Vec<String>,
    /// Arguments that skip hooks or customizations; the launch reports any the run passes.
    #[serde(default)]
    pub skip_flags: Vec<String>,
    /// Variables that skip hooks or customizations.
    #[serde(default)]
    pub skip_env: Vec<String>,
    /// What a run is exposed to that sixfold reports rather than removes.
    #[serde(default)]
    pub ambient: Vec<AmbientFile>,
}

/// How sixfold's hooks are registered in an agent CLI's settings file (see
/// `sixfold_core::hook_settings`, the one writer of them).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    /// The file's format: `settings-json`, a JSON settings file whose `hooks` table maps each
    /// event to `[{"matcher"?, "hooks": [{"type": "command", "command"}]}]`.
    pub format: String,
    /// The file, relative to the agent's config home, e.g. `settings.json`.
    pub file: String,
    /// The events sixfold is registered for.
    pub events: Vec<String>,
    /// The events among them that take a tool matcher.
    #[serde(default)]
    pub tool_events: Vec<String>,
    /// The tool matcher for `tool_events` (default `*`).
    #[serde(default)]
    pub matcher: Option<String>,
    /// The arguments of the hook command after the running sixfold binary, e.g. `["hook", "ID"]`.
    pub args: Vec<String>,
}

/// Something a run is exposed to that the launcher reports rather than removes.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AmbientFile {
    /// What it is, e.g. `git status`.
    pub name: String,
    /// How it reaches the run.
    pub why: String,
}

/// Where a provider's own record of a run is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecordSource {
    /// A line of its standard output.
    #[default]
    Stdout,
    /// A JSON-lines file under the scratch config home, found after the run.
    ConfigHome,
}

/// How plugins that ship inside the binary count against the declared set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BuiltinPlugins {
    /// They are part of the pinned binary (its version is a row of its own), not ambient
    /// configuration: reported, not counted.
    #[default]
    Pinned,
    /// They count like any other plugin: each must be declared.
    Counted,
}

/// A provider's own record of a run, and which of its fields evidence which row.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordFile {
    /// Where the record is.
    #[serde(default)]
    pub source: RecordSource,
    /// For `config-home`: a glob relative to the config home, e.g. `sessions/**/*.jsonl`.
    #[serde(default)]
    pub path: Option<String>,
    /// Arguments that make it write its record, added to a hermetic launch.
    #[serde(default)]
    pub args: Vec<String>,
    /// Which JSON line is the record: top-level keys and the string each must equal.
    #[serde(rename = "match")]
    pub matches: BTreeMap<String, String>,
    /// A dotted path inside that line where the fields are (absent: the line itself).
    #[serde(default)]
    pub at: Option<String>,
    /// Lines read looking for it before giving up (default 10000).
    #[serde(default)]
    pub max_lines: Option<usize>,
    /// Plugins whose `path` is one of these ship inside the binary.
    #[serde(default)]
    pub builtin_plugin_paths: Vec<String>,
    /// How such built-in plugins count against the declared set.
    #[serde(default)]
    pub builtin_plugins: BuiltinPlugins,
    /// The facts a launch row reads (`plugins`, `mcp_servers`, `api_key_source`,
    /// `output_style`, `cwd`, `version`, …), and where the record has each.
    #[serde(default)]
    pub fields: BTreeMap<String, RecordFieldFile>,
}

/// One fact of a provider's record: where it is, or why the record cannot evidence it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordFieldFile {
    /// A dotted path inside the record.
    #[serde(default)]
    pub from: Option<String>,
    /// Instead of `from`: why the record cannot evidence it (the rows that need it are unk).
    #[serde(default)]
    pub absent: Option<String>,
    /// The value it has when nothing was configured (the default output style; the API-key
    /// source when there is no key).
    #[serde(default)]
    pub default: Option<String>,
    /// The rows it evidences.
    #[serde(default)]
    pub rows: Vec<String>,
}

/// How to find a provider's CLI and ask its version.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BinaryFile {
    /// Executable names to look for on `PATH`, in order.
    pub names: Vec<String>,
    /// Arguments that make it print its version.
    #[serde(default)]
    pub version_args: Vec<String>,
    /// What to run to install it, shown when it is absent (sixfold never installs anything).
    #[serde(default)]
    pub install_hint: Option<String>,
}

/// One tool's effects. `{field}` in a scope is replaced by that field of the tool's input
/// (`{field|default}` where it may be absent; absent without a default is unknown, `*`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolFile {
    /// What it reads, e.g. `["{file_path}"]`.
    #[serde(default)]
    pub reads: Vec<String>,
    /// What it writes.
    #[serde(default)]
    pub writes: Vec<String>,
    /// Whether it leaves this machine.
    #[serde(default)]
    pub reaches: bool,
    /// Whether it can be undone (default true).
    #[serde(default)]
    pub reversible: Option<bool>,
    /// Whether it is inside a proven boundary.
    #[serde(default)]
    pub contained: bool,
    /// Whether it spends money.
    #[serde(default)]
    pub costs: bool,
    /// The input field holding a shell command, whose effects come from the command classifier.
    #[serde(default)]
    pub command: Option<String>,
    /// This tool is the spawn meta-tool; the input field naming the sub-agent.
    #[serde(default)]
    pub spawn: Option<String>,
}

/// A command rule: a prefix of words, and the effects of a command that starts with it.
/// The longest matching prefix wins; a rule with `flags` applies only when one of them is present
/// and wins over a rule with the same prefix without them.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandRuleFile {
    /// Unique within its file.
    pub id: String,
    /// The words a command starts with; `a|b` means either. The first is the program, matched
    /// by its base name (`/usr/bin/git` is `git`).
    pub prefix: Vec<String>,
    /// The rule applies only when a word after the prefix matches one of these
    /// (a trailing `*` matches any rest, e.g. `-i*` for `sed -i.bak`; `-*c` for `bash -lc`).
    #[serde(default)]
    pub flags: Option<Vec<String>>,
    /// What it reads. `{args}` is every argument after the prefix that is not a flag, `{first}`
    /// and `{last}` one of them, `{opt:-o}` the value of an option, `.` the working directory.
    #[serde(default)]
    pub reads: Vec<String>,
    /// What it writes, with the same placeholders.
    #[serde(default)]
    pub writes: Vec<String>,
    /// Whether it leaves this machine.
    #[serde(default)]
    pub reaches: bool,
    /// Whether it can be undone (default true).
    #[serde(default)]
    pub reversible: Option<bool>,
    /// Whether it is inside a proven boundary.
    #[serde(default)]
    pub contained: bool,
    /// Whether it spends money.
    #[serde(default)]
    pub costs: bool,
    /// The command cannot be understood: the conservative profile (writes `*`, reaches, irreversible).
    #[serde(default)]
    pub unknown: bool,
    /// The word after the matched flag is itself a command line (`bash -c '…'`), classified in turn.
    #[serde(default)]
    pub shell: bool,
    /// Commands this rule must be the one to classify (checked when the bundle loads).
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Commands this rule must not be the one to classify.
    #[serde(default)]
    pub not_match: Vec<String>,
}

/// A wrapper program, stripped before classification: `timeout 10 cargo test` is `cargo test`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WrapperFile {
    /// The program.
    pub program: String,
    /// Its options that take a value (`-n` of `nice`), so the value is skipped too.
    #[serde(default)]
    pub flags_with_value: Vec<String>,
    /// How many positional arguments it takes before the command (`timeout`'s duration: 1).
    #[serde(default)]
    pub positional: usize,
}

/// A rule about a named act rather than effects: kept from a person's approval.
/// Exactly one of `command`, `path` and `domain`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActRuleFile {
    /// Unique within its file.
    pub id: String,
    /// What it decides.
    pub decision: Decision,
    /// A command prefix, matched word by word against each simple command (`cargo test`).
    #[serde(default)]
    pub command: Option<String>,
    /// A path glob (`~/`, `/` or root-relative).
    #[serde(default)]
    pub path: Option<String>,
    /// A domain; its subdomains match too.
    #[serde(default)]
    pub domain: Option<String>,
    /// The modes it applies in; absent means all.
    #[serde(default)]
    pub modes: Option<Vec<String>>,
    /// Why it was kept, or who kept it and when.
    #[serde(default)]
    pub note: Option<String>,
}
