//! A small shell reader: enough of POSIX shell syntax to split a command line into simple
//! commands, their words and their redirections, and to notice what it cannot understand.
//!
//! It never executes or expands anything. Substitutions (`$(…)`, backticks, `<(…)`) and
//! parameter expansion make the text opaque: the caller then assumes the worst.

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// True for output (`>`, `>>`, `2>`, `&>`), false for input (`<`).
    pub output: bool,
    /// The target as written.
    pub target: String,
}

/// One simple command: its words and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words, quotes removed.
    pub words: Vec<String>,
    /// Redirections, in order.
    pub redirects: Vec<Redirect>,
    /// Words that held an unquoted or double-quoted `$` expansion, by index.
    pub expanded: Vec<usize>,
    /// The operators between it and the next simple command, in order (`&&`, `||`, `;`, `|`,
    /// `&`, `\n`, `(`, `)`, `{`, `}`): what decides whether its exit status is the line's.
    pub after: Vec<String>,
}

/// A parsed command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// The simple commands, in order, whatever joined them (`&&`, `||`, `;`, `|`, `&`, newlines).
    pub commands: Vec<SimpleCommand>,
    /// Why the text cannot be understood, when it cannot (a substitution, an unclosed quote).
    pub opaque: Option<String>,
}

/// Splits shell text into simple commands.
pub fn parse(text: &str) -> CommandLine {
    let mut p = Parser {
        chars: text.chars().collect(),
        at: 0,
        line: CommandLine::default(),
        current: SimpleCommand::default(),
        heredocs: Vec::new(),
    };
    p.run();
    p.line
}

