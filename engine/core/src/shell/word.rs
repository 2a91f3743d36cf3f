//! A word's value as the shell would form it, as far as the text alone decides it: quotes and
//! escapes removed, brace expansion done (bounded), the tilde forms the core knows kept, and
//! every part whose value depends on the running shell (a parameter, a substitution, `~user`)
//! marked unknown.

/// The most words one word may expand to (braces, loop values); past it the word is unknown.
const MAX_EXPANSIONS: usize = 64;

/// How deeply braces may nest before the word is unknown.
const MAX_BRACE_DEPTH: usize = 16;

/// One character of a word before expansion, or a part whose value is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    /// A character; `true` when quoted or escaped (never shell syntax).
    Char(char, bool),
    /// A part whose value only the running shell knows, as written.
    Unknown(String),
}

/// A word after expansion: its text and whether any of it is unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Value {
    pub(super) text: String,
    pub(super) unknown: bool,
}

/// Pushes `text` as characters, quoted or not.
pub(super) fn push_text(pieces: &mut Vec<Piece>, text: &str, quoted: bool) {
    pieces.extend(text.chars().map(|c| Piece::Char(c, quoted)));
}

/// Pushes unquoted word text: a backslash quotes the next character, a backslash-newline is
/// nothing.
pub(super) fn push_unquoted(pieces: &mut Vec<Piece>, text: &str) {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(next) => pieces.push(Piece::Char(next, true)),
            }
        } else {
            pieces.push(Piece::Char(c, false));
        }
    }
}

/// Pushes the literal text of a double-quoted string: a backslash quotes only `$`, `` ` ``,
/// `"`, `\` and a newline; everything is quoted.
pub(super) fn push_double_quoted(pieces: &mut Vec<Piece>, text: &str) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek().copied()) {
            ('\\', Some(next)) if matches!(next, '$' | '`' | '"' | '\\' | '\n') => {
                chars.next();
                if next != '\n' {
                    pieces.push(Piece::Char(next, true));
                }
            }
            _ => pieces.push(Piece::Char(c, true)),
        }
    }
}

/// The words one word expands to: braces expanded (at most [`MAX_EXPANSIONS`] words, else one
/// unknown word), then each checked for the tilde forms.
pub(super) fn expand(pieces: &[Piece]) -> Vec<Value> {
    let mut out = Vec::new();
    if !braces(pieces, &mut out, 0) {
        return vec![Value {
            text: written(pieces),
            unknown: true,
        }];
    }
    let many = out.len() > 1;
    out.into_iter()
        // An unquoted word that braces made empty is no word at all (`{x,}`).
        .filter(|w| !(many && w.is_empty()))
        .map(|w| value(&w))
        .collect()
}

/// One word's value without brace expansion (an assignment's value).
pub(super) fn literal(pieces: &[Piece]) -> Value {
    value(pieces)
}

/// The text as written, for a word that is unknown as a whole.
fn written(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Char(c, _) => c.to_string(),
            Piece::Unknown(s) => s.clone(),
        })
        .collect()
}

/// One expanded word's value, with the tilde forms decided: `~` and `~/…` stay (the scopes
/// resolve them against `$HOME`); `~user`, `~+`, `~-` and the rest are unknown. A quoted leading
/// `~` names a directory called `~`, which the scopes would read as the home: unknown too.
fn value(pieces: &[Piece]) -> Value {
    let text = written(pieces);
    let mut unknown = pieces.iter().any(|p| matches!(p, Piece::Unknown(_)));
    match pieces.first() {
        Some(Piece::Char('~', false)) => {
            let prefix_end = pieces
                .iter()
                .position(|p| matches!(p, Piece::Char('/', _)))
                .unwrap_or(pieces.len());
            // INVARIANT (fail closed): a tilde prefix other than `~` names a directory the text
            // does not tell (another user's home, the directory stack).
            if prefix_end != 1 {
                unknown = true;
            }
        }
        Some(Piece::Char('~', true)) => unknown = true,
        _ => {}
    }
    // `name=~x` and `a:~x` expand too in bash (assignments, and words that look like them).
    for pair in pieces.windows(2) {
        if let [Piece::Char('=' | ':', false), Piece::Char('~', false)] = pair {
            unknown = true;
        }
    }
    Value { text, unknown }
}

/// Brace expansion into `out`; false when the result would pass the bounds.
fn braces(pieces: &[Piece], out: &mut Vec<Vec<Piece>>, depth: usize) -> bool {
    if depth > MAX_BRACE_DEPTH {
        return false;
    }
    let Some((open, close, alternatives)) = first_brace(pieces) else {
        if out.len() >= MAX_EXPANSIONS {
            return false;
        }
        out.push(pieces.to_vec());
        return true;
    };
    let prefix = pieces.get(..open).unwrap_or(&[]);
    let suffix = pieces.get(close + 1..).unwrap_or(&[]);
    for alternative in alternatives {
        let mut word = prefix.to_vec();
        word.extend(alternative);
        word.extend_from_slice(suffix);
        if !braces(&word, out, depth + 1) {
            return false;
        }
    }
    true
}

