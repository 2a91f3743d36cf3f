//! The exact lines a write or an edit removed and added, for the record: the block between the
//! longest common prefix and suffix of lines, numbered as in the old and the new file. The
//! invariants (e.g. `no-assertion-weakening`) decide from this content, so it is never guessed.

use sixfold_core::trace::{Edit, EditKind, EditLine};

/// The edit that turns `old` (`None`: the file did not exist) into `new` at `path`.
pub(crate) fn between(path: &str, old: Option<&str>, new: &str) -> Edit {
    let kind = if old.is_some() {
        EditKind::Update
    } else {
        EditKind::Create
    };
    let old_lines: Vec<&str> = old.map(|o| o.lines().collect()).unwrap_or_default();
    let new_lines: Vec<&str> = new.lines().collect();
    let prefix = old_lines.iter().zip(&new_lines).take_while(|(a, b)| a == b).count();
    let suffix = old_lines
        .iter()
        .skip(prefix)
        .rev()
        .zip(new_lines.iter().skip(prefix).rev())
        .take_while(|(a, b)| a == b)
        .count();
    let numbered = |lines: &[&str], from: usize| -> Vec<EditLine> {
        lines
            .iter()
            .enumerate()
            .map(|(i, text)| EditLine {
                line: u64::try_from(from + i + 1).ok(),
                text: (*text).to_string(),
            })
            .collect()
    };
    let removed = old_lines
        .get(prefix..old_lines.len() - suffix)
        .map(|l| numbered(l, prefix))
        .unwrap_or_default();
    let added = new_lines
        .get(prefix..new_lines.len() - suffix)
        .map(|l| numbered(l, prefix))
        .unwrap_or_default();
    // Three unchanged lines each side, as a unified diff shows them: what the change sits beside.
    let after = new_lines.len() - suffix;
    let before = prefix.saturating_sub(3);
    let mut context = new_lines
        .get(before..prefix)
        .map(|l| numbered(l, before))
        .unwrap_or_default();
    context.extend(
        new_lines
            .get(after..(after + 3).min(new_lines.len()))
            .map(|l| numbered(l, after))
            .unwrap_or_default(),
    );
    Edit {
        path: path.to_string(),
        kind,
        removed,
        added,
        context,
        visible: true,
    }
    .bounded()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_changed_block_is_removed_and_added() {
        let e = between("/w/t.rs", Some("a\nassert!(x);\nc\n"), "a\nassert!(true);\nc\n");
        assert_eq!(e.kind, EditKind::Update);
        assert_eq!(e.removed.len(), 1);
        assert_eq!(e.removed[0].text, "assert!(x);");
        assert_eq!(e.removed[0].line, Some(2));
        assert_eq!(e.added[0].text, "assert!(true);");
        assert!(e.visible);
        // The unchanged lines around it are kept as context, numbered in the new file.
        let context: Vec<(Option<u64>, &str)> = e.context.iter().map(|l| (l.line, l.text.as_str())).collect();
        assert_eq!(context, [(Some(1), "a"), (Some(3), "c")]);
    }

    #[test]
    fn a_new_file_adds_every_line() {
        let e = between("/w/n", None, "x\ny\n");
        assert_eq!(e.kind, EditKind::Create);
        assert!(e.removed.is_empty());
        assert_eq!(e.added.len(), 2);
    }

    #[test]
    fn repeated_lines_are_not_counted_twice() {
        let e = between("/w/r", Some("a\na\n"), "a\n");
        assert_eq!((e.removed.len(), e.added.len()), (1, 0));
    }
}