/// Quotes a word for a POSIX shell: as it is when every character is one no shell treats
/// specially (ASCII letters and digits, `_@%+=:,./-`), else in single quotes, with each `'`
/// written `'\''`. [`parse`] reads the result back as that one word.
///
/// ```
/// use sixfold_core::shell::{parse, quote};
/// assert_eq!(quote("/usr/bin/sixfold"), "/usr/bin/sixfold");
/// assert_eq!(quote("/opt/my tools/sixfold"), "'/opt/my tools/sixfold'");
/// assert_eq!(quote("it's"), r"'it'\''s'");
/// assert_eq!(quote(""), "''");
/// // What looks like a command stays a word.
/// let line = parse(&quote("a; rm -rf /"));
/// assert_eq!(line.commands[0].words, ["a; rm -rf /"]);
/// ```
pub fn quote(word: &str) -> String {
    // `=` is kept plain: a quoted word never starts a command line here, and where it does
    // (a program path) it holds a `/`, so it cannot be read as an assignment.
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Quotes each word with [`quote`] and joins them with spaces: a command line [`parse`] reads
/// back as those words.
///
/// ```
/// use sixfold_core::shell::join;
/// assert_eq!(join(["/bin/sixfold", "hook", "claude-code"]), "/bin/sixfold hook claude-code");
/// ```
pub fn join<I, S>(words: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    words
        .into_iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    line: CommandLine,
    current: SimpleCommand,
    heredocs: Vec<String>,
}

impl Parser {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn opaque(&mut self, why: &str) {
        if self.line.opaque.is_none() {
            self.line.opaque = Some(why.to_string());
        }
    }

    fn finish_command(&mut self) {
        let cmd = std::mem::take(&mut self.current);
        if !cmd.words.is_empty() || !cmd.redirects.is_empty() {
            self.line.commands.push(cmd);
        }
    }

    /// Notes an operator after the last simple command (none before the first: nothing to
    /// change the status of).
    fn operator(&mut self, op: String) {
        if let Some(last) = self.line.commands.last_mut() {
            last.after.push(op);
        }
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.at += 1,
                '\\' if self.peek(1) == Some('\n') => self.at += 2,
                '\n' => {
                    self.at += 1;
                    self.finish_command();
                    self.operator("\n".into());
                    self.skip_heredoc_bodies();
                }
                ';' | '&' | '|' | '(' | ')' | '{' | '}' if self.is_operator_start(c) => {
                    // `&>` is a redirection, not a separator.
                    if c == '&' && self.peek(1) == Some('>') {
                        self.redirect();
                        continue;
                    }
                    let start = self.at;
                    self.at += 1;
                    if matches!(self.peek(0), Some('&') | Some('|') | Some(';')) && (c == '&' || c == '|' || c == ';') {
                        self.at += 1;
                    }
                    self.finish_command();
                    let op: String = self.chars.get(start..self.at).unwrap_or(&[]).iter().collect();
                    self.operator(op);
                }
                '#' => {
                    while let Some(c) = self.peek(0) {
                        if c == '\n' {
                            break;
                        }
                        self.at += 1;
                    }
                }
                '<' | '>' => self.redirect(),
                _ => {
                    // A word, or a redirection with a file descriptor number (`2>`).
                    if c.is_ascii_digit() && matches!(self.peek(1), Some('>') | Some('<')) {
                        self.at += 1;
                        self.redirect();
                        continue;
                    }
                    let (word, expanded) = self.word();
                    if self.current.words.is_empty() && word == "eval" {
                        self.opaque("`eval` runs text as a command");
                    }
                    if expanded {
                        let index = self.current.words.len();
                        self.current.expanded.push(index);
                    }
                    self.current.words.push(word);
                }
            }
        }
        self.finish_command();
    }

    /// `{`/`}` only separate at the start of a command; the rest always do.
    fn is_operator_start(&self, c: char) -> bool {
        match c {
            '{' | '}' => self.current.words.is_empty(),
            _ => true,
        }
    }

    fn redirect(&mut self) {
        let mut output = false;
        let mut heredoc = false;
        // Operators: < > >> >| &> &>> <> <<< << <<- >& <&
        if self.peek(0) == Some('&') {
            self.at += 1;
        }
        match (self.peek(0), self.peek(1)) {
            (Some('<'), Some('<')) => {
                self.at += 2;
                if self.peek(0) == Some('<') {
                    // A here-string: its word is input, not a file.
                    self.at += 1;
                    self.skip_blanks();
                    let _ = self.word();
                    return;
                }
                if self.peek(0) == Some('-') {
                    self.at += 1;
                }
                heredoc = true;
            }
            (Some('<'), Some('(')) | (Some('>'), Some('(')) => {
                self.opaque("a process substitution runs a command");
                self.at += 2;
                return;
            }
            (Some('<'), _) => {
                self.at += 1;
                if self.peek(0) == Some('>') {
                    self.at += 1;
                    output = true;
                }
            }
            (Some('>'), _) => {
                output = true;
                self.at += 1;
                if matches!(self.peek(0), Some('>') | Some('|')) {
                    self.at += 1;
                }
            }
            _ => return,
        }
        // `>&2`, `<&0`: a file descriptor, not a file.
        if self.peek(0) == Some('&') {
            self.at += 1;
            let _ = self.word();
            return;
        }
        self.skip_blanks();
        let (target, _) = self.word();
        if heredoc {
            self.heredocs.push(target);
        } else if !target.is_empty() {
            self.current.redirects.push(Redirect { output, target });
        }
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(0), Some(' ') | Some('\t')) {
            self.at += 1;
        }
    }

    /// Skips the bodies of pending here-documents, which start on the next line.
    fn skip_heredoc_bodies(&mut self) {
        for delimiter in std::mem::take(&mut self.heredocs) {
            loop {
                let start = self.at;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.at += 1;
                }
                let line: String = self.chars.get(start..self.at).unwrap_or(&[]).iter().collect();
                if self.peek(0).is_some() {
                    self.at += 1;
                }
                if line.trim_start_matches('\t') == delimiter || self.peek(0).is_none() {
                    break;
                }
            }
        }
    }

    /// Reads one word, removing quotes. Returns it and whether it held a `$` expansion.
    fn word(&mut self) -> (String, bool) {
        let mut out = String::new();
        let mut expanded = false;
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\'' => {
                    self.at += 1;
                    loop {
                        match self.peek(0) {
                            Some('\'') => {
                                self.at += 1;
                                break;
                            }
                            Some(c) => {
                                out.push(c);
                                self.at += 1;
                            }
                            None => {
                                self.opaque("a quote is not closed");
                                return (out, expanded);
                            }
                        }
                    }
                }
                '"' => {
                    self.at += 1;
                    loop {
                        match self.peek(0) {
                            Some('"') => {
                                self.at += 1;
                                break;
                            }
                            Some('\\') => {
                                if let Some(next) = self.peek(1) {
                                    if !matches!(next, '"' | '\\' | '$' | '`' | '\n') {
                                        out.push('\\');
                                    }
                                    if next != '\n' {
                                        out.push(next);
                                    }
                                }
                                self.at += 2;
                            }
                            Some('`') => {
                                self.opaque("a command substitution runs a command");
                                out.push('`');
                                self.at += 1;
                            }
                            Some('$') => {
                                expanded |= self.dollar(&mut out);
                            }
                            Some(c) => {
                                out.push(c);
                                self.at += 1;
                            }
                            None => {
                                self.opaque("a quote is not closed");
                                return (out, expanded);
                            }
                        }
                    }
                }
                '\\' => {
                    if let Some(next) = self.peek(1) {
                        if next != '\n' {
                            out.push(next);
                        }
                    }
                    self.at += 2;
                }
                '`' => {
                    self.opaque("a command substitution runs a command");
                    out.push('`');
                    self.at += 1;
                }
                '$' => expanded |= self.dollar(&mut out),
                c => {
                    out.push(c);
                    self.at += 1;
                }
            }
        }
        (out, expanded)
    }

    /// Handles `$`: `$(` is a substitution (opaque); `$NAME`, `${…}` are expansions (kept as
    /// written, and reported). Returns whether it was an expansion.
    fn dollar(&mut self, out: &mut String) -> bool {
        match self.peek(1) {
            Some('(') => {
                self.opaque("a command substitution runs a command");
                out.push('$');
                self.at += 1;
                true
            }
            Some(c) if c == '{' || c == '_' || c.is_ascii_alphanumeric() || "?#@*!$-".contains(c) => {
                out.push('$');
                self.at += 1;
                true
            }
            _ => {
                out.push('$');
                self.at += 1;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        parse(text).commands.into_iter().map(|c| c.words).collect()
    }

    #[test]
    fn splits_compound_commands() {
        assert_eq!(
            words("cd src && cargo test || echo no; ls | wc -l & true"),
            vec![
                vec!["cd", "src"],
                vec!["cargo", "test"],
                vec!["echo", "no"],
                vec!["ls"],
                vec!["wc", "-l"],
                vec!["true"]
            ]
        );
    }

    #[test]
    fn removes_quotes_and_escapes() {
        assert_eq!(
            words(r#"echo 'a b' "c \"d\"" e\ f"#),
            vec![vec!["echo", "a b", "c \"d\"", "e f"]]
        );
    }

    #[test]
    fn redirections_are_collected() {
        let line = parse("echo hi > out.txt 2>/dev/null >> log && cat < in.txt 2>&1");
        assert_eq!(line.commands[0].words, ["echo", "hi"]);
        let targets: Vec<(bool, &str)> = line.commands[0]
            .redirects
            .iter()
            .map(|r| (r.output, r.target.as_str()))
            .collect();
        assert_eq!(targets, [(true, "out.txt"), (true, "/dev/null"), (true, "log")]);
        assert_eq!(
            line.commands[1].redirects,
            vec![Redirect {
                output: false,
                target: "in.txt".into()
            }]
        );
        assert!(line.opaque.is_none());
    }

    #[test]
    fn substitutions_and_eval_are_opaque() {
        assert!(parse("rm $(cat list)").opaque.is_some());
        assert!(parse("echo `id`").opaque.is_some());
        assert!(parse("diff <(ls a) <(ls b)").opaque.is_some());
        assert!(parse("eval \"$CMD\"").opaque.is_some());
        assert!(parse("echo 'unclosed").opaque.is_some());
        assert!(parse("echo '$(not run)'").opaque.is_none());
    }

    #[test]
    fn expansions_are_marked() {
        let line = parse("cat $HOME/x \"${DIR}/y\" '$z'");
        assert_eq!(line.commands[0].expanded, vec![1, 2]);
    }

    #[test]
    fn heredoc_bodies_are_not_commands() {
        let line = parse("cat > f.txt <<'EOF'\nrm -rf /\nEOF\nls");
        assert_eq!(words_of(&line), vec![vec!["cat"], vec!["ls"]]);
        assert_eq!(line.commands[0].redirects[0].target, "f.txt");
    }

    fn words_of(line: &CommandLine) -> Vec<Vec<String>> {
        line.commands.iter().map(|c| c.words.clone()).collect()
    }

    #[test]
    fn quoting_keeps_plain_words_and_quotes_the_rest() {
        assert_eq!(quote("/usr/bin/sixfold"), "/usr/bin/sixfold");
        assert_eq!(quote("a=b:c,d@e%f+g"), "a=b:c,d@e%f+g");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("~"), "'~'");
        assert_eq!(quote("#x"), "'#x'");
        assert_eq!(quote("{"), "'{'");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(join(["a b", "c"]), "'a b' c");
    }

    proptest! {
        #[test]
        fn a_quoted_word_reads_back_as_that_word(word in "\\PC{0,40}") {
            let line = parse(&quote(&word));
            // `eval` as a first word is read, and also marked opaque: it runs text.
            prop_assert!(line.opaque.is_none() || word == "eval", "{:?}", line.opaque);
            prop_assert_eq!(line.commands.len(), 1);
            prop_assert_eq!(&line.commands[0].words, &vec![word]);
            prop_assert!(line.commands[0].redirects.is_empty());
        }

        #[test]
        fn quoted_words_read_back_as_those_words(
            words in proptest::collection::vec("[a-z $`'\"\\\\<>|&;(){}\n#=~*?-]{0,12}", 1..5)
        ) {
            let line = parse(&join(&words));
            prop_assert!(line.opaque.is_none() || words[0] == "eval", "{:?}", line.opaque);
            prop_assert_eq!(line.commands.len(), 1);
            prop_assert_eq!(&line.commands[0].words, &words);
        }

        #[test]
        fn never_panics(text in "\\PC{0,200}") {
            let _ = parse(&text);
        }

        #[test]
        fn never_panics_on_shell_punctuation(text in "[a-z $`'\"\\\\<>|&;(){}\n#=-]{0,80}") {
            let _ = parse(&text);
        }
    }
}