type Brace = (usize, usize, Vec<Vec<Piece>>);

/// The first brace expression: its `{`, its `}` and its alternatives (a list with a top-level
/// comma, or a sequence `{a..b[..step]}`).
fn first_brace(pieces: &[Piece]) -> Option<Brace> {
    let unquoted = |i: usize, c: char| pieces.get(i) == Some(&Piece::Char(c, false));
    for open in (0..pieces.len()).filter(|&i| unquoted(i, '{')) {
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for i in open + 1..pieces.len() {
            if unquoted(i, '{') {
                depth += 1;
            } else if unquoted(i, '}') {
                if depth == 0 {
                    let inner = pieces.get(open + 1..i).unwrap_or(&[]);
                    if !commas.is_empty() {
                        let mut alternatives = Vec::new();
                        let mut start = open + 1;
                        for &comma in commas.iter().chain(std::iter::once(&i)) {
                            alternatives.push(pieces.get(start..comma).unwrap_or(&[]).to_vec());
                            start = comma + 1;
                        }
                        return Some((open, i, alternatives));
                    }
                    if let Some(sequence) = sequence(inner) {
                        return Some((open, i, sequence));
                    }
                    break;
                }
                depth -= 1;
            } else if depth == 0 && unquoted(i, ',') {
                commas.push(i);
            }
        }
    }
    None
}

/// `{1..5}`, `{a..e}`, `{0..10..2}`: the values, or `None` when it is not a sequence or would
/// pass [`MAX_EXPANSIONS`] (then it stays as written, and the caller bounds the rest).
fn sequence(inner: &[Piece]) -> Option<Vec<Vec<Piece>>> {
    let text: String = inner
        .iter()
        .map(|p| match p {
            Piece::Char(c, false) => Some(*c),
            _ => None,
        })
        .collect::<Option<String>>()?;
    let parts: Vec<&str> = text.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [a, b] => (*a, *b, 1i64),
        [a, b, s] => (*a, *b, s.parse::<i64>().ok()?.checked_abs()?.max(1)),
        _ => return None,
    };
    let chars = |s: &str| -> Option<i64> {
        let mut cs = s.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c as i64),
            _ => None,
        }
    };
    let (a, b, letters) = match (from.parse::<i64>(), to.parse::<i64>()) {
        (Ok(a), Ok(b)) => (a, b, false),
        _ => (chars(from)?, chars(to)?, true),
    };
    let count = a.abs_diff(b) / step.unsigned_abs() + 1;
    if count > MAX_EXPANSIONS as u64 {
        // Too many to list: a word that is not known.
        return Some(vec![vec![Piece::Unknown(format!("{{{text}}}"))]]);
    }
    let mut values = Vec::new();
    let mut at = a;
    for _ in 0..count {
        let shown = if letters {
            char::from_u32(u32::try_from(at).ok()?)?.to_string()
        } else {
            at.to_string()
        };
        values.push(shown.chars().map(|c| Piece::Char(c, true)).collect());
        at = if a <= b { at + step } else { at - step };
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unquoted(text: &str) -> Vec<Value> {
        let mut pieces = Vec::new();
        push_unquoted(&mut pieces, text);
        expand(&pieces)
    }

    fn texts(text: &str) -> Vec<String> {
        unquoted(text).into_iter().map(|v| v.text).collect()
    }

    #[test]
    fn braces_expand() {
        assert_eq!(texts("{/root/x,}"), ["/root/x"]);
        assert_eq!(texts("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(texts("{a,{b,c}}"), ["a", "b", "c"]);
        assert_eq!(texts("x{1..3}"), ["x1", "x2", "x3"]);
        assert_eq!(texts("{c..a}"), ["c", "b", "a"]);
        assert_eq!(texts("{0..10..5}"), ["0", "5", "10"]);
        assert_eq!(texts("{a}"), ["{a}"]);
        assert_eq!(texts(r"\{a,b}"), ["{a,b}"]);
        // Past the bound: one unknown word.
        assert!(unquoted("{1..100000}")[0].unknown);
        assert!(unquoted(&"{a,b}".repeat(10))[0].unknown);
    }

    #[test]
    fn tilde_forms() {
        assert!(!unquoted("~/x")[0].unknown);
        assert!(!unquoted("~")[0].unknown);
        assert!(unquoted("~root/x")[0].unknown);
        assert!(unquoted("~+/x")[0].unknown);
        assert!(unquoted("~-")[0].unknown);
        assert!(unquoted("a=~root")[0].unknown);
        assert!(unquoted(r"\~/x")[0].unknown);
        // After braces, as bash does.
        assert!(unquoted("{~root/x,y}")[0].unknown);
    }

    #[test]
    fn double_quoted_escapes() {
        let mut pieces = Vec::new();
        push_double_quoted(&mut pieces, r#"a\"b\c\$"#);
        assert_eq!(expand(&pieces)[0].text, r#"a"b\c$"#);
    }
}
