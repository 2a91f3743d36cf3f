//! Compiling documents into the loaded model, one kind per file. Every problem is a diagnostic
//! and compiling goes on; what cannot be compiled is left out, or, for a rule, kept as one that
//! refuses.

mod acts;
mod commands;
pub(crate) mod environments;
mod modes;
mod patterns;
mod policies;

use super::read::{compile, Doc, Located, ScriptFile};
use crate::decision::Decision;
use crate::diag::Diagnostic;
use crate::format::RuleFile;
use crate::format::Spanned;
use crate::judge::{PathSet, PlaceMatcher, Rule, RuleScript, When};
use crate::script::{to_dynamic, Script, ScriptHost};
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

/// A script function named by a rule or row, to be checked once the script is compiled.
#[derive(Debug, Clone)]
pub(crate) struct Deferred {
    pub(crate) at: Located,
    pub(crate) script: Script,
    pub(crate) function: String,
    pub(crate) arity: usize,
}

/// What compiling carries from one kind to the next: scripts, path sets, the functions to check
/// later, and the diagnostics so far.
pub(crate) struct Compiler<'h> {
    host: &'h ScriptHost,
    /// Rows and examples are compiled too (a whole load, not one judgement's).
    whole: bool,
    deferred: Vec<Deferred>,
    scripts: HashMap<(usize, String), ScriptFile>,
    path_sets: HashMap<String, Arc<PathSet>>,
    diagnostics: Vec<Diagnostic>,
}

/// A problem already reported as a diagnostic: the caller leaves the item out (or, for a rule,
/// keeps it refusing) and goes on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reported;

