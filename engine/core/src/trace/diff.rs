//! Unified diffs: `git diff` output, and the diffs in vendors' records, read into edits.

use super::{Edit, EditKind};

/// Reads the `@@` hunks of a unified diff, line by line, into an edit: a hunk header
/// (`@@ -a,b +c,d @@`) sets the line numbers, the body lines that follow are taken (numbered: old
/// numbering for removed lines, new for added), and [`HunkReader::end`] closes the hunk at a file
/// header. The one hunk reader: `git diff` output and the diffs in vendors' records both use it.
#[derive(Debug, Default)]
pub struct HunkReader {
    old: u64,
    new: u64,
    in_hunk: bool,
}

impl HunkReader {
    /// Closes the current hunk: what follows (a file header, say) is not a body line.
    pub fn end(&mut self) {
        self.in_hunk = false;
    }

    /// Takes one line of the diff into `edit`: a hunk header opens a hunk, a line inside one is
    /// a body line, anything else before the first hunk is ignored.
    pub fn line(&mut self, edit: &mut Edit, line: &str) {
        if let Some(rest) = line.strip_prefix("@@") {
            let mut parts = rest.split_whitespace();
            let start =
                |s: Option<&str>, sign: char| -> Option<u64> { s?.strip_prefix(sign)?.split(',').next()?.parse().ok() };
            match (start(parts.next(), '-'), start(parts.next(), '+')) {
                (Some(old), Some(new)) => {
                    (self.old, self.new) = (old, new);
                    self.in_hunk = true;
                }
                _ => {
                    // INVARIANT (fail closed): a header that cannot be read leaves the file's
                    // lines unknown, so the edit is not visible (rows say unk, never ok).
                    self.in_hunk = false;
                    edit.visible = false;
                }
            }
            return;
        }
        if self.in_hunk {
            edit.take_hunk_line(line, &mut self.old, &mut self.new);
        }
    }
}

/// Parses a unified diff (as `git diff` or `diff -u` print it) into edits, one per file.
/// Paths are as the diff names them (`a/`/`b/` prefixes removed); `base` makes them absolute.
pub fn parse_unified_diff(text: &str, base: &std::path::Path) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::new();
    let mut old_path: Option<String> = None;
    let strip = |p: &str| -> Option<String> {
        let p = p.split('\t').next().unwrap_or(p).trim();
        if p == "/dev/null" {
            return None;
        }
        let p = p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p);
        Some(if p.starts_with('/') {
            p.to_string()
        } else {
            base.join(p).to_string_lossy().into_owned()
        })
    };
    let mut hunks = HunkReader::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("--- ") {
            old_path = strip(rest);
            hunks.end();
            continue;
        }
        if let Some(rest) = line.strip_prefix("+++ ") {
            let new_path = strip(rest);
            let (path, kind) = match (&old_path, new_path) {
                (Some(old), None) => (old.clone(), EditKind::Delete),
                (None, Some(new)) => (new, EditKind::Create),
                (_, Some(new)) => (new, EditKind::Update),
                (None, None) => continue,
            };
            edits.push(Edit {
                path,
                kind,
                removed: Vec::new(),
                added: Vec::new(),
                context: vec![],
                visible: true,
            });
            hunks.end();
            continue;
        }
        if line.starts_with("diff ") {
            hunks.end();
            continue;
        }
        if let Some(edit) = edits.last_mut() {
            hunks.line(edit, line);
        }
    }
    edits.into_iter().map(Edit::bounded).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::EditLine;
    use std::path::Path;

    #[test]
    fn unified_diffs_become_edits_with_line_numbers() {
        let diff = "diff --git a/tests/t.rs b/tests/t.rs\n--- a/tests/t.rs\n+++ b/tests/t.rs\n@@ -3,3 +3,2 @@ fn f() {\n     let x = 1;\n-    assert_eq!(x, 1);\n+    // gone\n }\n--- a/old.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-fn a() {}\n";
        let edits = parse_unified_diff(diff, Path::new("/w"));
        assert_eq!(edits.len(), 2);
        assert_eq!(edits[0].path, "/w/tests/t.rs");
        assert_eq!(edits[0].kind, EditKind::Update);
        assert_eq!(
            edits[0].removed,
            vec![EditLine {
                line: Some(4),
                text: "    assert_eq!(x, 1);".into()
            }]
        );
        assert_eq!(edits[0].added[0].line, Some(4));
        // The hunk's unchanged lines stay, numbered as in the new file: what the change sits
        // beside (a `#[test]` above a new `#[ignore]`).
        assert_eq!(
            edits[0].context,
            vec![
                EditLine {
                    line: Some(3),
                    text: "    let x = 1;".into()
                },
                EditLine {
                    line: Some(5),
                    text: "}".into()
                }
            ]
        );
        assert_eq!(edits[1].kind, EditKind::Delete);
        assert_eq!(edits[1].path, "/w/old.rs");
    }

    #[test]
    fn a_hunk_header_it_cannot_read_leaves_the_edit_not_visible() {
        let edits = parse_unified_diff("--- a/t.rs\n+++ b/t.rs\n@@ garbage @@\n-assert!(x);\n", Path::new("/w"));
        assert_eq!(edits.len(), 1);
        assert!(!edits[0].visible);
        assert!(edits[0].removed.is_empty());
    }

    #[test]
    fn garbage_is_no_edits() {
        assert!(parse_unified_diff("not a diff\n+++\n@@ x", Path::new("/")).is_empty());
    }
}
