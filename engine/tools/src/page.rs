//! Large results bounded: a page of lines, and a note saying how much there is and how to read
//! on, so one call never floods the agent's context or the server's memory.

/// The most text one result holds.
pub(crate) const MAX_RESULT_BYTES: usize = 64 * 1024;

/// The default number of lines a page holds.
pub(crate) const DEFAULT_LINES: usize = 2000;

/// One page of `text`'s lines: from line `offset` (1-based), at most `limit` lines and at most
/// [`MAX_RESULT_BYTES`]; with a note when more is left.
pub(crate) fn lines(text: &str, offset: Option<u64>, limit: Option<u64>, total_bytes: u64) -> String {
    let start = usize::try_from(offset.unwrap_or(1).max(1) - 1).unwrap_or(usize::MAX);
    let limit = limit
        .and_then(|l| usize::try_from(l).ok())
        .unwrap_or(DEFAULT_LINES)
        .max(1);
    let total = text.lines().count();
    let mut out = String::new();
    let mut shown = 0usize;
    for line in text.lines().skip(start).take(limit) {
        if out.len() + line.len() + 1 > MAX_RESULT_BYTES {
            if shown == 0 {
                // A first line longer than a page is shown cut, never skipped whole.
                let mut cut = MAX_RESULT_BYTES - 1;
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                out.push_str(line.get(..cut).unwrap_or_default());
                out.push_str(&format!(
                    "\n[line {} cut: {} bytes, the first {cut} shown]\n",
                    start + 1,
                    line.len()
                ));
                shown = 1;
            }
            break;
        }
        out.push_str(line);
        out.push('\n');
        shown += 1;
    }
    let end = start + shown;
    if start > 0 || end < total {
        out.push_str(&format!(
            "[lines {}-{} of {total}; {total_bytes} bytes in all; pass offset={} to read on]\n",
            start + 1,
            end,
            end + 1
        ));
    }
    out
}

/// `text` cut to [`MAX_RESULT_BYTES`] at a character boundary, with a note of its full size.
pub(crate) fn preview(text: &str) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text.to_string();
    }
    let mut cut = MAX_RESULT_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n[cut: {} bytes in all, the first {cut} shown]\n",
        text.get(..cut).unwrap_or_default(),
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_says_where_it_ends_and_how_to_read_on() {
        let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        let page = lines(&text, Some(3), Some(2), 70);
        assert!(page.starts_with("line 3\nline 4\n"), "{page}");
        assert!(
            page.contains("[lines 3-4 of 10; 70 bytes in all; pass offset=5 to read on]"),
            "{page}"
        );
        assert_eq!(lines("a\nb\n", None, None, 4), "a\nb\n");
        let long = format!("{}\nnext\n", "y".repeat(MAX_RESULT_BYTES * 2));
        let page = lines(&long, None, None, long.len() as u64);
        assert!(
            page.starts_with("yyy") && page.contains("[line 1 cut"),
            "{}",
            &page[page.len() - 200..]
        );
        assert!(
            page.contains("pass offset=2 to read on"),
            "{}",
            &page[page.len() - 200..]
        );
    }

    #[test]
    fn a_preview_is_bounded_and_names_the_size() {
        let big = "é".repeat(MAX_RESULT_BYTES);
        let p = preview(&big);
        assert!(p.len() < MAX_RESULT_BYTES + 100);
        assert!(p.contains(&format!("{} bytes in all", big.len())));
    }
}
