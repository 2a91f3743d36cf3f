//! Bundles: directories of modes, policies, patterns and providers, loaded, layered and checked.
//!
//! Sources load in order, the shipped bundle first; an item (mode, policy, pattern, provider,
//! row, path set) with the id of an earlier one replaces it. Every problem found is a
//! [`Diagnostic`] and loading goes on: one bad file never hides another's errors, and the items
//! that did load stay usable.

pub mod format;
pub mod source;

use crate::classify::{Classified, Classifier, CommandRule, Wrapper};
use crate::decision::{DecidedBy, Decision, Judgement};
use crate::diag::Diagnostic;
use crate::effects::{EffectProfile, Effects};
use crate::judge::{Ceiling, Context, Judge, PathSet, PlaceMatcher, Rule, RuleScript, When};
use crate::scope::Workspace;
use crate::script::{to_dynamic, Script, ScriptHost, ScriptLimits};
use crate::verdict::{Assertion, RowResult, Severity, Verdict};
use format::ToolFile;
use format::*;
pub use source::BundleSource;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;
use std::sync::Arc;
use toml::Spanned;

/// One parsed file and where it came from.
#[derive(Debug, Clone)]
struct Doc {
    source: usize,
    relative: String,
    display: String,
    /// The TOML text spans point into (a `.md` mode's front matter).
    text: Arc<str>,
    /// Lines before `text` in the file.
    line_offset: usize,
}

impl Doc {
    fn diag(&self, span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::at(&self.display, &self.text, span, message);
        d.line += self.line_offset;
        d
    }

    /// The directory of this file inside its bundle, for scripts named beside it.
    fn sibling(&self, name: &str) -> String {
        match self.relative.rsplit_once('/') {
            Some((dir, _)) => normalise(&format!("{dir}/{name}")),
            None => normalise(name),
        }
    }
}

fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// A place in a file, turned into a diagnostic only when something there fails (locating is
/// not free, and a bundle carries many examples).
#[derive(Debug, Clone)]
struct Located {
    display: String,
    text: Arc<str>,
    span: Range<usize>,
    line_offset: usize,
    message: String,
}

impl Located {
    fn new(doc: &Doc, span: Range<usize>, message: impl Into<String>) -> Located {
        Located {
            display: doc.display.clone(),
            text: doc.text.clone(),
            span,
            line_offset: doc.line_offset,
            message: message.into(),
        }
    }

    fn diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::at(&self.display, &self.text, self.span.clone(), self.message.clone());
        d.line += self.line_offset;
        d
    }
}

/// A script function named by a rule or row, to be checked once the script is compiled.
#[derive(Debug, Clone)]
struct Deferred {
    at: Located,
    script: Script,
    function: String,
    arity: usize,
}

/// Where rows read their facts from: facts already whole (examples, the live hooks), or a trace
/// whose steps are made into facts one at a time.
#[derive(Debug, Clone, Copy)]
pub enum Facts<'a> {
    /// Whole facts.
    Whole(&'a serde_json::Value),
    /// A trace, its workspace, and facts to add beside it (e.g. `diff`).
    Trace(
        &'a crate::trace::Trace,
        &'a Workspace,
        &'a serde_json::Map<String, serde_json::Value>,
    ),
}

impl Facts<'_> {
    /// The whole facts (made, for a trace).
    fn whole(&self) -> std::borrow::Cow<'_, serde_json::Value> {
        match self {
            Facts::Whole(v) => std::borrow::Cow::Borrowed(v),
            Facts::Trace(trace, workspace, extra) => {
                let mut v = trace.facts(workspace);
                if let Some(obj) = v.as_object_mut() {
                    obj.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                std::borrow::Cow::Owned(v)
            }
        }
    }

    /// Everything but the steps.
    fn head(&self) -> serde_json::Value {
        match self {
            Facts::Whole(v) => {
                let mut head = v.as_object().cloned().unwrap_or_default();
                head.remove("steps");
                serde_json::Value::Object(head)
            }
            Facts::Trace(trace, _, extra) => {
                let mut v = trace.head_facts();
                if let Some(obj) = v.as_object_mut() {
                    obj.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                v
            }
        }
    }

    /// Each step's facts, in order.
    fn for_each_step(&self, f: &mut dyn FnMut(&serde_json::Value)) {
        match self {
            Facts::Whole(v) => {
                for step in v.get("steps").and_then(|s| s.as_array()).into_iter().flatten() {
                    f(step);
                }
            }
            Facts::Trace(trace, workspace, _) => {
                for step in &trace.steps {
                    f(&crate::trace::step_facts(step, workspace));
                }
            }
        }
    }

    /// The value at a dotted path.
    fn lookup(&self, path: &str) -> Option<serde_json::Value> {
        let whole = match self {
            Facts::Whole(v) => std::borrow::Cow::Borrowed(*v),
            // A data check reads one fact: a trace's steps are not made for it unless it names them.
            Facts::Trace(..) if !path.starts_with("steps") => std::borrow::Cow::Owned(self.head()),
            Facts::Trace(..) => self.whole(),
        };
        let mut value = Some(whole.as_ref());
        for part in path.split('.') {
            value = value.and_then(|v| v.get(part));
        }
        value.cloned()
    }
}

/// What evaluating a set of rows shares: the facts, the results so far, and the rows being
/// evaluated (to catch evidence cycles).
struct RowContext<'a> {
    facts: Facts<'a>,
    done: &'a mut HashMap<String, RowResult>,
    visiting: Vec<String>,
}

/// A loaded mode.
#[derive(Debug, Clone)]
pub struct Mode {
    /// Its id.
    pub id: String,
    /// Its name for people.
    pub name: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// The environment mode it needs.
    pub environment: Option<String>,
    /// Who the agent is under it.
    pub behaviour: BehaviourFile,
    /// The mode it narrows.
    pub extends: Option<String>,
    /// Where it was written.
    pub file: String,
    /// Its compiled policy.
    pub judge: Judge,
}

/// A loaded pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// As written.
    pub spec: PatternFile,
    /// Where it was written.
    pub file: String,
}

