//! Traces as facts: what rows read of a run, each step built on its own so a long run is read
//! one step at a time.

use super::{Edit, EditLine, Step};
use crate::scope::{Place, Workspace};

/// One step as facts: what rows read of it. Its raw effects are summed up by where its reads and
/// writes land (`reads` and `writes`, classified, and `writes_workspace`); the step is built once, without the
/// copies a whole-trace conversion would make, since a long run has many steps.
pub fn step_facts(step: &Step, workspace: &Workspace) -> serde_json::Value {
    let resolved = step.effects.resolve(workspace);
    let writes: Vec<serde_json::Value> = resolved
        .write_places
        .iter()
        .map(|t| place_json(t.path.as_deref(), &t.place))
        .collect();
    let reads: Vec<serde_json::Value> = resolved
        .read_places
        .iter()
        .map(|t| place_json(t.path.as_deref(), &t.place))
        .collect();
    let writes_workspace = resolved
        .write_places
        .iter()
        .any(|t| matches!(t.place, Place::Root { .. }));
    let mut obj = serde_json::Map::new();
    obj.insert("tool".into(), step.tool.clone().into());
    obj.insert(
        "act".into(),
        serde_json::json!({ "kind": step.act.kind, "text": step.act.text }),
    );
    obj.insert("commands".into(), step.commands.clone().into());
    obj.insert("command_rules".into(), step.command_rules.clone().into());
    obj.insert("parts".into(), parts_facts(step, workspace));
    obj.insert(
        "output".into(),
        match &step.output {
            Some(o) => serde_json::json!({ "text": o.text, "cut": o.cut }),
            None => serde_json::Value::Null,
        },
    );
    obj.insert(
        "outcome".into(),
        serde_json::to_value(&step.outcome).unwrap_or_default(),
    );
    obj.insert("reads".into(), reads.into());
    obj.insert("writes".into(), writes.into());
    obj.insert("writes_workspace".into(), writes_workspace.into());
    obj.insert("reaches".into(), step.effects.reaches.into());
    obj.insert("edits".into(), edits_facts(&step.edits, workspace));
    serde_json::Value::Object(obj)
}

/// Edits as facts: `path`, `kind`, `visible`, `relative` (its path below the workspace root it
/// lies in; absent when it lies in none), and its lines as plain string arrays — `removed`,
/// `added` and the unchanged `context` around them, with their line numbers in `removed_lines`,
/// `added_lines` and `context_lines` (`()` where unknown).
/// Strings, not a map per line: a long run has many lines, and a map costs twenty times more.
pub fn edits_facts(edits: &[Edit], workspace: &Workspace) -> serde_json::Value {
    edits
        .iter()
        .map(|edit| {
            let texts = |lines: &[EditLine]| -> serde_json::Value { lines.iter().map(|l| l.text.clone()).collect() };
            let numbers = |lines: &[EditLine]| -> serde_json::Value { lines.iter().map(|l| l.line).collect() };
            let mut obj = serde_json::Map::new();
            obj.insert("path".into(), edit.path.clone().into());
            obj.insert("kind".into(), serde_json::to_value(edit.kind).unwrap_or_default());
            obj.insert("visible".into(), edit.visible.into());
            obj.insert("removed".into(), texts(&edit.removed));
            obj.insert("removed_lines".into(), numbers(&edit.removed));
            obj.insert("added".into(), texts(&edit.added));
            obj.insert("added_lines".into(), numbers(&edit.added));
            obj.insert("context".into(), texts(&edit.context));
            obj.insert("context_lines".into(), numbers(&edit.context));
            let place = match workspace.resolve(std::slice::from_ref(&edit.path)) {
                crate::scope::Scopes::Paths(p) => p.iter().next().map(|p| workspace.place(p)),
                crate::scope::Scopes::Everything => None,
            };
            if let Some(Place::Root { relative, .. }) = place {
                obj.insert("relative".into(), relative.into());
            }
            serde_json::Value::Object(obj)
        })
        .collect()
}

