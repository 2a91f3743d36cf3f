//! Codex's file changes as edits: the `changes` of a `FileChange` event (or an older patch
//! event), whose per-file `unified_diff` is read by the core's hunk reader, and the text of an
//! `apply_patch` call, read before Codex reports what it did.

use super::shared::{absolute, change_kind, set_writes, PATCH_TOOL};
use crate::reader::text;
use serde_json::Value;
use sixfold_core::trace::{Edit, EditKind, EditLine, HunkReader, Step};
use std::path::Path;

/// A FileChange's (or an older patch event's) `changes`: path → `{type, unified_diff, move_path}`
/// (or `{add: {content}}`, `{delete: {content}}`, `{update: {unified_diff, move_path}}`).
pub(super) fn rollout_changes(changes: Option<&Value>) -> Vec<Edit> {
    let Some(changes) = changes.and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut edits = Vec::new();
    for (path, change) in changes {
        let (kind, body) = match text(change, "type") {
            Some(kind) => (change_kind(kind), change),
            None => match ["add", "delete", "update"]
                .iter()
                .find_map(|k| change.get(*k).map(|b| (*k, b)))
            {
                Some((kind, body)) => (change_kind(kind), body),
                None => (EditKind::Unknown, change),
            },
        };
        let mut edit = Edit {
            path: path.clone(),
            kind,
            removed: Vec::new(),
            added: Vec::new(),
            context: vec![],
            visible: true,
        };
        if let Some(diff) = text(body, "unified_diff") {
            take_hunks(&mut edit, diff);
        } else if let Some(content) = text(body, "content") {
            match kind {
                EditKind::Delete => edit.removed = numbered(content),
                _ => edit.added = numbered(content),
            }
        } else if kind != EditKind::Delete {
            edit.visible = false;
        }
        edits.push(edit.bounded());
        if let Some(to) = text(body, "move_path").filter(|p| !p.is_empty()) {
            edits.push(Edit::invisible(to, EditKind::Create));
        }
    }
    edits
}

/// Takes the removed and added lines of a diff's `@@` hunks into `edit`, numbered (old numbering
/// for removed lines, new for added), with the core's hunk reader. Anything before the first
/// hunk (headers) is ignored.
fn take_hunks(edit: &mut Edit, diff: &str) {
    let mut hunks = HunkReader::default();
    for line in diff.lines() {
        hunks.line(edit, line);
    }
}

/// The edits an `apply_patch` patch describes (`*** Add File:`, `*** Update File:`,
/// `*** Delete File:`, `*** Move to:`), before Codex reports them: lines of an update are not
/// numbered (the patch locates them by context, which is kept), lines of a new file are.
pub(crate) fn patch_edits(patch: &str, cwd: &Path) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::new();
    let path = |p: &str| absolute(cwd, p.trim()).to_string_lossy().into_owned();
    for line in patch.lines() {
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            edits.push(Edit {
                path: path(p),
                kind: EditKind::Create,
                removed: vec![],
                added: vec![],
                context: vec![],
                visible: true,
            });
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            edits.push(Edit {
                path: path(p),
                kind: EditKind::Update,
                removed: vec![],
                added: vec![],
                context: vec![],
                visible: true,
            });
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            edits.push(Edit {
                path: path(p),
                kind: EditKind::Delete,
                removed: vec![],
                added: vec![],
                context: vec![],
                visible: true,
            });
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            edits.push(Edit::invisible(path(p), EditKind::Create));
        } else if line.starts_with("***") || line.starts_with("@@") {
            continue;
        } else if let Some(edit) = edits.last_mut().filter(|e| e.visible) {
            match edit.kind {
                EditKind::Create => {
                    if let Some(t) = line.strip_prefix('+') {
                        let n = edit.added.len() as u64 + 1;
                        edit.added.push(EditLine {
                            line: Some(n),
                            text: t.to_string(),
                        });
                    }
                }
                EditKind::Update => {
                    if let Some(t) = line.strip_prefix('-') {
                        edit.removed.push(EditLine {
                            line: None,
                            text: t.to_string(),
                        });
                    } else if let Some(t) = line.strip_prefix('+') {
                        edit.added.push(EditLine {
                            line: None,
                            text: t.to_string(),
                        });
                    } else if let Some(t) = line.strip_prefix(' ') {
                        // A context line: what the change sits beside.
                        edit.context.push(EditLine {
                            line: None,
                            text: t.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    edits.into_iter().map(Edit::bounded).collect()
}

/// Puts a patch's edits on a step, with the files they touch as its writes when the step is the
/// patch tool (a command's writes stay as its classification says).
pub(super) fn set_patch_edits(step: &mut Step, edits: Vec<Edit>) {
    if step.tool == PATCH_TOOL {
        let paths = edits.iter().map(|e| e.path.clone()).collect::<Vec<_>>();
        set_writes(step, &paths);
    }
    step.edits = edits;
}

fn numbered(content: &str) -> Vec<EditLine> {
    content
        .lines()
        .enumerate()
        .map(|(i, l)| EditLine {
            line: Some(i as u64 + 1),
            text: l.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The removed and added lines `take_hunks` reads from a diff.
    fn hunk_lines(diff: &str) -> (Vec<EditLine>, Vec<EditLine>) {
        let mut edit = Edit::invisible("", EditKind::Update);
        take_hunks(&mut edit, diff);
        (edit.removed, edit.added)
    }

    #[test]
    fn hunks_are_numbered() {
        let (removed, added) =
            hunk_lines("@@ -1,3 +1,4 @@\n a\n-b\n+c\n+d\n e\n\\ No newline at end of file\n@@ -10 +11 @@\n-x\n+y\n");
        assert_eq!(
            removed,
            vec![
                EditLine {
                    line: Some(2),
                    text: "b".into()
                },
                EditLine {
                    line: Some(10),
                    text: "x".into()
                }
            ]
        );
        assert_eq!(
            added,
            vec![
                EditLine {
                    line: Some(2),
                    text: "c".into()
                },
                EditLine {
                    line: Some(3),
                    text: "d".into()
                },
                EditLine {
                    line: Some(11),
                    text: "y".into()
                }
            ]
        );
        assert_eq!(hunk_lines("--- a\n+++ b\nno hunk\n"), (vec![], vec![]));
        assert_eq!(hunk_lines("@@ garbage @@\n-x\n"), (vec![], vec![]));
    }

    #[test]
    fn a_diff_whose_hunk_header_cannot_be_read_is_not_visible() {
        let changes =
            serde_json::json!({ "/w/t.rs": { "type": "update", "unified_diff": "@@ garbage @@\n-assert!(x);\n" } });
        let edits = rollout_changes(Some(&changes));
        assert_eq!(edits.len(), 1);
        assert!(!edits[0].visible, "{edits:?}");
    }
}