impl Pattern {
    /// Judges a request to spawn a sub-agent (`helper` is its name, where the agent gave one),
    /// given how many this session already spawned.
    pub fn judge_spawn(&self, helper: Option<&str>, spawned: u32) -> Judgement {
        let id = &self.spec.id;
        let refuse = |reason: String| Judgement {
            decision: Decision::Refuse,
            reason,
            rules: vec![format!("pattern/{id}")],
            mode: format!("pattern:{id}"),
            by: DecidedBy::Rules,
        };
        if !self.spec.meta_tools.contains(&MetaTool::Spawn) {
            return refuse(format!(
                "pattern `{id}` refuses: it offers no spawn meta-tool, so it cannot start sub-agents"
            ));
        }
        if let Some(helpers) = &self.spec.helpers {
            let named = helper.unwrap_or("");
            if !helpers.iter().any(|h| h == named) {
                return refuse(format!(
                    "pattern `{id}` refuses: it keeps only the helpers {}, and `{named}` is not one of them",
                    helpers.iter().map(|h| format!("`{h}`")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        if let Some(limit) = self.spec.limits.spawns {
            if spawned >= limit {
                return refuse(format!(
                    "pattern `{id}` refuses: it allows {limit} sub-agents per session and {spawned} were spawned already"
                ));
            }
        }
        Judgement {
            decision: Decision::Allow,
            reason: format!("pattern `{id}` allows spawning a sub-agent"),
            rules: vec![format!("pattern/{id}")],
            mode: format!("pattern:{id}"),
            by: DecidedBy::Rules,
        }
    }
}

/// A loaded provider.
#[derive(Debug, Clone)]
pub struct Provider {
    /// As written.
    pub spec: ProviderFile,
    /// Where it was written.
    pub file: String,
}

/// A loaded policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Its id.
    pub id: String,
    /// What it is for.
    pub description: Option<String>,
    /// Where it was written.
    pub file: String,
    /// Its rules, applied by the modes that include it.
    pub rules: Vec<Arc<Rule>>,
    /// The ids of its rows.
    pub rows: Vec<String>,
    /// Its settings, as JSON.
    pub settings: serde_json::Value,
}

#[derive(Debug, Clone)]
enum RowCheck {
    Fact {
        fact: String,
        ok: Option<Vec<serde_json::Value>>,
        gap: Option<Vec<serde_json::Value>>,
    },
    Evidence(Vec<String>),
    Script {
        script: Script,
        function: String,
        each_step: Option<String>,
        settings: serde_json::Value,
    },
}

/// A loaded row.
#[derive(Debug, Clone)]
pub struct Row {
    /// Its id.
    pub id: String,
    /// What must hold.
    pub title: String,
    /// Where the evidence comes from.
    pub assertion: Assertion,
    /// Whether it counts.
    pub severity: Severity,
    /// The policy it belongs to.
    pub policy: String,
    /// What it is evaluated over.
    pub facts: FactsKind,
    /// What the agent should do when it is a gap.
    pub remedy: Option<String>,
    check: RowCheck,
}

#[derive(Debug, Clone)]
enum ExampleKind {
    Judgement {
        owner: Option<String>,
        example: JudgementExample,
    },
    Verdict(VerdictExample),
    Spawn {
        pattern: String,
        example: SpawnExample,
    },
    Command {
        rule: String,
        matches: Vec<String>,
        not_match: Vec<String>,
    },
}

#[derive(Debug, Clone)]
struct Example {
    at: Located,
    kind: ExampleKind,
}

/// A loaded bundle.
#[derive(Debug)]
pub struct Bundle {
    modes: BTreeMap<String, Mode>,
    policies: BTreeMap<String, Policy>,
    patterns: BTreeMap<String, Pattern>,
    providers: BTreeMap<String, Provider>,
    rows: BTreeMap<String, Row>,
    host: ScriptHost,
    /// Row scripts read a whole run's facts, so they run under limits scaled for that.
    row_host: ScriptHost,
    examples: Vec<Example>,
    classifier: Classifier,
    mcp: BTreeMap<String, ToolFile>,
    acts: Vec<ActRule>,
    deferred: Vec<Deferred>,
    scripts: Vec<Script>,
}

/// A compiled act rule.
#[derive(Debug, Clone)]
pub struct ActRule {
    /// `POLICY/ID`.
    pub id: String,
    /// What it decides.
    pub decision: Decision,
    /// The modes it applies in (`None`: all).
    pub modes: Option<Vec<String>>,
    matcher: ActMatcher,
    /// What it names, as written.
    pub act: String,
}

#[derive(Debug, Clone)]
enum ActMatcher {
    Command(Vec<String>),
    Path(Arc<PathSet>),
    Domain(String),
}

/// A step as act rules see it: what it does in words, the commands it runs, and its effects.
#[derive(Debug, Clone, Copy)]
pub struct ActView<'a> {
    /// `command`, `path`, `url`, `agent` or `tool`.
    pub kind: &'a str,
    /// The command line, path, URL, …
    pub text: &'a str,
    /// Each simple command's text, for command prefixes.
    pub commands: &'a [String],
}

impl ActRule {
    fn matches(&self, act: &ActView<'_>, effects: &Effects, workspace: &Workspace) -> bool {
        match &self.matcher {
            ActMatcher::Command(prefix) => act.commands.iter().any(|c| {
                let words: Vec<&str> = c.split_whitespace().collect();
                words.len() >= prefix.len() && prefix.iter().zip(&words).all(|(p, w)| p == w)
            }),
            ActMatcher::Path(set) => effects
                .read_places
                .iter()
                .chain(&effects.write_places)
                .any(|t| set.contains(t, workspace)),
            ActMatcher::Domain(domain) => {
                let urls = std::iter::once(act.text).chain(act.commands.iter().flat_map(|c| c.split_whitespace()));
                urls.filter_map(host_of)
                    .any(|host| host == domain.as_str() || host.ends_with(&format!(".{domain}")))
            }
        }
    }
}

/// The host of an `http(s)://` URL.
fn host_of(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("https://").or_else(|| text.strip_prefix("http://"))?;
    let end = rest.find(['/', ':', '?', '#']).unwrap_or(rest.len());
    let host = rest.get(..end)?;
    Some(host.rsplit('@').next().unwrap_or(host))
}

/// Parsed files of one kind, by id, later sources replacing earlier ones.
struct Layered<T> {
    items: BTreeMap<String, (Doc, T)>,
    seen_in_source: HashMap<(usize, String), String>,
}

impl<T> Layered<T> {
    fn new() -> Self {
        Layered {
            items: BTreeMap::new(),
            seen_in_source: HashMap::new(),
        }
    }

    fn insert(&mut self, id: String, doc: Doc, item: T, diagnostics: &mut Vec<Diagnostic>) {
        if let Some(first) = self.seen_in_source.get(&(doc.source, id.clone())) {
            diagnostics.push(
                Diagnostic::file(&doc.display, format!("`{id}` is defined twice in one bundle"))
                    .with_hint(format!("it is also defined in {first}; rename one of them")),
            );
            return;
        }
        self.seen_in_source
            .insert((doc.source, id.clone()), doc.display.clone());
        self.items.insert(id, (doc, item));
    }
}

fn parse<T: serde::de::DeserializeOwned>(doc: &Doc, diagnostics: &mut Vec<Diagnostic>) -> Option<T> {
    match toml::from_str::<T>(&doc.text) {
        Ok(v) => Some(v),
        Err(err) => {
            let message = err.message().trim_end_matches('\n').replace('\n', "; ");
            // Text that is not TOML at all is a syntax error, whatever serde would add.
            let syntax = toml::from_str::<toml::Table>(&doc.text).is_err();
            let hint = if syntax {
                "check the TOML syntax near this point"
            } else if message.contains("unknown field") {
                "remove the key, or check its spelling against `sixfold schema`"
            } else if message.contains("missing field") {
                "add the key; `sixfold schema` lists what each file needs"
            } else if message.contains("invalid type") || message.contains("expected") {
                "check the value's type against `sixfold schema`"
            } else {
                "check the TOML syntax near this point"
            };
            let d = match err.span() {
                Some(span) => doc.diag(span, message),
                None => Diagnostic::file(&doc.display, message),
            };
            diagnostics.push(d.with_hint(hint));
            None
        }
    }
}

fn is_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' || c.is_ascii_uppercase())
}

/// Splits `+++\n<toml>\n+++\n<body>`; `None` when there is no front matter.
fn front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("+++\n").or_else(|| text.strip_prefix("+++\r\n"))?;
    let end = rest.find("\n+++")?;
    let matter = rest.get(..=end)?;
    let after = rest.get(end + 4..)?;
    let body = after.split_once('\n').map(|(_, b)| b).unwrap_or("");
    Some((matter, body))
}

fn file_stem(relative: &str) -> &str {
    let name = relative.rsplit('/').next().unwrap_or(relative);
    name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name)
}

