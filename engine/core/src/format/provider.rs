//! A provider file: `providers/*.toml`, an agent CLI as data.

use super::closed::NoOtherKeys;
use crate::effects::EffectFields;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// How it runs governed (`sixfold launch … --governed`). Absent: it cannot be.
    #[serde(default)]
    pub governed: Option<super::GovernedFile>,
    /// Where its record (the transcript a hook is given) holds the model's token usage.
    #[serde(default)]
    pub usage: Option<crate::lease::usage::UsageFile>,
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
#[schemars(deny_unknown_fields)]
pub struct ToolFile {
    /// What it does, e.g. `reads = ["{file_path}"]`. A field left out takes a step's default
    /// (`reversible` is true).
    #[serde(flatten)]
    pub effects: EffectFields,
    /// The input field holding a shell command, whose effects come from the command classifier.
    #[serde(default)]
    pub command: Option<String>,
    /// This tool is the spawn meta-tool; the input field naming the sub-agent.
    #[serde(default)]
    pub spawn: Option<String>,
    /// Any other key is an error.
    #[serde(flatten, skip_serializing)]
    #[schemars(skip)]
    pub others: NoOtherKeys,
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
    /// Variables that exclude every setting source but the launcher's (e.g. a project's own
    /// configuration), set in the run's environment; the run may not declare them itself.
    /// Absent (and no `setting_sources_args`): they cannot be excluded, and the row about them
    /// is unk.
    #[serde(default)]
    pub setting_sources_env: Option<BTreeMap<String, String>>,
    /// Files the launcher writes before the run, by path (`{home}` and `{config_home}` as in
    /// `env_set`; a path must lie inside one of them), each as its JSON value: e.g. a lock file
    /// that keeps the CLI from installing a package from the registry.
    #[serde(default)]
    pub files: BTreeMap<String, serde_json::Value>,
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
    /// event to `[{"matcher"?, "hooks": [{"type": "command", "command"}]}]`; `config-toml`,
    /// a TOML config file with the same shape as `[[hooks.EVENT]]` tables, edited in place; or
    /// `opencode-plugin`, sixfold's OpenCode plugin (`file`, in OpenCode's config directory),
    /// which runs the hook command for each of its plugin `events`, with a rule denying every
    /// tool until it has loaded in the `opencode.json` beside it.
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
    /// Whether the agent CLI asks a person when a hook answers `ask`. False (the default) where
    /// it would run the call anyway: an ask is then answered as a deny that says how to approve.
    #[serde(default)]
    pub can_ask: bool,
    /// Arguments a hermetic launch adds to the agent CLI's, having written the hooks itself in
    /// its scratch config home: where the CLI skips hooks nobody trusted, the flag that runs them.
    #[serde(default)]
    pub launch_args: Vec<String>,
    /// Variables a hermetic run may declare that name a configuration file the agent CLI merges
    /// before the hooks' own (OpenCode's `OPENCODE_CONFIG`). A hermetic launch refuses one whose
    /// file has a `*` permission rule: the merged deny-all rule would keep that rule's place,
    /// and the rules after it could let a tool through while the plugin is missing.
    #[serde(default)]
    pub launch_config_env: Vec<String>,
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
    /// The vendor's own reports on the launched configuration, by name (e.g. `doctor`): commands
    /// of its CLI that print JSON, run right after the run with the same config home,
    /// environment, working directory and configuration overrides. A field names the report it is
    /// read from; a report that fails or is malformed leaves its fields missing.
    #[serde(default)]
    pub reports: BTreeMap<String, ReportFile>,
}

/// One of the vendor's own reports on the launched configuration: a command of its CLI that
/// prints one JSON document, e.g. `codex mcp list --json`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportFile {
    /// The arguments that print it, e.g. `["mcp", "list", "--json"]`. `{record:/POINTER}` in an
    /// argument is the string at that JSON pointer of the record line (e.g. the run's session
    /// id); a record without it means no report.
    pub args: Vec<String>,
    /// The run's own arguments that are given again to the report, each with its value
    /// (`-c KEY=VALUE`, `--enable NAME`): the report then describes the configuration the run had.
    #[serde(default)]
    pub pass_args: Vec<String>,
    /// The run's own arguments the report cannot be given (`--profile NAME`): a run that passes
    /// one gets no report, since it would describe another configuration.
    #[serde(default)]
    pub unmatched_args: Vec<String>,
    /// Variables set for the report alone, over the run's environment (e.g. proxies that keep a
    /// report's own network probes on a dead loopback port).
    #[serde(default)]
    pub env_set: BTreeMap<String, String>,
    /// Exit codes after which its output is the report (default `[0]`).
    #[serde(default)]
    pub ok_exit: Vec<i32>,
    /// How long it may take, in milliseconds (default 30000); past it, no report.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The most it may print, in bytes (default 1 MiB); more is no report.
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// The report is text, not JSON (OpenCode's `auth list`): it is read as one string, with
    /// its terminal colour codes taken out, for a field's cases to match with a pattern.
    #[serde(default)]
    pub text: bool,
}

/// One fact of a provider's record: where it is, or why the record cannot evidence it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordFieldFile {
    /// The report it is read from (a key of `reports`) instead of the record line.
    #[serde(default)]
    pub report: Option<String>,
    /// Where it is: a dotted path (`.` is the whole), or a JSON pointer (`/checks/a.b/details`)
    /// where a key holds a dot.
    #[serde(default)]
    pub from: Option<String>,
    /// Instead of `from`: the first case that matches gives the value; none matching, the
    /// field is missing.
    #[serde(default)]
    pub cases: Vec<RecordCaseFile>,
    /// Instead of `from`: why the record cannot evidence it (the rows that need it are unk).
    #[serde(default)]
    pub absent: Option<String>,
    /// The value it has when nothing was configured (the default output style; the API-key
    /// source when there is no key).
    #[serde(default)]
    pub default: Option<String>,
    /// The vendor versions that have no such surface at all (Codex 0.171 has no output
    /// styles): for exactly these versions, a row may read the field's absence as the default.
    #[serde(default)]
    pub no_surface_in: Vec<String>,
    /// The rows it evidences.
    #[serde(default)]
    pub rows: Vec<String>,
}

/// One way a record field can be read: where, what it must look like, and what it then is.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordCaseFile {
    /// Where: a dotted path or a JSON pointer, as a field's `from`.
    pub from: String,
    /// A regular expression the value (a string) must match; its first group, else the whole
    /// match, is the field, unless `value` says.
    #[serde(default)]
    pub pattern: Option<String>,
    /// The field's value when this case matches (else what was found).
    #[serde(default)]
    pub value: Option<String>,
}