impl<'h> Compiler<'h> {
    pub(crate) fn new(
        host: &'h ScriptHost,
        whole: bool,
        scripts: HashMap<(usize, String), ScriptFile>,
        diagnostics: Vec<Diagnostic>,
    ) -> Compiler<'h> {
        Compiler {
            host,
            whole,
            deferred: Vec::new(),
            scripts,
            path_sets: HashMap::new(),
            diagnostics,
        }
    }

    /// The path sets compiled so far, for the bundle to keep.
    pub(crate) fn path_sets(&self) -> std::collections::BTreeMap<String, Arc<PathSet>> {
        self.path_sets.iter().map(|(k, v)| (k.clone(), Arc::clone(v))).collect()
    }

    /// The functions to check when the bundle's examples run, every script compiled, and the
    /// diagnostics.
    pub(crate) fn finish(self) -> (Vec<Deferred>, Vec<Script>, Vec<Diagnostic>) {
        let scripts = self
            .scripts
            .into_values()
            .filter_map(|file| match file {
                ScriptFile::Compiled(script) => script,
                ScriptFile::Unread { .. } => None,
            })
            .collect();
        (self.deferred, scripts, self.diagnostics)
    }

    /// The compiled script at `key`: `Err(true)` when there is none, `Err(false)` when it did not
    /// compile (reported already). A script left unread is compiled now.
    fn compiled(&mut self, key: &(usize, String)) -> Result<Script, bool> {
        let Some(file) = self.scripts.get_mut(key) else {
            return Err(true);
        };
        if let ScriptFile::Unread { display, text, shipped } = file {
            let script = compile(self.host, display, text, *shipped, &mut self.diagnostics);
            *file = ScriptFile::Compiled(script);
        }
        match file {
            ScriptFile::Compiled(Some(script)) => Ok(script.clone()),
            _ => Err(false),
        }
    }

    fn script(
        &mut self,
        doc: &Doc,
        span: Range<usize>,
        script: &Option<String>,
        function: &Option<String>,
        arity: usize,
    ) -> Result<Option<(Script, String)>, Reported> {
        match (script, function) {
            (None, None) => Ok(None),
            (Some(file), Some(function)) => {
                let key = (doc.source, doc.sibling(file));
                let compiled = match self.compiled(&key) {
                    Ok(compiled) => compiled,
                    // There, but it did not compile: reported already.
                    Err(false) => return Err(Reported),
                    Err(true) => {
                        self.diagnostics.push(
                            doc.diag(span, format!("the script `{file}` is not in the bundle"))
                                .with_hint("scripts are `.rhai` files beside the policy or mode that names them"),
                        );
                        return Err(Reported);
                    }
                };
                let missing = format!("the script `{file}` has no function `{function}` taking {arity} parameters");
                match compiled.has_function(function, arity) {
                    Some(true) => {}
                    Some(false) => {
                        self.diagnostics.push(doc.diag(span, missing));
                        return Err(Reported);
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
                Ok(Some((compiled, function.clone())))
            }
            _ => {
                self.diagnostics.push(
                    doc.diag(span, "`script` and `function` go together")
                        .with_hint("name the Rhai file in `script` and the function in it in `function`"),
                );
                Err(Reported)
            }
        }
    }

    fn matchers(
        &mut self,
        doc: &Doc,
        span: Range<usize>,
        entries: &Option<Vec<String>>,
    ) -> Result<Option<Vec<PlaceMatcher>>, Reported> {
        let Some(entries) = entries else { return Ok(None) };
        let mut out = Vec::new();
        for entry in entries {
            let matcher = match place_entry(entry) {
                PlaceEntry::Named(matcher) => matcher,
                PlaceEntry::Set(name) => {
                    let covers = name.starts_with("covers:");
                    let set_name = name.trim_start_matches("covers:").trim_start_matches('@');
                    let Some(set) = self.path_sets.get(set_name) else {
                        let known: Vec<String> = self.path_sets.keys().map(|k| format!("`@{k}`")).collect();
                        self.diagnostics
                            .push(
                                doc.diag(span, format!("there is no path set `{name}`"))
                                    .with_hint(format!(
                                        "path sets are declared in policy files under [paths.NAME]; known: {}",
                                        known.join(", ")
                                    )),
                            );
                        return Err(Reported);
                    };
                    if covers {
                        PlaceMatcher::Covers(set.clone())
                    } else {
                        PlaceMatcher::Paths(set.clone())
                    }
                }
                PlaceEntry::Glob(glob) => match PathSet::inline(glob) {
                    Ok(set) => PlaceMatcher::Paths(Arc::new(set)),
                    Err(message) => {
                        self.diagnostics.push(doc.diag(span, message).with_hint(
                            "an entry is `any`, `workspace`, `tmp`, `outside`, `unknown`, `@NAME`, `covers:@NAME` or a path glob",
                        ));
                        return Err(Reported);
                    }
                },
            };
            out.push(matcher);
        }
        Ok(Some(out))
    }

    /// Compiles a rule. A rule that cannot be compiled is reported and kept as a broken rule
    /// that refuses every step: dropping it could make a judgement more permissive.
    fn rule(&mut self, owner: &str, doc: &Doc, spanned: &Spanned<RuleFile>, settings: &serde_json::Value) -> Rule {
        let span = spanned.span();
        let r = spanned.get_ref();
        let id = qualified(owner, &r.id);
        let before = self.diagnostics.len();
        let reads = self.matchers(doc, span.clone(), &r.when.reads);
        let writes = self.matchers(doc, span.clone(), &r.when.writes);
        let script = self.script(doc, span, &r.script, &r.function, 2);
        // INVARIANT (fail closed): a rule that cannot be compiled stays, refusing every step.
        let (Ok(reads), Ok(writes), Ok(script)) = (reads, writes, script) else {
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
                ceiling: true,
            };
        };
        Rule {
            id,
            decision: r.decision,
            reason: r.reason.clone(),
            when: r.when.with_scopes(reads, writes),
            ceiling: r.ceiling,
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
        let mut seen = HashSet::with_capacity(rules.len());
        let mut out = Vec::with_capacity(rules.len());
        for spanned in rules {
            if !seen.insert(spanned.get_ref().id.as_str()) {
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
}

/// A mode's rules read after its load (`unread_rules`), compiled as its load compiles its own
/// (no settings); an error where one does not compile as it did then (a forged entry).
pub(crate) fn rules_read_later(
    host: &ScriptHost,
    owner: &str,
    doc: &Doc,
    rules: &[Spanned<RuleFile>],
) -> Result<Vec<Rule>, ()> {
    let mut compiler = Compiler::new(host, false, HashMap::new(), Vec::new());
    let out = rules
        .iter()
        .map(|rule| compiler.rule(owner, doc, rule, &serde_json::Value::Null))
        .collect();
    if compiler.diagnostics.is_empty() {
        Ok(out)
    } else {
        Err(())
    }
}

/// What an entry of a rule's `reads` or `writes` names.
pub(crate) enum PlaceEntry<'e> {
    /// `any`, `workspace`, `tmp`, `outside` or `unknown`.
    Named(PlaceMatcher),
    /// `@NAME` or `covers:@NAME`.
    Set(&'e str),
    /// A path glob, a set of one.
    Glob(&'e str),
}

/// Reads an entry of `reads` or `writes`.
pub(crate) fn place_entry(entry: &str) -> PlaceEntry<'_> {
    match entry {
        "any" => PlaceEntry::Named(PlaceMatcher::Any),
        "workspace" => PlaceEntry::Named(PlaceMatcher::Workspace),
        "tmp" => PlaceEntry::Named(PlaceMatcher::Tmp),
        "outside" => PlaceEntry::Named(PlaceMatcher::Outside),
        "unknown" => PlaceEntry::Named(PlaceMatcher::Unknown),
        name if name.starts_with('@') || name.starts_with("covers:@") => PlaceEntry::Set(name),
        glob => PlaceEntry::Glob(glob),
    }
}

/// A rule's id as judgements name it: `OWNER/ID`. Built by hand: `format!` costs more than the
/// copy, and a large mode or a kept-rules file makes a thousand of them per load.
pub(crate) fn qualified(owner: &str, id: &str) -> String {
    let mut out = String::with_capacity(owner.len() + 1 + id.len());
    out.push_str(owner);
    out.push('/');
    out.push_str(id);
    out
}