fn toml_table_to_json(map: &BTreeMap<String, toml::Value>) -> serde_json::Value {
    serde_json::to_value(map).unwrap_or(serde_json::Value::Null)
}

impl Bundle {
    /// Loads sources in order (later layers over earlier), with the default script limits.
    pub fn load(sources: &[BundleSource]) -> (Bundle, Vec<Diagnostic>) {
        Bundle::load_with(sources, ScriptLimits::default())
    }

    /// Loads sources in order with the given script limits.
    pub fn load_with(sources: &[BundleSource], limits: ScriptLimits) -> (Bundle, Vec<Diagnostic>) {
        let mut d = Vec::new();
        let host = ScriptHost::new(limits);
        let mut modes: Layered<(ModeFile, Option<String>)> = Layered::new();
        let mut policies: Layered<PolicyFile> = Layered::new();
        let mut patterns: Layered<PatternFile> = Layered::new();
        let mut providers: Layered<ProviderFile> = Layered::new();
        // `None`: the script is there but did not compile (already reported).
        let mut scripts: HashMap<(usize, String), Option<Script>> = HashMap::new();

        for (index, source) in sources.iter().enumerate() {
            for (relative, text) in &source.files {
                let mut doc = Doc {
                    source: index,
                    relative: relative.clone(),
                    display: source.display(relative),
                    text: Arc::from(text.as_str()),
                    line_offset: 0,
                };
                let folder = relative.split('/').next().unwrap_or("");
                if relative.ends_with(".rhai") {
                    // The shipped bundle's scripts are checked when it is built and tested, so they
                    // compile on first use; everyone else's are checked at every load.
                    let compiled = if source.label == crate::shipped::LABEL {
                        Some(ScriptHost::deferred(&doc.display, text))
                    } else {
                        host.compile(&doc.display, text).map_err(|diag| d.push(diag)).ok()
                    };
                    scripts.insert((index, relative.clone()), compiled);
                    continue;
                }
                match folder {
                    "modes" => {
                        let mut role = None;
                        if relative.ends_with(".md") {
                            let Some((matter, body)) = front_matter(text) else {
                                d.push(
                                    Diagnostic::at_line(&doc.display, 1, 1, "a mode written as Markdown needs TOML front matter")
                                        .with_hint("start the file with a line `+++`, the mode's keys, then another `+++`; the body is the role prompt"),
                                );
                                continue;
                            };
                            doc.text = Arc::from(matter);
                            doc.line_offset = 1;
                            role = Some(body.trim().to_string()).filter(|b| !b.is_empty());
                        }
                        if let Some(mode) = parse::<ModeFile>(&doc, &mut d) {
                            if mode.id != file_stem(relative) {
                                d.push(
                                    Diagnostic::file(
                                        &doc.display,
                                        format!("the mode's id `{}` is not its file's name", mode.id),
                                    )
                                    .with_hint(format!("name the file `{}` or change the id", mode.id)),
                                );
                            }
                            modes.insert(mode.id.clone(), doc, (mode, role), &mut d);
                        }
                    }
                    "policies" => {
                        if let Some(policy) = parse::<PolicyFile>(&doc, &mut d) {
                            policies.insert(policy.id.clone(), doc, policy, &mut d);
                        }
                    }
                    "patterns" => {
                        if let Some(pattern) = parse::<PatternFile>(&doc, &mut d) {
                            patterns.insert(pattern.id.clone(), doc, pattern, &mut d);
                        }
                    }
                    "providers" => {
                        if let Some(provider) = parse::<ProviderFile>(&doc, &mut d) {
                            providers.insert(provider.id.clone(), doc, provider, &mut d);
                        }
                    }
                    _ => {}
                }
            }
        }

        let mut bundle = Bundle {
            modes: BTreeMap::new(),
            policies: BTreeMap::new(),
            patterns: BTreeMap::new(),
            providers: BTreeMap::new(),
            rows: BTreeMap::new(),
            host,
            row_host: ScriptHost::new(ScriptLimits::for_facts()),
            examples: Vec::new(),
            classifier: Classifier::default(),
            mcp: BTreeMap::new(),
            acts: Vec::new(),
            deferred: Vec::new(),
            scripts: Vec::new(),
        };
        let mut compiler = Compiler {
            deferred: Vec::new(),
            scripts,
            path_sets: HashMap::new(),
            diagnostics: d,
        };
        compiler.compile_path_sets(&policies);
        compiler.compile_commands(&mut bundle, &policies);
        compiler.compile_acts_and_mcp(&mut bundle, &policies);
        compiler.compile_policies(&mut bundle, &policies);
        compiler.compile_modes(&mut bundle, &modes);
        compiler.compile_patterns(&mut bundle, &patterns);
        for (id, (doc, spec)) in providers.items {
            if !is_id(&id) {
                compiler.diagnostics.push(Diagnostic::file(
                    &doc.display,
                    format!("`{id}` is not a valid provider id"),
                ));
            }
            bundle.providers.insert(
                id,
                Provider {
                    spec,
                    file: doc.display,
                },
            );
        }
        compiler.check_row_evidence(&bundle);
        bundle.deferred = std::mem::take(&mut compiler.deferred);
        bundle.scripts = compiler.scripts.values().flatten().cloned().collect();
        (bundle, compiler.diagnostics)
    }

    /// The modes, by id.
    pub fn modes(&self) -> impl Iterator<Item = &Mode> {
        self.modes.values()
    }

    /// One mode.
    pub fn mode(&self, id: &str) -> Option<&Mode> {
        self.modes.get(id)
    }

    /// The policies, by id.
    pub fn policies(&self) -> impl Iterator<Item = &Policy> {
        self.policies.values()
    }

    /// The patterns, by id.
    pub fn patterns(&self) -> impl Iterator<Item = &Pattern> {
        self.patterns.values()
    }

    /// One pattern.
    pub fn pattern(&self, id: &str) -> Option<&Pattern> {
        self.patterns.get(id)
    }

    /// The providers, by id.
    pub fn providers(&self) -> impl Iterator<Item = &Provider> {
        self.providers.values()
    }

    /// One provider.
    pub fn provider(&self, id: &str) -> Option<&Provider> {
        self.providers.get(id)
    }