/// A simple command as facts: its text and rule, where its writes land, the place it ran in,
/// whether its exit status is the step's, and whether a `cd` moved it out of the step's own
/// directory (`moved`).
fn part_facts(part: &crate::classify::Part, moved: bool, own_known: bool, workspace: &Workspace) -> serde_json::Value {
    let places = |paths: &[String]| -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let mut known = Vec::new();
        for path in paths {
            match path.strip_prefix("*/") {
                // Where the record has no working directory (Codex's exec stream), a path
                // relative to the step's own directory lies in the run's workspace.
                Some(rest) if !moved && !rest.split('/').any(|c| c == ".." || c == "*") => {
                    out.push(serde_json::json!({ "path": path, "place": "workspace", "relative": rest }));
                }
                // INVARIANT (fail closed): a path under a directory nobody knows (`cd "$X";
                // rm f` leaves `*/f`) is an unknown place, never one inside the workspace.
                Some(_) => return vec![place_json(None, &Place::Unknown)],
                None => known.push(path.clone()),
            }
        }
        if known.is_empty() && !out.is_empty() {
            return out;
        }
        match workspace.resolve(&known) {
            crate::scope::Scopes::Everything => vec![place_json(None, &Place::Unknown)],
            crate::scope::Scopes::Paths(set) => {
                out.extend(set.iter().map(|p| place_json(Some(p), &workspace.place(p))));
                out
            }
        }
    };
    let dir = if part.dir == "*" && !moved {
        serde_json::json!({ "path": "*", "place": "workspace", "relative": "" })
    } else if moved && !own_known && !part.dir.starts_with("*/") {
        // INVARIANT (fail closed): where the record does not say where the run was, a `cd`
        // elsewhere leads nowhere known to be the workspace.
        place_json(None, &Place::Unknown)
    } else {
        places(std::slice::from_ref(&part.dir))
            .into_iter()
            .next()
            .unwrap_or_default()
    };
    serde_json::json!({
        "text": part.text,
        "rule": part.rule,
        "writes": places(&part.writes),
        "dir": dir,
        "decides_status": part.decides_status,
        "moved": moved,
    })
}

/// Each part of a step as facts; a part after a `cd`, or in another directory than the step's
/// own (which, where the record does not say, is the run's), is `moved`.
fn parts_facts(step: &Step, workspace: &Workspace) -> serde_json::Value {
    let own = step.cwd.as_deref().unwrap_or("*");
    let mut cd = false;
    let mut out = Vec::new();
    for part in &step.parts {
        out.push(part_facts(part, cd || part.dir != own, step.cwd.is_some(), workspace));
        cd |= part.rule.as_deref() == Some("cd");
    }
    out.into()
}

fn place_json(path: Option<&std::path::Path>, place: &Place) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    obj.insert(
        "path".into(),
        path.map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "*".into())
            .into(),
    );
    obj.insert("place".into(), place.class().into());
    if let Place::Root { name, relative } = place {
        obj.insert("root".into(), name.clone().into());
        obj.insert("relative".into(), relative.clone().into());
    }
    serde_json::Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effects::EffectProfile;
    use crate::trace::{EditKind, Trace};

    #[test]
    fn parts_in_an_unknown_directory_lie_in_the_workspace_unless_moved() {
        let part = |text: &str, rule: &str, writes: &[&str], dir: &str| crate::classify::Part {
            program: String::new(),
            text: text.into(),
            rule: Some(rule.into()),
            writes: writes.iter().map(|w| w.to_string()).collect(),
            dir: dir.into(),
            decides_status: true,
            ..Default::default()
        };
        let step = Step {
            parts: vec![
                part("rm tests/a.rs", "commands/remove", &["*/tests/a.rs"], "*"),
                part("cd x", "cd", &[], "*"),
                part("rm b.rs", "commands/remove", &["*/b.rs"], "*"),
            ],
            ..Step::default()
        };
        let facts = step_facts(&step, &Workspace::new("/"));
        let parts = &facts["parts"];
        assert_eq!(parts[0]["writes"][0]["place"], "workspace");
        assert_eq!(parts[0]["writes"][0]["relative"], "tests/a.rs");
        assert_eq!(parts[0]["moved"], false);
        // After a `cd` nobody can follow, a relative path is nowhere known.
        assert_eq!(parts[2]["moved"], true);
        assert_eq!(parts[2]["writes"][0]["place"], "unknown");
    }

    #[test]
    fn facts_classify_places_and_relative_edit_paths() {
        let mut t = Trace::default();
        t.steps.push(Step {
            tool: "Write".into(),
            effects: EffectProfile {
                writes: vec!["/w/tests/a.rs".into()],
                ..EffectProfile::default()
            },
            edits: vec![Edit::invisible("/w/tests/a.rs", EditKind::Unknown)],
            ..Step::default()
        });
        let facts = t.facts(&Workspace::new("/w"));
        assert_eq!(facts["steps"][0]["writes_workspace"], true);
        assert_eq!(facts["steps"][0]["writes"][0]["relative"], "tests/a.rs");
        assert_eq!(facts["steps"][0]["edits"][0]["relative"], "tests/a.rs");
    }
}
