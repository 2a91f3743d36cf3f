//! The shell reader: shell text read with a real bash grammar (tree-sitter-bash, the grammar
//! Codex reads `bash -lc` scripts with) into simple commands, their words, redirections and the
//! command lines their substitutions run.
//!
//! It never executes anything. It expands what the text alone decides (quotes, escapes, brace
//! expansion, `~` and `~/…`, a `for` loop's listed words) and marks what only the running shell
//! knows (a parameter, a substitution's output, `~user`) as unknown. The walk over the syntax
//! tree is an allow-list: a node kind it was not written to understand makes the line opaque,
//! and the caller then assumes the worst. See `read.rs` for the kinds it reads.

mod read;
mod word;

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// True for output (`>`, `>>`, `2>`, `&>`, `<>`), false for input (`<`).
    pub output: bool,
    /// The target, quotes removed; `*` when the text does not fix it (an expansion).
    pub target: String,
}

/// What kind of region a command runs in, for what its directory changes do outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    /// A subshell (`( … )`, a pipeline's element): nothing it changes leaks out.
    Subshell,
    /// A branch (`if`): it may run or not.
    Branch,
    /// A loop body or a function body: it may run any number of times.
    Loop,
}

/// One region a command runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scope {
    /// Which region (unique within a line).
    pub id: usize,
    /// What kind.
    pub kind: ScopeKind,
}

/// One simple command: its words and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The words after expansion (quotes removed, braces expanded), assignments first.
    pub words: Vec<String>,
    /// Redirections, in order (a group's apply to every command in it).
    pub redirects: Vec<Redirect>,
    /// Words whose value only the running shell knows (an expansion, a substitution, `~user`),
    /// by index.
    pub expanded: Vec<usize>,
    /// The operators between it and the next simple command, in order (`&&`, `||`, `;`, `|`,
    /// `&`, `\n`, and `!`, `if`, `for`, `while`, `function` after a construct that decides the
    /// status itself): what decides whether its exit status is the line's.
    pub after: Vec<String>,
    /// The command lines its words and redirections run first (`$(…)`, backticks, `<(…)`, an
    /// unquoted here-document's substitutions), each read on its own.
    pub substitutions: Vec<CommandLine>,
    /// The regions it runs in, outermost first.
    pub scopes: Vec<Scope>,
    /// Its and-or list (`a && b || c`), unique within a line.
    pub chain: usize,
    /// True when it runs only if everything before it in its and-or list succeeded (every
    /// operator before it there is `&&`).
    pub gated: bool,
    /// True when its standard input is text the line supplies (a here-document, a here-string,
    /// a pipe from the command before).
    pub fed: bool,
}

/// A parsed command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// The simple commands, in order, whatever joined them.
    pub commands: Vec<SimpleCommand>,
    /// Why the text (or part of it) cannot be understood, when it cannot.
    pub opaque: Option<String>,
    /// The functions the line defines (a later command of that name runs the function).
    pub functions: Vec<String>,
}

