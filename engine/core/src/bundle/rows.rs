//! Rows and their facts: evaluating what must hold about a run, each row ending in a verdict.

use super::Bundle;
use crate::format::FactsKind;
use crate::scope::Workspace;
use crate::script::{to_dynamic, Script};
use crate::verdict::{Assertion, RowResult, Severity, Verdict};
use std::collections::HashMap;

/// Where rows read their facts from: facts already whole (examples, the live hooks), or a trace
/// whose steps are made into facts one at a time.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Facts<'a> {
    /// Whole facts.
    Whole(&'a serde_json::Value),
    /// A trace, its workspace, and facts to add beside it (e.g. `diff`).
    Trace(
        &'a crate::trace::Trace,
        &'a Workspace,
        &'a serde_json::Map<String, serde_json::Value>,
    ),
}

/// The most a trace's steps may come to, as JSON, when a row reads them whole (a row without
/// `each_step`, or a fact under `steps`). Made whole, a run's steps are held twice more (as JSON
/// values, then as the script's values) for as long as the row runs, so a long run would make
/// memory grow with its length; past this bound the row is unk and says so, and a row over long
/// runs folds over the steps with `each_step` instead.
pub const MAX_WHOLE_STEPS_BYTES: u64 = 8 * 1024 * 1024;

impl Facts<'_> {
    /// The whole facts (made, for a trace, within `max_bytes` of steps), or why not.
    fn whole(&self, max_bytes: u64) -> Result<std::borrow::Cow<'_, serde_json::Value>, String> {
        match self {
            Facts::Whole(v) => Ok(std::borrow::Cow::Borrowed(v)),
            Facts::Trace(trace, workspace, extra) => {
                // INVARIANT (fail closed): steps too many to hold make the row unk, never ok.
                let mut v = trace.facts_within(workspace, max_bytes).map_err(|b| {
                    format!(
                        "the row reads the run's steps whole, and they come to more than {} KiB of facts (passed at step {} of {}); a row over runs this long folds over the steps with `each_step`",
                        b.max_bytes / 1024,
                        b.made + 1,
                        b.steps
                    )
                })?;
                if let Some(obj) = v.as_object_mut() {
                    obj.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                Ok(std::borrow::Cow::Owned(v))
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

    /// The value at a dotted path, or why the facts it lies in could not be made.
    fn lookup(&self, path: &str, max_bytes: u64) -> Result<Option<serde_json::Value>, String> {
        let mut parts = path.split('.').peekable();
        let whole = match self {
            Facts::Whole(v) => std::borrow::Cow::Borrowed(*v),
            // A data check reads one fact: a trace's steps are not made for it unless it names
            // them, and one step named by its index is made alone.
            Facts::Trace(..) if parts.peek() != Some(&"steps") => std::borrow::Cow::Owned(self.head()),
            Facts::Trace(trace, workspace, _) => {
                let index = path.split('.').nth(1).and_then(|i| i.parse::<usize>().ok());
                match index {
                    Some(i) => {
                        parts.next();
                        parts.next();
                        match trace.steps.get(i) {
                            Some(step) => std::borrow::Cow::Owned(crate::trace::step_facts(step, workspace)),
                            None => return Ok(None),
                        }
                    }
                    None => self.whole(max_bytes)?,
                }
            }
        };
        let mut value = Some(whole.as_ref());
        for part in parts {
            value = value.and_then(|v| match (v, part.parse::<usize>()) {
                (serde_json::Value::Array(items), Ok(i)) => items.get(i),
                _ => v.get(part),
            });
        }
        Ok(value.cloned())
    }
}

/// What evaluating a set of rows shares: the facts, the results so far, and the rows being
/// evaluated (to catch evidence cycles).
struct RowContext<'a> {
    facts: Facts<'a>,
    done: &'a mut HashMap<String, RowResult>,
    visiting: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum RowCheck {
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
    pub(crate) check: RowCheck,
}

impl Bundle {
    /// The bundle with another bound on the facts a row that reads a trace's steps whole may
    /// make ([`MAX_WHOLE_STEPS_BYTES`] by default): past it, the row is unk and says so.
    pub fn with_max_whole_steps_bytes(mut self, max_bytes: u64) -> Bundle {
        self.max_whole_steps_bytes = max_bytes;
        self
    }

    /// What a row asks the agent to do when it is a gap.
    pub fn remedy(&self, row: &str) -> Option<&str> {
        self.rows.get(row).and_then(|r| r.remedy.as_deref())
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
        // INVARIANT (fail closed): a row that is not there is unk, never ok.
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
            // INVARIANT (fail closed): evidence that rests on itself is unk.
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
                let value = match cx.facts.lookup(fact, self.max_whole_steps_bytes) {
                    Ok(value) => value,
                    Err(why) => return (Verdict::Unk, why),
                };
                match value.as_ref() {
                    // INVARIANT (fail closed): a fact the record lacks is unk, never ok.
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
                    None => match cx.facts.whole(self.max_whole_steps_bytes) {
                        Ok(whole) => to_dynamic(&whole),
                        Err(why) => return (Verdict::Unk, why),
                    },
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
                        // INVARIANT (fail closed): a script that fails (error, limit, deadline) is unk.
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
                    // INVARIANT (fail closed): as above, for the row's own function.
                    Err(err) => (Verdict::Unk, format!("the row's script failed: {err}")),
                }
            }
        }
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
    // INVARIANT (fail closed): an answer that is not a verdict is unk.
    (
        Verdict::Unk,
        format!(
            "the row's script returned `{value}`; it must return \"ok\", \"gap\", \"unk\" or #{{verdict, evidence}}"
        ),
    )
}
