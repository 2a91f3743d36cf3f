//! Diagnostics: every error about an input names the file, line and column, and offers a hint.

use serde::Serialize;
use std::fmt;
use std::ops::Range;

/// One problem found in an input, located.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file, as the user would name it (e.g. `modes/ask.toml` or `<shipped>/modes/ask.toml`).
    pub file: String,
    /// 1-based line; 0 when the problem is about the file as a whole.
    pub line: usize,
    /// 1-based column; 0 when unknown.
    pub column: usize,
    /// What is wrong: lowercase, user input in backticks.
    pub message: String,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The source line the problem is on, for rendering.
    #[serde(skip)]
    pub source_line: Option<String>,
    /// How many characters of the source line to underline.
    #[serde(skip)]
    pub width: usize,
}

impl Diagnostic {
    /// A problem with a whole file (no position).
    pub fn file(file: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            line: 0,
            column: 0,
            message: message.into(),
            hint: None,
            source_line: None,
            width: 0,
        }
    }

    /// A problem at a byte range of a file's text.
    pub fn at(file: impl Into<String>, text: &str, span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        let (line, column, source_line) = locate(text, span.start);
        let width = text
            .get(span)
            .map(|s| s.lines().next().unwrap_or("").chars().count())
            .unwrap_or(1)
            .max(1);
        Diagnostic {
            file: file.into(),
            line,
            column,
            message: message.into(),
            hint: None,
            source_line: Some(source_line.to_string()),
            width,
        }
    }

    /// A problem at a known line and column (1-based).
    pub fn at_line(file: impl Into<String>, line: usize, column: usize, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            line,
            column,
            message: message.into(),
            hint: None,
            source_line: None,
            width: 0,
        }
    }

    /// Adds the hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// `file:line:column`, dropping what is unknown.
    pub fn location(&self) -> String {
        match (self.line, self.column) {
            (0, _) => self.file.clone(),
            (l, 0) => format!("{}:{l}", self.file),
            (l, c) => format!("{}:{l}:{c}", self.file),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error: {}", self.message)?;
        write!(f, "  --> {}", self.location())?;
        if let Some(source) = &self.source_line {
            let number = self.line.to_string();
            let pad = " ".repeat(number.len());
            write!(f, "\n {pad} |\n {number} | {source}\n {pad} | ")?;
            write!(
                f,
                "{}{}",
                " ".repeat(self.column.saturating_sub(1)),
                "^".repeat(self.width)
            )?;
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n  = help: {hint}")?;
        }
        Ok(())
    }
}

/// 1-based line and column (in characters) of a byte offset, and the text of that line.
pub fn locate(text: &str, offset: usize) -> (usize, usize, &str) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or("");
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = before.matches('\n').count() + 1;
    let column = text.get(line_start..offset).map(|s| s.chars().count()).unwrap_or(0) + 1;
    let line_end = text
        .get(line_start..)
        .and_then(|rest| rest.find('\n'))
        .map(|i| line_start + i)
        .unwrap_or(text.len());
    (
        line,
        column,
        text.get(line_start..line_end).unwrap_or("").trim_end_matches('\r'),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_lines_and_columns() {
        let text = "a = 1\nbb = 2\n";
        assert_eq!(locate(text, 0), (1, 1, "a = 1"));
        assert_eq!(locate(text, 9), (2, 4, "bb = 2"));
    }

    #[test]
    fn renders_with_source_and_hint() {
        let d = Diagnostic::at("modes/x.toml", "id = 1\n", 5..6, "expected a string").with_hint("quote it");
        let shown = d.to_string();
        assert!(shown.contains("--> modes/x.toml:1:6"), "{shown}");
        assert!(shown.contains("^"));
        assert!(shown.contains("help: quote it"));
    }
}