/// Reads shell text into simple commands.
///
/// ```
/// use sixfold_core::shell::parse;
/// let line = parse("cd src && touch {a,b}.rs; echo $(date)");
/// assert_eq!(line.commands[1].words, ["touch", "a.rs", "b.rs"]);
/// // The substitution is a command line of its own; the word it makes is unknown.
/// assert_eq!(line.commands[2].substitutions[0].commands[0].words, ["date"]);
/// assert_eq!(line.commands[2].expanded, [1]);
/// // What the grammar's allow-list does not cover is opaque.
/// assert!(parse("echo $((1 + 2))").opaque.is_some());
/// ```
pub fn parse(text: &str) -> CommandLine {
    read::read(text)
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
    // A leading `=` is quoted: the grammar reads a bare `==` argument as a test operator.
    let plain = !word.is_empty()
        && !word.starts_with('=')
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
    fn substitutions_are_command_lines_of_their_own() {
        let line = parse("rm $(cat list) `id` <(ls a)");
        assert!(line.opaque.is_none(), "{:?}", line.opaque);
        let subs: Vec<Vec<Vec<String>>> = line.commands[0].substitutions.iter().map(words_of).collect();
        assert_eq!(
            subs,
            [vec![vec!["cat", "list"]], vec![vec!["id"]], vec![vec!["ls", "a"]]]
        );
        assert_eq!(line.commands[0].expanded, [1, 2, 3]);
        // Quoted text runs nothing.
        assert!(parse("echo '$(not run)'").commands[0].substitutions.is_empty());
        // An unquoted here-document's substitutions run; a quoted one's do not.
        let line = parse("cat > f <<EOF\n$(id) ${x:-$(whoami)}\nEOF");
        assert_eq!(line.commands[0].substitutions.len(), 2);
        assert!(line.commands[0].fed);
        let line = parse("cat > f <<'EOF'\n$(id)\nEOF");
        assert!(line.commands[0].substitutions.is_empty());
    }

    #[test]
    fn what_the_allow_list_does_not_cover_is_opaque() {
        for text in [
            "echo 'unclosed",
            "echo $((1+2))",
            "(( x++ ))",
            "case x in a) ls;; esac",
            "for ((i=0;i<3;i++)); do ls; done",
            "printf -v 'a[$(id)]' x",
            "[ -v 'a[$(id)]' ]",
            "test -v 'a[$(id)]'",
            "[[ $x -eq 1 ]]",
            "declare -i n=x",
            "read 'a[$(id)]'",
            "unset 'a[$(id)]'",
            "let x=1",
            "echo ${!x}",
            "echo ${x:1}",
            "echo ${a[$i]}",
            "echo ${x@P}",
            "echo `echo \\`id\\``",
            "cat <<EOF\n`id`\nEOF",
            "echo $\"x\"",
        ] {
            assert!(parse(text).opaque.is_some(), "{text}");
        }
        for text in [
            "printf '[%s]\\n' x",
            "[ -f a ] && [[ -d b ]]",
            "declare -p x",
            "test -n \"$x\"",
        ] {
            assert!(parse(text).opaque.is_none(), "{text}: {:?}", parse(text).opaque);
        }
    }

    #[test]
    fn words_are_expanded_as_the_text_decides() {
        assert_eq!(words("touch {/root/x,}"), [vec!["touch", "/root/x"]]);
        let line = parse("touch ~root/x ~+/y ~/z");
        assert_eq!(line.commands[0].expanded, [1, 2]);
        // A loop's listed words are its variable's values.
        assert_eq!(
            words("for f in a.rs b.rs; do wc -l \"$f\"; done"),
            [vec!["wc", "-l", "a.rs", "b.rs"]]
        );
        // Unless the body assigns it.
        let line = parse("for f in a; do f=/etc/x; cat $f; done");
        assert_eq!(line.commands[1].expanded, [1]);
        // Unquoted, a value with a blank splits: unknown.
        let line = parse("for f in 'a /etc/x'; do cat $f; done");
        assert_eq!(line.commands[0].expanded, [1]);
    }

    #[test]
    fn scopes_chains_and_feeding() {
        let line = parse("(cd x; ls) | sh; a || cd y && pwd");
        let c = &line.commands;
        assert!(
            matches!(c[0].scopes.as_slice(), [s, t] if s.kind == ScopeKind::Subshell && t.kind == ScopeKind::Subshell)
        );
        assert!(c[2].fed && !c[0].fed);
        assert_eq!(words_of(&line)[3..], [vec!["a"], vec!["cd", "y"], vec!["pwd"]]);
        assert!(c[3].gated && !c[4].gated && !c[5].gated);
        assert!(parse("bash <<EOF\nid\nEOF").commands[0].fed);
        assert!(parse("python3 - <<< 'print(1)'").commands[0].fed);
        let line = parse("f() { rm x; }; f");
        assert_eq!(line.functions, ["f"]);
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
            // Text the grammar's scanner cannot read safely is opaque wherever it stands
            // (`read::crashes_the_grammar`), quoted or not.
            prop_assume!(!read::crashes_the_grammar(&word));
            let line = parse(&format!("p {}", quote(&word)));
            prop_assert!(line.opaque.is_none(), "{:?}", line.opaque);
            prop_assert_eq!(line.commands.len(), 1);
            prop_assert_eq!(&line.commands[0].words, &vec!["p".to_string(), word]);
            prop_assert!(line.commands[0].redirects.is_empty());
        }

        #[test]
        fn quoted_words_read_back_as_those_words(
            words in proptest::collection::vec("[a-z $`'\"\\\\<>|&;(){}\n#=~*?-]{0,12}", 1..5)
        ) {
            let line = parse(&format!("p {}", join(&words)));
            prop_assert!(line.opaque.is_none(), "{:?}", line.opaque);
            prop_assert_eq!(line.commands.len(), 1);
            prop_assert_eq!(line.commands[0].words.get(1..), Some(words.as_slice()));
        }

        /// A program's path (what `hook_settings` writes first) reads back as the program.
        #[test]
        fn a_quoted_program_reads_back(program in "/[A-Za-z0-9_. -]{1,30}", arg in "[a-z-]{1,10}") {
            let line = parse(&join([program.as_str(), arg.as_str()]));
            prop_assert!(line.opaque.is_none(), "{:?}", line.opaque);
            prop_assert_eq!(&line.commands[0].words, &vec![program, arg]);
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
