//! A policy file: `policies/**/*.toml`: path sets, environments, rules, rows, command rules,
//! act rules, MCP tool maps and their examples.

use super::closed::NoOtherKeys;
use super::environment::EnvironmentFile;
use super::provider::ToolFile;
use super::rule::{JudgementExample, RuleFile};
use super::Spanned;
use crate::decision::Decision;
use crate::effects::EffectFields;
use crate::verdict::{Assertion, Severity, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// Environments, by name: what a sandbox enforces around a command run under a mode that
    /// names it (`environment = "NAME"`). Names are shared across the bundle; a later layer's
    /// replaces an earlier one's.
    #[serde(default)]
    pub environments: BTreeMap<String, EnvironmentFile>,
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
    /// Assignments before a command (`NAME=VALUE cmd`, `env NAME=VALUE cmd`) that do not change
    /// what it runs: a name (`RUST_LOG`), a name prefix (`LC_*`) or a whole assignment
    /// (`GIT_PAGER=cat`). Any other assignment makes the command not understood.
    #[serde(default)]
    pub inert_assignments: Vec<String>,
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

/// A command rule: a prefix of words, and the effects of a command that starts with it.
/// The longest matching prefix wins; a rule with `flags` applies only when one of them is present
/// and wins over a rule with the same prefix without them.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
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
    /// What it does. In `reads` and `writes`, `{args}` is every argument after the prefix that
    /// is not an option or its value, `{first}` and `{last}` one of them, `{but_last}` all but the last, `{opt:-o}` the value of an option, `.`
    /// the working directory. A field left out takes a step's default (`reversible` is true).
    #[serde(flatten)]
    pub effects: EffectFields,
    /// The command cannot be understood: the conservative profile (writes `*`, reaches, irreversible).
    #[serde(default)]
    pub unknown: bool,
    /// The word after the matched flag is itself a command line (`bash -c '…'`), classified in turn.
    #[serde(default)]
    pub shell: bool,
    /// It runs the project's own code (a build, a test runner, an interpreter on a script, a
    /// package manager's scripts): what that code does is not known, so the command gets the
    /// conservative profile, as `unknown` does; a proven sandbox is what lets a mode allow it.
    #[serde(default)]
    pub runs_code: bool,
    /// The options the rule understands. A rule that is not `unknown`, `runs_code` or `shell`
    /// understands only these: any other option makes the command not understood (the
    /// conservative profile). Absent: no option at all is understood.
    #[serde(default)]
    pub options: Option<OptionsFile>,
    /// The script language its arguments hold, read by the core's allow-list reader: the
    /// script is the value of an option listed in `options.scripts`, else the first argument.
    #[serde(default)]
    pub reader: Option<ScriptReader>,
    /// At most this many arguments that are not options or their values; more make the command
    /// not understood (`git config KEY` reads, `git config KEY VALUE` writes).
    #[serde(default)]
    pub max_args: Option<usize>,
    /// At least this many words after the prefix that do not start with `-` (an option's value
    /// counts too): with fewer, the rule is not selected (`git config KEY VALUE` writes, where
    /// `git config KEY` reads).
    #[serde(default)]
    pub min_args: Option<usize>,
    /// Commands this rule must be the one to classify (checked when the bundle loads).
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Commands this rule must not be the one to classify.
    #[serde(default)]
    pub not_match: Vec<String>,
    /// Any other key is an error.
    #[serde(flatten, skip_serializing)]
    #[schemars(skip)]
    pub others: NoOtherKeys,
}

/// The options a command rule understands, by what their value is. Each is written as the
/// command line spells it (`-o`, `--output`, `-name`); a short one is understood combined
/// (`-nr`) and with its value attached (`-o/etc/x`), a long one with `=` (`--output=f`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionsFile {
    /// Options that take no value.
    #[serde(default)]
    pub flags: Vec<String>,
    /// Options whose value is neither a path nor code (`-k 2`, `--format=%H`).
    #[serde(default)]
    pub values: Vec<String>,
    /// Options whose value, if any, is attached (`-i.bak`, `--in-place=.bak`,
    /// `--color=auto`), never the next word; neither a path nor code.
    #[serde(default)]
    pub attached: Vec<String>,
    /// Options whose value is a path the command reads.
    #[serde(default)]
    pub reads: Vec<String>,
    /// Options whose value is a path the command writes (`sort -o`, `git diff --output`).
    #[serde(default)]
    pub writes: Vec<String>,
    /// Options whose value is a script for the rule's `reader` (`sed -e`).
    #[serde(default)]
    pub scripts: Vec<String>,
    /// `-NUM` is understood (`head -5`).
    #[serde(default)]
    pub numeric: bool,
    /// The lists hold every option the program has, and none can write, read a path or run
    /// code: an expansion (`echo $X`) can only turn into one of them, so it is understood.
    #[serde(default)]
    pub complete: bool,
    /// Every option is understood. Only for a rule whose effects already hold whatever an
    /// option could do: it writes the working directory `.` (judged like an unknown write
    /// unless contained); checked when the bundle loads.
    #[serde(default)]
    pub any: bool,
    /// A word starting with `+` is a command the program runs (`less '+!id' f`, `more +/x f`):
    /// the command is then not understood.
    #[serde(default)]
    pub plus_runs: bool,
}

/// A script language the core reads in a command's arguments, by an allow-list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScriptReader {
    /// A `sed` script: printing, deleting and substituting only (no `w`, `r`, `e`, `s///w|e`).
    Sed,
    /// An `awk` program that only reads its input and prints (no `system`, pipes,
    /// redirections, `getline`, `ENVIRON`).
    Awk,
    /// A `find` expression of tests and printing actions (no `-exec`, `-ok`, `-delete`,
    /// `-fprint*`, `-fls`); its starting paths are its arguments.
    Find,
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
    /// Its options that take no value. Any option it does not list (here or in
    /// `flags_with_value`) ends the stripping, so the command is not understood (`env -S'…'`).
    #[serde(default)]
    pub flags: Vec<String>,
    /// Options with which it is not a wrapper but a command of its own, classified by the
    /// command rules (`command -v git` looks a program up; it does not run it).
    #[serde(default)]
    pub not_with: Vec<String>,
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