    /// The rows, by id.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.values()
    }

    /// The command classifier built from the bundle's command rules.
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    /// Classifies shell text run in `cwd`.
    pub fn classify(&self, command: &str, cwd: &std::path::Path) -> Classified {
        self.classifier.classify(command, cwd)
    }

    /// What an MCP server's tool does, from the bundle's `[mcp]` tables (`SERVER/TOOL` before
    /// `SERVER`); the conservative profile when no file names it.
    pub fn mcp_effects(
        &self,
        server: &str,
        tool: &str,
        input: &serde_json::Value,
        cwd: &std::path::Path,
    ) -> crate::provider::ToolEffects {
        let name = format!("{server}/{tool}");
        match self.mcp.get(&name).or_else(|| self.mcp.get(server)) {
            Some(spec) => crate::provider::tool_file_effects(spec, &name, input, cwd, &self.classifier),
            None => crate::provider::unknown_tool(&name),
        }
    }

    /// The act rules, in load order.
    pub fn act_rules(&self) -> &[ActRule] {
        &self.acts
    }

    /// Judges a step: the mode's judgement of its effects, then the act rules that name it. An
    /// act rule stricter than the mode decides; a more permissive one decides only when the step
    /// is within the mode's ceiling (a kept `allow` never lets `read-only` write).
    pub fn judge_step(&self, mode: &str, act: &ActView<'_>, effects: &Effects, context: &Context) -> Judgement {
        let judged = self.judge_effects(mode, effects, context);
        let Some(m) = self.modes.get(mode) else { return judged };
        let matched: Vec<&ActRule> = self
            .acts
            .iter()
            .filter(|r| r.modes.as_ref().is_none_or(|ms| ms.iter().any(|x| x == mode)))
            .filter(|r| r.matches(act, effects, &context.workspace))
            .collect();
        let Some(decision) = matched.iter().map(|r| r.decision).max() else {
            return judged;
        };
        let deciding: Vec<&&ActRule> = matched.iter().filter(|r| r.decision == decision).collect();
        let names: Vec<String> = deciding.iter().map(|r| format!("`{}` ({})", r.act, r.id)).collect();
        if decision < judged.decision && !m.judge.ceiling.exceeded(effects, &context.workspace).is_empty() {
            let mut kept = judged;
            kept.reason.push_str(&format!(
                "; the kept rule {} would {decision}, but not beyond the mode's ceiling",
                names.join(", ")
            ));
            return kept;
        }
        if decision == judged.decision {
            let mut same = judged;
            same.rules.extend(deciding.iter().map(|r| r.id.clone()));
            // A kept rule that decides the same is a working rule deciding: the ceiling stays
            // the ceiling, anything else becomes the rules'.
            if same.by != DecidedBy::Ceiling {
                same.by = DecidedBy::Rules;
            }
            return same;
        }
        Judgement {
            decision,
            reason: format!(
                "mode `{mode}` {} by the kept rule {} (the mode alone would {})",
                match decision {
                    Decision::Allow => "allows",
                    Decision::Ask => "asks",
                    Decision::Refuse => "refuses",
                },
                names.join(", "),
                judged.decision
            ),
            rules: deciding.iter().map(|r| r.id.clone()).collect(),
            mode: mode.to_string(),
            by: DecidedBy::Rules,
        }
    }

    /// What a row asks the agent to do when it is a gap.
    pub fn remedy(&self, row: &str) -> Option<&str> {
        self.rows.get(row).and_then(|r| r.remedy.as_deref())
    }

    /// How many examples the bundle's files carry.
    pub fn example_count(&self) -> usize {
        self.examples.len()
    }

    /// Judges a step's effects (as written) under a mode. A mode that does not exist is a
    /// refusal with the reason, never an allow.
    pub fn judge(&self, mode: &str, effects: &EffectProfile, context: &Context) -> Judgement {
        self.judge_effects(mode, &effects.resolve(&context.workspace), context)
    }

    /// Judges resolved effects under a mode.
    pub fn judge_effects(&self, mode: &str, effects: &Effects, context: &Context) -> Judgement {
        match self.modes.get(mode) {
            Some(m) => m.judge.judge(effects, context, &self.host),
            // INVARIANT (fail closed): a mode that is not there refuses, with the reason.
            None => Judgement::refuse_unjudgeable(mode, format!("there is no mode `{mode}` in the bundle")),
        }
    }

    /// Evaluates rows over facts, in the order given. An unknown row id is unk, with the reason.
    pub fn evaluate_rows(&self, ids: &[&str], facts: &serde_json::Value) -> Vec<RowResult> {
        self.evaluate(ids, Facts::Whole(facts))
    }

    /// Evaluates rows over a trace. Rows that fold over steps (`each_step`) read the trace one
    /// step at a time, so memory stays flat however long the run.
    pub fn evaluate_trace_rows(
        &self,
        ids: &[&str],
        trace: &crate::trace::Trace,
        workspace: &Workspace,
        extra: &serde_json::Map<String, serde_json::Value>,
    ) -> Vec<RowResult> {
        self.evaluate(ids, Facts::Trace(trace, workspace, extra))
    }

    fn evaluate(&self, ids: &[&str], facts: Facts<'_>) -> Vec<RowResult> {
        let mut done: HashMap<String, RowResult> = HashMap::new();
        let mut cx = RowContext {
            facts,
            done: &mut done,
            visiting: Vec::new(),
        };
        ids.iter().map(|id| self.evaluate_row(id, &mut cx)).collect()
    }

    /// The ids of the rows evaluated over one kind of facts, by policy then file order.
    pub fn rows_about(&self, facts: FactsKind) -> Vec<&str> {
        self.policies
            .values()
            .flat_map(|p| p.rows.iter())
            .filter(|id| self.rows.get(*id).is_some_and(|r| r.facts == facts))
            .map(String::as_str)
            .collect()
    }

    /// The ids of the rows a policy declares, in file order.
    pub fn policy_rows(&self, policy: &str) -> Vec<&str> {
        self.policies
            .get(policy)
            .map(|p| p.rows.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    fn evaluate_row(&self, id: &str, cx: &mut RowContext<'_>) -> RowResult {
        if let Some(r) = cx.done.get(id) {
            return r.clone();
        }
        let Some(row) = self.rows.get(id) else {
            return RowResult {
                id: id.to_string(),
                title: String::new(),
                assertion: Assertion::Effect,
                severity: Severity::Gating,
                verdict: Verdict::Unk,
                evidence: format!("there is no row `{id}` in the bundle"),
            };
        };
        let (verdict, evidence) = if cx.visiting.iter().any(|v| v == id) {
            (Verdict::Unk, format!("row `{id}` is its own evidence through a cycle"))
        } else {
            cx.visiting.push(id.to_string());
            let outcome = self.check_row(row, cx);
            cx.visiting.pop();
            outcome
        };
        let result = RowResult {
            id: row.id.clone(),
            title: row.title.clone(),
            assertion: row.assertion,
            severity: row.severity,
            verdict,
            evidence,
        };
        cx.done.insert(id.to_string(), result.clone());
        result
    }

    fn check_row(&self, row: &Row, cx: &mut RowContext<'_>) -> (Verdict, String) {
        match &row.check {
            RowCheck::Fact { fact, ok, gap } => {
                let value = cx.facts.lookup(fact);
                match value.as_ref() {
                    None | Some(serde_json::Value::Null) => {
                        (Verdict::Unk, format!("the fact `{fact}` is not in the record"))
                    }
                    Some(v) => {
                        let shown = format!("`{fact}` is {v}");
                        let holds = match (ok, gap) {
                            (Some(ok), _) => ok.contains(v),
                            (None, Some(gap)) => !gap.contains(v),
                            (None, None) => true,
                        };
                        (if holds { Verdict::Ok } else { Verdict::Gap }, shown)
                    }
                }
            }
            RowCheck::Evidence(ids) => {
                let results: Vec<RowResult> = ids.iter().map(|i| self.evaluate_row(i, cx)).collect();
                let list = |v: Verdict| {
                    results
                        .iter()
                        .filter(|r| r.verdict == v)
                        .map(|r| r.id.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                if results.iter().any(|r| r.verdict == Verdict::Gap) {
                    (
                        Verdict::Gap,
                        format!("its evidence did not hold: {}", list(Verdict::Gap)),
                    )
                } else if results.iter().any(|r| r.verdict == Verdict::Unk) {
                    (Verdict::Unk, format!("its evidence is unknown: {}", list(Verdict::Unk)))
                } else {
                    (Verdict::Ok, format!("its evidence held: {}", ids.join(", ")))
                }
            }
            RowCheck::Script {
                script,
                function,
                each_step,
                settings,
            } => {
                let settings = to_dynamic(settings);
                // Each row gets its own copy of what it reads, made when it runs and gone after:
                // rows cannot change what another reads.
                let facts = match each_step {
                    None => to_dynamic(&cx.facts.whole()),
                    Some(each) => {
                        let mut state = rhai::Dynamic::from_map(rhai::Map::new());
                        let mut failed = None;
                        cx.facts.for_each_step(&mut |step| {
                            if failed.is_some() {
                                return;
                            }
                            let args = vec![std::mem::take(&mut state), to_dynamic(step), settings.clone()];
                            match self.row_host.call(script, each, args) {
                                Ok(out) => state = out.value,
                                Err(err) => failed = Some(err),
                            }
                        });
                        if let Some(err) = failed {
                            return (Verdict::Unk, format!("the row's script failed: {err}"));
                        }
                        let mut head = to_dynamic(&cx.facts.head()).try_cast::<rhai::Map>().unwrap_or_default();
                        head.insert("state".into(), state);
                        rhai::Dynamic::from_map(head)
                    }
                };
                match self.row_host.call(script, function, vec![facts, settings]) {
                    Ok(out) => row_outcome(&out.value),
                    Err(err) => (Verdict::Unk, format!("the row's script failed: {err}")),
                }
            }
        }
    }

    /// Runs every example in the bundle; each one that fails is a diagnostic at its location.
    /// Scripts compiled on first use are compiled here first, and the functions rules and rows
    /// name in them checked.
    pub fn run_examples(&self) -> Vec<Diagnostic> {
        let mut failures: Vec<Diagnostic> = self.scripts.iter().filter_map(|s| self.host.check(s)).collect();
        for d in &self.deferred {
            if self.host.check(&d.script).is_none() && d.script.has_function(&d.function, d.arity) == Some(false) {
                failures.push(d.at.diagnostic());
            }
        }
        for example in &self.examples {
            let (expected, got, reason) = match &example.kind {
                ExampleKind::Judgement { owner, example: ex } => {
                    let mut context = Context::example();
                    if let serde_json::Value::Object(extra) = toml_table_to_json(&ex.context) {
                        context.extra = extra;
                    }
                    let judgement = match (ex.mode.as_deref(), owner) {
                        (Some(mode), _) => self.judge(mode, &ex.effects, &context),
                        (None, Some(policy)) => self.judge_with_policy(policy, &ex.effects, &context),
                        (None, None) => Judgement::refuse_unjudgeable("", "the example names no mode"),
                    };
                    (
                        ex.decision.to_string(),
                        judgement.decision.to_string(),
                        judgement.reason,
                    )
                }
                ExampleKind::Verdict(ex) => {
                    let facts = toml_table_to_json(&ex.facts);
                    // The launch facts an example writes must be ones the launcher makes.
                    if let Some(Err(why)) = facts.get("launch").map(crate::launch_facts::check_example) {
                        let mut d = example.at.diagnostic();
                        d.message = format!("{}: {why}", d.message);
                        failures.push(d.with_hint(crate::launch_facts::EXAMPLE_HINT));
                        continue;
                    }
                    let result = self.evaluate_rows(&[ex.row.as_str()], &facts);
                    let (verdict, evidence) = result
                        .first()
                        .map(|r| (r.verdict.to_string(), r.evidence.clone()))
                        .unwrap_or_default();
                    (ex.verdict.to_string(), verdict, evidence)
                }
                ExampleKind::Command {
                    rule,
                    matches,
                    not_match,
                } => {
                    let selected = |command: &str| -> Option<String> {
                        let line = crate::shell::parse(command);
                        let words = &line.commands.first()?.words;
                        let program = words.first()?.rsplit('/').next()?.to_string();
                        self.classifier.select(&program, words).map(|r| r.id.clone())
                    };
                    for command in matches {
                        let got = selected(command);
                        if got.as_deref() != Some(rule.as_str()) {
                            let mut d = example.at.diagnostic();
                            d.message = format!(
                                "{}: `{command}` should match it, but {}",
                                d.message,
                                got.map(|g| format!("rule `{g}` classifies it"))
                                    .unwrap_or_else(|| "no rule classifies it".into())
                            );
                            failures.push(d.with_hint("fix the rule's `prefix`/`flags`, or the example"));
                        }
                    }
                    for command in not_match {
                        if selected(command).as_deref() == Some(rule.as_str()) {
                            let mut d = example.at.diagnostic();
                            d.message = format!("{}: `{command}` should not match it, but does", d.message);
                            failures.push(d.with_hint("fix the rule's `prefix`/`flags`, or the example"));
                        }
                    }
                    continue;
                }
                ExampleKind::Spawn { pattern, example: ex } => {
                    let judgement = match self.patterns.get(pattern) {
                        Some(p) => p.judge_spawn(ex.helper.as_deref(), ex.spawned),
                        None => Judgement::refuse_unjudgeable(pattern, "the pattern did not load"),
                    };
                    (
                        ex.decision.to_string(),
                        judgement.decision.to_string(),
                        judgement.reason,
                    )
                }
            };
            if expected != got {
                let mut d = example.at.diagnostic();
                d.message = format!("{}: expected `{expected}`, got `{got}`", d.message);
                failures.push(d.with_hint(format!("what was said: {reason}")));
            }
        }
        failures
    }

    /// Judges with one policy's rules alone, `allow` where none matches.
    fn judge_with_policy(&self, policy: &str, effects: &EffectProfile, context: &Context) -> Judgement {
        let Some(p) = self.policies.get(policy) else {
            return Judgement::refuse_unjudgeable(policy, "the policy did not load");
        };
        let judge = Judge {
            mode: format!("policy:{policy}"),
            default: Decision::Allow,
            ceiling: Ceiling::default(),
            rules: p.rules.clone(),
        };
        judge.judge(&effects.resolve(&context.workspace), context, &self.host)
    }
}

fn row_outcome(value: &rhai::Dynamic) -> (Verdict, String) {
    let parse = |v: &rhai::Dynamic| v.clone().into_string().ok().and_then(|s| Verdict::parse(&s));
    if let Some(v) = parse(value) {
        return (v, String::new());
    }
    if let Some(map) = value.clone().try_cast::<rhai::Map>() {
        if let Some(v) = map.get("verdict").and_then(parse) {
            let evidence = map.get("evidence").map(|e| e.to_string()).unwrap_or_default();
            return (v, evidence);
        }
    }
    (
        Verdict::Unk,
        format!(
            "the row's script returned `{value}`; it must return \"ok\", \"gap\", \"unk\" or #{{verdict, evidence}}"
        ),
    )
}

struct Compiler {
    deferred: Vec<Deferred>,
    scripts: HashMap<(usize, String), Option<Script>>,
    path_sets: HashMap<String, Arc<PathSet>>,
    diagnostics: Vec<Diagnostic>,
}

impl Compiler {
    fn compile_commands(&mut self, bundle: &mut Bundle, policies: &Layered<PolicyFile>) {
        let mut ordered: Vec<&(Doc, PolicyFile)> = policies.items.values().collect();
        ordered.sort_by_key(|(doc, _)| (doc.source, doc.relative.clone()));
        let mut checks: Vec<(Doc, Range<usize>, String, CommandRuleFile)> = Vec::new();
        for (doc, policy) in ordered {
            for w in &policy.wrappers {
                bundle.classifier.add_wrapper(
                    &w.program,
                    Wrapper {
                        flags_with_value: w.flags_with_value.clone(),
                        positional: w.positional,
                    },
                );
            }
            for spanned in &policy.commands {
                let r = spanned.get_ref();
                if r.prefix.is_empty() || r.prefix.iter().any(|p| p.is_empty()) {
                    self.diagnostics.push(doc.diag(
                        spanned.span(),
                        format!("command rule `{}` needs a non-empty `prefix`", r.id),
                    ));
                    continue;
                }
                if r.shell && r.flags.is_none() {
                    self.diagnostics.push(
                        doc.diag(
                            spanned.span(),
                            format!("command rule `{}` is a shell but names no flag", r.id),
                        )
                        .with_hint(
                            "`shell = true` classifies the word after the matched flag, e.g. flags = [\"-c\", \"-*c\"]",
                        ),
                    );
                    continue;
                }
                let id = format!("{}/{}", policy.id, r.id);
                bundle.classifier.add_rule(CommandRule {
                    id: id.clone(),
                    prefix: r
                        .prefix
                        .iter()
                        .map(|p| p.split('|').map(String::from).collect())
                        .collect(),
                    flags: r.flags.clone(),
                    reads: r.reads.clone(),
                    writes: r.writes.clone(),
                    reaches: r.reaches,
                    reversible: r.reversible.unwrap_or(true),
                    contained: r.contained,
                    costs: r.costs,
                    unknown: r.unknown,
                    shell: r.shell,
                });
                checks.push((doc.clone(), spanned.span(), id, r.clone()));
            }
        }
        // Examples run with the bundle's other examples (`sixfold check`), against the whole
        // classifier, so they also catch a rule shadowed by another.
        for (doc, span, id, r) in checks {
            bundle.examples.push(Example {
                at: Located::new(&doc, span, format!("command rule `{}`", r.id)),
                kind: ExampleKind::Command {
                    rule: id,
                    matches: r.matches.clone(),
                    not_match: r.not_match.clone(),
                },
            });
        }
    }

    fn compile_acts_and_mcp(&mut self, bundle: &mut Bundle, policies: &Layered<PolicyFile>) {
        let mut ordered: Vec<&(Doc, PolicyFile)> = policies.items.values().collect();
        ordered.sort_by_key(|(doc, _)| (doc.source, doc.relative.clone()));
        for (doc, policy) in ordered {
            for (name, spec) in &policy.mcp {
                bundle.mcp.insert(name.clone(), spec.clone());
            }
            for spanned in &policy.acts {
                let a = spanned.get_ref();
                let matcher = match (&a.command, &a.path, &a.domain) {
                    (Some(c), None, None) if !c.trim().is_empty() => {
                        ActMatcher::Command(c.split_whitespace().map(String::from).collect())
                    }
                    (None, Some(p), None) => match PathSet::new(p, std::slice::from_ref(p)) {
                        Ok(set) => ActMatcher::Path(Arc::new(set)),
                        Err(message) => {
                            self.diagnostics.push(doc.diag(spanned.span(), message));
                            continue;
                        }
                    },
                    (None, None, Some(d)) if !d.is_empty() && !d.contains('/') => ActMatcher::Domain(d.to_lowercase()),
                    _ => {
                        self.diagnostics.push(
                            doc.diag(
                                spanned.span(),
                                format!(
                                    "act rule `{}` needs exactly one of `command`, `path` and `domain`",
                                    a.id
                                ),
                            )
                            .with_hint(
                                "a command prefix (`cargo test`), a path glob (`src/**`) or a domain (`crates.io`)",
                            ),
                        );
                        continue;
                    }
                };
                let act = a
                    .command
                    .clone()
                    .or(a.path.clone())
                    .or(a.domain.clone())
                    .unwrap_or_default();
                bundle.acts.push(ActRule {
                    id: format!("{}/{}", policy.id, a.id),
                    decision: a.decision,
                    modes: a.modes.clone(),
                    matcher,
                    act,
                });
            }
        }
    }

    fn compile_path_sets(&mut self, policies: &Layered<PolicyFile>) {
        let mut ordered: Vec<&(Doc, PolicyFile)> = policies.items.values().collect();
        ordered.sort_by_key(|(doc, _)| (doc.source, doc.relative.clone()));
        for (doc, policy) in ordered {
            for (name, set) in &policy.paths {
                match PathSet::new(name, &set.globs) {
                    Ok(compiled) => {
                        self.path_sets.insert(name.clone(), Arc::new(compiled));
                    }
                    Err(message) => self.diagnostics.push(
                        Diagnostic::file(&doc.display, format!("path set `{name}`: {message}"))
                            .with_hint("globs use `*`, `**`, `?`, `[…]` and `{a,b}`"),
                    ),
                }
            }
        }
    }

    fn script(
        &mut self,
        doc: &Doc,
        span: Range<usize>,
        script: &Option<String>,
        function: &Option<String>,
        arity: usize,
    ) -> Option<Option<(Script, String)>> {
        match (script, function) {
            (None, None) => Some(None),
            (Some(file), Some(function)) => {
                let key = (doc.source, doc.sibling(file));
                let compiled = match self.scripts.get(&key) {
                    Some(Some(compiled)) => compiled,
                    // There, but it did not compile: reported already.
                    Some(None) => return None,
                    None => {
                        self.diagnostics.push(
                            doc.diag(span, format!("the script `{file}` is not in the bundle"))
                                .with_hint("scripts are `.rhai` files beside the policy or mode that names them"),
                        );
                        return None;
                    }
                };
                let missing = format!("the script `{file}` has no function `{function}` taking {arity} parameters");
                match compiled.has_function(function, arity) {
                    Some(true) => {}
                    Some(false) => {
                        self.diagnostics.push(doc.diag(span, missing));
                        return None;
                    }
                    // Compiled on first use: checked by `sixfold check` (a missing function
                    // would make the rule refuse, never allow).
                    None => self.deferred.push(Deferred {
                        at: Located::new(doc, span, missing),
                        script: compiled.clone(),
                        function: function.clone(),
                        arity,
                    }),
                }
                Some(Some((compiled.clone(), function.clone())))
            }
            _ => {
                self.diagnostics.push(
                    doc.diag(span, "`script` and `function` go together")
                        .with_hint("name the Rhai file in `script` and the function in it in `function`"),
                );
                None
            }
        }
    }

    fn matchers(
        &mut self,
        doc: &Doc,
        span: Range<usize>,
        entries: &Option<Vec<String>>,
    ) -> Option<Option<Vec<PlaceMatcher>>> {
        let Some(entries) = entries else { return Some(None) };
        let mut out = Vec::new();
        for entry in entries {
            let matcher = match entry.as_str() {
                "any" => PlaceMatcher::Any,
                "workspace" => PlaceMatcher::Workspace,
                "tmp" => PlaceMatcher::Tmp,
                "outside" => PlaceMatcher::Outside,
                "unknown" => PlaceMatcher::Unknown,
                name if name.starts_with('@') => {
                    let Some(set) = self.path_sets.get(&name[1..]) else {
                        let known: Vec<String> = self.path_sets.keys().map(|k| format!("`@{k}`")).collect();
                        self.diagnostics
                            .push(
                                doc.diag(span, format!("there is no path set `{name}`"))
                                    .with_hint(format!(
                                        "path sets are declared in policy files under [paths.NAME]; known: {}",
                                        known.join(", ")
                                    )),
                            );
                        return None;
                    };
                    PlaceMatcher::Paths(set.clone())
                }
                glob => match PathSet::new(glob, &[glob.to_string()]) {
                    Ok(set) => PlaceMatcher::Paths(Arc::new(set)),
                    Err(message) => {
                        self.diagnostics.push(doc.diag(span, message).with_hint(
                            "an entry is `any`, `workspace`, `tmp`, `outside`, `unknown`, `@NAME` or a path glob",
                        ));
                        return None;
                    }
                },
            };
            out.push(matcher);
        }
        Some(Some(out))
    }

    /// Compiles a rule. A rule that cannot be compiled is reported and kept as a broken rule
    /// that refuses every step: dropping it could make a judgement more permissive.
    fn rule(&mut self, owner: &str, doc: &Doc, spanned: &Spanned<RuleFile>, settings: &serde_json::Value) -> Rule {
        let span = spanned.span();
        let r = spanned.get_ref();
        let id = format!("{owner}/{}", r.id);
        let before = self.diagnostics.len();
        let reads = self.matchers(doc, span.clone(), &r.when.reads);
        let writes = self.matchers(doc, span.clone(), &r.when.writes);
        let script = self.script(doc, span, &r.script, &r.function, 2);
        let (Some(reads), Some(writes), Some(script)) = (reads, writes, script) else {
            let why = self
                .diagnostics
                .get(before)
                .map(|d| format!("{} at {}", d.message, d.location()))
                .unwrap_or_default();
            return Rule {
                id,
                decision: Decision::Refuse,
                reason: format!("the rule could not be loaded, so it refuses: {why}"),
                when: When::default(),
                script: None,
            };
        };
        Rule {
            id,
            decision: r.decision,
            reason: r.reason.clone(),
            when: When {
                reads,
                writes,
                reaches: r.when.reaches,
                reversible: r.when.reversible,
                contained: r.when.contained,
                costs: r.when.costs,
            },
            script: script.map(|(script, function)| RuleScript {
                script,
                function,
                settings: to_dynamic(settings),
            }),
        }
    }

    fn rules(
        &mut self,
        owner: &str,
        doc: &Doc,
        rules: &[Spanned<RuleFile>],
        settings: &serde_json::Value,
    ) -> Vec<Arc<Rule>> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for spanned in rules {
            if !seen.insert(spanned.get_ref().id.clone()) {
                self.diagnostics.push(doc.diag(
                    spanned.span(),
                    format!("the rule id `{}` is used twice in this file", spanned.get_ref().id),
                ));
                continue;
            }
            out.push(Arc::new(self.rule(owner, doc, spanned, settings)));
        }
        out
    }

    fn example(doc: &Doc, span: Range<usize>, what: &str, note: &Option<String>) -> Located {
        let mut message = format!("{what} example failed");
        if let Some(note) = note {
            message.push_str(&format!(" ({note})"));
        }
        Located::new(doc, span, message)
    }

    fn compile_policies(&mut self, bundle: &mut Bundle, policies: &Layered<PolicyFile>) {
        for (id, (doc, p)) in &policies.items {
            let settings = toml_table_to_json(&p.settings);
            let rules = self.rules(id, doc, &p.rules, &settings);
            let mut rows = Vec::new();
            for spanned in &p.rows {
                let span = spanned.span();
                let r = spanned.get_ref();
                let checks = usize::from(r.check.is_some())
                    + usize::from(r.evidence.is_some())
                    + usize::from(r.script.is_some() || r.function.is_some());
                if checks != 1 {
                    self.diagnostics.push(doc.diag(
                        span,
                        format!(
                            "row `{}` needs exactly one of `check`, `evidence`, or `script` with `function`",
                            r.id
                        ),
                    ));
                    continue;
                }
                let check = if let Some(c) = &r.check {
                    let values = |v: &Option<Vec<toml::Value>>| {
                        v.as_ref()
                            .map(|v| v.iter().map(|x| serde_json::to_value(x).unwrap_or_default()).collect())
                    };
                    RowCheck::Fact {
                        fact: c.fact.clone(),
                        ok: values(&c.ok),
                        gap: values(&c.gap),
                    }
                } else if let Some(e) = &r.evidence {
                    RowCheck::Evidence(e.clone())
                } else {
                    match self.script(doc, span.clone(), &r.script, &r.function, 2) {
                        Some(Some((script, function))) => {
                            if let Some(each) = &r.each_step {
                                if let Some(Some((_, each))) =
                                    self.script(doc, span.clone(), &r.script, &Some(each.clone()), 3)
                                {
                                    RowCheck::Script {
                                        script,
                                        function,
                                        each_step: Some(each),
                                        settings: settings.clone(),
                                    }
                                } else {
                                    continue;
                                }
                            } else {
                                RowCheck::Script {
                                    script,
                                    function,
                                    each_step: None,
                                    settings: settings.clone(),
                                }
                            }
                        }
                        _ => continue,
                    }
                };
                if let Some(existing) = bundle.rows.get(&r.id) {
                    if existing.policy != *id {
                        self.diagnostics.push(doc.diag(
                            spanned.span(),
                            format!("row `{}` is also declared by policy `{}`", r.id, existing.policy),
                        ));
                        continue;
                    }
                }
                rows.push(r.id.clone());
                bundle.rows.insert(
                    r.id.clone(),
                    Row {
                        id: r.id.clone(),
                        title: r.title.clone(),
                        assertion: r.assertion,
                        severity: r.severity,
                        policy: id.clone(),
                        facts: r.facts,
                        remedy: r.remedy.clone(),
                        check,
                    },
                );
            }
            for spanned in &p.examples {
                let ex = spanned.get_ref();
                bundle.examples.push(Example {
                    at: Self::example(doc, spanned.span(), "judgement", &ex.note),
                    kind: ExampleKind::Judgement {
                        owner: Some(id.clone()),
                        example: ex.clone(),
                    },
                });
            }
            for spanned in &p.row_examples {
                let ex = spanned.get_ref();
                bundle.examples.push(Example {
                    at: Self::example(doc, spanned.span(), "verdict", &ex.note),
                    kind: ExampleKind::Verdict(ex.clone()),
                });
            }
            bundle.policies.insert(
                id.clone(),
                Policy {
                    id: id.clone(),
                    description: p.description.clone(),
                    file: doc.display.clone(),
                    rules,
                    rows,
                    settings,
                },
            );
        }
    }

    fn check_row_evidence(&mut self, bundle: &Bundle) {
        for row in bundle.rows.values() {
            if let RowCheck::Evidence(ids) = &row.check {
                for id in ids {
                    if !bundle.rows.contains_key(id) {
                        let file = bundle
                            .policies
                            .get(&row.policy)
                            .map(|p| p.file.clone())
                            .unwrap_or_default();
                        self.diagnostics.push(Diagnostic::file(
                            file,
                            format!("row `{}` names `{id}` as evidence, and there is no such row", row.id),
                        ));
                    }
                }
            }
        }
    }

    fn compile_modes(&mut self, bundle: &mut Bundle, modes: &Layered<(ModeFile, Option<String>)>) {
        let ids: Vec<String> = modes.items.keys().cloned().collect();
        for id in ids {
            self.compile_mode(bundle, modes, &id, &mut Vec::new());
        }
    }

    fn compile_mode(
        &mut self,
        bundle: &mut Bundle,
        modes: &Layered<(ModeFile, Option<String>)>,
        id: &str,
        stack: &mut Vec<String>,
    ) -> bool {
        if bundle.modes.contains_key(id) {
            return true;
        }
        let Some((doc, (m, role))) = modes.items.get(id) else {
            return false;
        };
        if !is_id(id) {
            self.diagnostics.push(
                Diagnostic::file(&doc.display, format!("`{id}` is not a valid mode id"))
                    .with_hint("use lowercase letters, digits and `-`"),
            );
            return false;
        }
        if stack.iter().any(|s| s == id) {
            self.diagnostics.push(Diagnostic::file(
                &doc.display,
                format!("mode `{id}` extends itself through {}", stack.join(" → ")),
            ));
            return false;
        }
        let parent = match &m.extends {
            None => None,
            Some(ext) => {
                let name = ext.get_ref();
                stack.push(id.to_string());
                let loaded = self.compile_mode(bundle, modes, name, stack);
                stack.pop();
                if !loaded {
                    let exists = modes.items.contains_key(name.as_str());
                    let message = if exists {
                        format!("mode `{id}` extends `{name}`, which did not load")
                    } else {
                        format!("mode `{id}` extends `{name}`, which does not exist")
                    };
                    let known: Vec<String> = modes.items.keys().map(|k| format!("`{k}`")).collect();
                    self.diagnostics.push(
                        doc.diag(ext.span(), message)
                            .with_hint(format!("the modes are {}", known.join(", "))),
                    );
                    return false;
                }
                bundle.modes.get(name.as_str()).map(|p| p.judge.clone())
            }
        };
        let own_ceiling = m.ceiling.as_ref().map(|c| Ceiling {
            reads: c.reads.clone(),
            writes: c.writes.clone(),
            reaches: c.reaches,
            reversible: c.reversible,
            contained: c.contained,
            costs: c.costs,
        });
        let mut rules: Vec<Arc<Rule>> = parent.as_ref().map(|p| p.rules.clone()).unwrap_or_default();
        let mut new_rules: Vec<Arc<Rule>> = Vec::new();
        let mut ok = true;
        for include in &m.include {
            match bundle.policies.get(include.get_ref()) {
                Some(p) => new_rules.extend(p.rules.iter().cloned()),
                None => {
                    let known: Vec<String> = bundle.policies.keys().map(|k| format!("`{k}`")).collect();
                    self.diagnostics.push(
                        doc.diag(
                            include.span(),
                            format!(
                                "mode `{id}` includes the policy `{}`, which does not exist",
                                include.get_ref()
                            ),
                        )
                        .with_hint(format!("the policies are {}", known.join(", "))),
                    );
                    ok = false;
                }
            }
        }
        new_rules.extend(self.rules(id, doc, &m.rules, &serde_json::Value::Null));
        let default = m
            .default
            .or(parent.as_ref().map(|p| p.default))
            .unwrap_or(Decision::Refuse);
        let mut ceiling = own_ceiling.clone().unwrap_or_default();
        if let Some(p) = &parent {
            let check_ws = Workspace::new("/workspace").with_home("/home/user").with_tmp("/tmp");
            let extends_span = m.extends.as_ref().map(|e| e.span()).unwrap_or(0..0);
            if let Some(own) = &own_ceiling {
                // Fields the mode leaves out are inherited, so only the ones it sets can widen.
                if let Err(why) = own.or(&p.ceiling).le(&p.ceiling, &check_ws) {
                    self.diagnostics.push(
                        doc.diag(
                            extends_span.clone(),
                            format!("mode `{id}` widens the mode it extends: its ceiling's {why}"),
                        )
                        .with_hint("a mode that extends another may only narrow it"),
                    );
                    ok = false;
                }
            }
            if default < p.default {
                self.diagnostics.push(doc.diag(extends_span.clone(), format!("mode `{id}` widens the mode it extends: its default `{default}` is more permissive than `{}`", p.default))
                    .with_hint("a mode that extends another may only narrow it"));
                ok = false;
            }
            for rule in &new_rules {
                if rule.decision < p.default {
                    self.diagnostics.push(doc.diag(extends_span.clone(), format!(
                        "mode `{id}` widens the mode it extends: rule `{}` decides `{}`, more permissive than that mode's default `{}`",
                        rule.id, rule.decision, p.default
                    )).with_hint("a mode that extends another may only narrow it: its rules decide at least the default they inherit"));
                    ok = false;
                }
            }
            ceiling = ceiling.or(&p.ceiling);
        }
        if !ok {
            return false;
        }
        rules.extend(new_rules);
        for spanned in &m.examples {
            let mut ex = spanned.get_ref().clone();
            ex.mode.get_or_insert_with(|| id.to_string());
            bundle.examples.push(Example {
                at: Self::example(doc, spanned.span(), "judgement", &ex.note),
                kind: ExampleKind::Judgement {
                    owner: None,
                    example: ex,
                },
            });
        }
        let mut behaviour = m.behaviour.clone().unwrap_or_default();
        if role.is_some() {
            behaviour.role = role.clone();
        }
        bundle.modes.insert(
            id.to_string(),
            Mode {
                id: id.to_string(),
                name: m.name.clone(),
                description: m.description.clone(),
                environment: m.environment.clone(),
                behaviour,
                extends: m.extends.as_ref().map(|e| e.get_ref().clone()),
                file: doc.display.clone(),
                judge: Judge {
                    mode: id.to_string(),
                    default,
                    ceiling,
                    rules,
                },
            },
        );
        true
    }

    fn compile_patterns(&mut self, bundle: &mut Bundle, patterns: &Layered<PatternFile>) {
        for (id, (doc, spec)) in &patterns.items {
            if !spec.meta_tools.contains(&MetaTool::Spawn)
                && (spec.limits.spawns.unwrap_or(0) > 0 || spec.helpers.is_some())
            {
                self.diagnostics.push(
                    Diagnostic::file(
                        &doc.display,
                        format!("pattern `{id}` limits or names helpers but does not offer `spawn`"),
                    )
                    .with_hint("add `spawn` to `meta_tools`, or remove `limits.spawns` and `helpers`"),
                );
                continue;
            }
            for spanned in &spec.examples {
                let ex = spanned.get_ref();
                bundle.examples.push(Example {
                    at: Self::example(doc, spanned.span(), "spawn", &ex.note),
                    kind: ExampleKind::Spawn {
                        pattern: id.clone(),
                        example: ex.clone(),
                    },
                });
            }
            bundle.patterns.insert(
                id.clone(),
                Pattern {
                    spec: spec.clone(),
                    file: doc.display.clone(),
                },
            );
        }
    }
}

#[cfg(test)]
mod tests;
