#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! The CLI's surface, through the real binary: an unknown mode, pattern, provider, kept rule or
//! example run is exit 2 with the close name; shell completions and the man page name every
//! command; the binary outside a clone (an empty directory, its own `HOME`) suggests commands
//! that work there and replays its embedded example runs; the README's mode example (and the kept
//! rules' file) validates against the schema its `#:schema` line reaches.

mod support;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::repo;
use tempfile::TempDir;

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// What a run printed, with its exit code.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn expect(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// An empty working directory and a home of its own, both outside any clone, with nothing of
/// the developer's environment that sixfold reads.
struct Place {
    cwd: TempDir,
    home: TempDir,
}

impl Place {
    fn new() -> Place {
        Place {
            cwd: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn cwd(&self) -> PathBuf {
        self.cwd.path().canonicalize().unwrap()
    }

    fn env(&self, cmd: &mut Command) {
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("XDG_") || key.starts_with("SIXFOLD_") || key.starts_with("CLAUDE") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", self.home.path()).current_dir(self.cwd.path());
    }

    fn run_with(&self, program: &Path, args: &[&str]) -> Run {
        let mut cmd = Command::new(program);
        cmd.args(args);
        self.env(&mut cmd);
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(Path::new(SIXFOLD), args)
    }
}

// ---------------------------------------------------------------------------------------------
// Unknown names: exit 2, and the close name
// ---------------------------------------------------------------------------------------------

/// Checks a run given an unknown name: exit 2, the name said, and `close` offered (or, with
/// `None`, nothing offered).
fn says_unknown(run: &Run, what: &str, close: Option<&str>, case: &str) {
    assert_eq!(
        run.code, 2,
        "{case}: exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains(&format!("there is no {what}")),
        "{case}: {}",
        run.stderr
    );
    match close {
        Some(name) => assert!(
            run.stderr.contains(&format!("did you mean `{name}`?")),
            "{case}: no suggestion of `{name}`:\n{}",
            run.stderr
        ),
        None => assert!(!run.stderr.contains("did you mean"), "{case}: {}", run.stderr),
    }
}

/// Every command that takes a mode, with `M` where the mode goes.
fn mode_commands() -> Vec<Vec<String>> {
    let runs = repo().join("examples/runs");
    let runs = runs.to_str().unwrap();
    [
        vec!["judge", "--no-project", "--mode", "M", "--effects", "{}"],
        vec![
            "judge",
            "--mode",
            "M",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"ls"}"#,
        ],
        vec!["replay", runs, "--mode", "M"],
        vec!["whatif", "--mode", "M", runs],
        vec!["whatif", "--mode", "ask", "--to-mode", "M", runs],
        vec!["modes", "diff", "ask", "M"],
        vec!["modes", "diff", "M", "ask"],
        vec!["sandbox", "check", "--mode", "M"],
        vec!["sandbox", "run", "--mode", "M", "--", "true"],
        vec!["mode", "set", "M"],
        vec!["mode", "set", "M", "--dry-run"],
        vec!["rules", "add", "--allow", "cargo test", "--mode", "M"],
        vec!["launch", "claude-code", "--governed", "--mode", "M", "--", "hi"],
        vec!["serve-tools", "--mode", "M"],
        vec!["mcp-proxy", "--server", "files", "--mode", "M", "--", "true"],
    ]
    .iter()
    .map(|c| c.iter().map(|s| s.to_string()).collect())
    .collect()
}

#[test]
fn every_command_given_an_unknown_mode_exits_2_and_offers_the_close_one() {
    for command in mode_commands() {
        for (typed, close) in [
            ("workspace-wirte", Some("workspace-write")),
            ("readonly", Some("read-only")),
            ("zzzz", None),
        ] {
            let place = Place::new();
            let args: Vec<&str> = command
                .iter()
                .map(|a| if a == "M" { typed } else { a.as_str() })
                .collect();
            let run = place.run(&args);
            says_unknown(&run, &format!("mode `{typed}`"), close, &args.join(" "));
            // Nothing was changed, kept, launched or served.
            assert!(!place.cwd().join(".sixfold").exists(), "{}", args.join(" "));
        }
    }
}

#[test]
fn a_mode_set_to_an_unknown_name_leaves_the_mode_and_says_which_stays() {
    let place = Place::new();
    place.run(&["mode", "set", "ask"]).expect(0);
    let run = place.run(&["mode", "set", "aks"]);
    says_unknown(&run, "mode `aks`", Some("ask"), "mode set aks");
    assert!(run.stderr.contains("the active mode stays `ask`"), "{}", run.stderr);
    assert!(place.run(&["mode", "show"]).stdout.starts_with("mode ask"));
}

#[test]
fn an_unknown_pattern_exits_2_and_offers_the_close_one() {
    let place = Place::new();
    let run = place.run(&["pattern", "set", "orchestrator-worker"]);
    says_unknown(
        &run,
        "pattern `orchestrator-worker`",
        Some("orchestrator-workers"),
        "pattern set",
    );
    assert!(run.stderr.contains("the active pattern stays"), "{}", run.stderr);
    let far = place.run(&["pattern", "set", "swarm-of-bees"]);
    says_unknown(&far, "pattern `swarm-of-bees`", None, "pattern set far");
    place.run(&["pattern", "set", "orchestrator-workers"]).expect(0);
}

#[test]
fn an_unknown_provider_or_kept_rule_exits_2() {
    let place = Place::new();
    for (args, what, close) in [
        (
            vec!["launch", "claude-cod", "--", "hi"],
            "provider `claude-cod`",
            Some("claude-code"),
        ),
        (vec!["launch", "gemini-cli", "--", "hi"], "provider `gemini-cli`", None),
        (
            vec!["judge", "--provider", "codx", "--tool", "Bash", "--input", "{}"],
            "provider `codx`",
            Some("codex"),
        ),
    ] {
        says_unknown(&place.run(&args), what, close, &args.join(" "));
    }
    // A kept rule: the same status, the ids there are listed.
    place.run(&["rules", "add", "--allow", "cargo test"]).expect(0);
    let run = place.run(&["rules", "remove", "rule-7"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("there is no kept rule `rule-7`"), "{}", run.stderr);
    assert!(run.stderr.contains("`rule-1`"), "{}", run.stderr);
    place.run(&["rules", "remove", "rule-1"]).expect(0);
}

/// The judgement itself (the hook's, a batch line's) names the close mode in its reason.
#[test]
fn a_judgement_under_an_unknown_mode_refuses_and_names_the_close_one() {
    let place = Place::new();
    let mut cmd = Command::new(SIXFOLD);
    cmd.args(["judge", "--no-project", "--batch"]);
    place.env(&mut cmd);
    let out = support::fed(
        &mut cmd,
        b"{\"mode\":\"ful\",\"effects\":{}}\n{\"mode\":\"qqqq\",\"effects\":{}}\n",
    );
    assert!(out.status.success());
    let lines = support::json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines[0]["decision"], "refuse");
    assert_eq!(lines[0]["by"], "unjudgeable");
    assert!(
        lines[0]["reason"].as_str().unwrap().contains("did you mean `full`?"),
        "{}",
        lines[0]
    );
    assert!(
        !lines[1]["reason"].as_str().unwrap().contains("did you mean"),
        "{}",
        lines[1]
    );
}

// ---------------------------------------------------------------------------------------------
// Completions and the man page
// ---------------------------------------------------------------------------------------------

/// The commands a `--help` lists (its `Commands:` section), less `help`.
fn commands_in_help(help: &str) -> Vec<String> {
    let Some((_, after)) = help.split_once("Commands:\n") else {
        return Vec::new();
    };
    after
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// Every command path (`["judge"]`, `["mode", "set"]`, …), read from the binary's own help.
fn every_command() -> Vec<Vec<String>> {
    let place = Place::new();
    let mut found = Vec::new();
    let mut pending = vec![Vec::<String>::new()];
    while let Some(path) = pending.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = place.run(&args);
        help.expect(0);
        for name in commands_in_help(&help.stdout) {
            let mut sub = path.clone();
            sub.push(name);
            found.push(sub.clone());
            pending.push(sub);
        }
    }
    found.sort();
    found
}

#[test]
fn the_completion_scripts_name_every_command() {
    let commands = every_command();
    for expected in ["judge", "replay", "completions", "man", "examples", "schema"] {
        assert!(
            commands.iter().any(|c| c == &[expected]),
            "{expected} missing from {commands:?}"
        );
    }
    assert!(commands.iter().any(|c| c == &["mode", "set"]), "{commands:?}");
    let place = Place::new();
    for shell in ["bash", "zsh", "fish"] {
        let run = place.run(&["completions", shell]);
        run.expect(0);
        assert!(run.stderr.is_empty(), "{}", run.stderr);
        for command in &commands {
            for word in command {
                assert!(
                    run.stdout.contains(word.as_str()),
                    "the {shell} script never names `{word}`"
                );
            }
        }
    }
    // Flags too, nested ones included.
    let bash = place.run(&["completions", "bash"]);
    for flag in ["--mode", "--example", "--strict", "--dry-run", "--dir", "--write"] {
        assert!(bash.stdout.contains(flag), "{flag}");
    }
    // An unknown shell is a usage error.
    place.run(&["completions", "tcsh"]).expect(2);
}

#[test]
fn the_bash_completion_script_parses() {
    let place = Place::new();
    let run = place.run(&["completions", "bash"]);
    run.expect(0);
    let file = place.cwd().join("sixfold.bash");
    std::fs::write(&file, &run.stdout).unwrap();
    let checked = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    // Sourced in a shell, it registers a completion for `sixfold` that completes its commands.
    let script = format!(
        "source {}; COMP_WORDS=(sixfold rep); COMP_CWORD=1; COMP_LINE='sixfold rep'; COMP_POINT=11; \
         _sixfold sixfold rep sixfold; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display()
    );
    let completed = Command::new("bash").arg("-c").arg(script).output().unwrap();
    let words = String::from_utf8_lossy(&completed.stdout);
    assert!(
        completed.status.success(),
        "{}",
        String::from_utf8_lossy(&completed.stderr)
    );
    assert!(words.lines().any(|w| w == "replay"), "{words}");
    assert!(!words.lines().any(|w| w == "judge"), "{words}");
}

/// The roff requests and macros a man page made of `man(7)` uses.
const REQUESTS: &[&str] = &[
    "TH", "SH", "SS", "TP", "PP", "LP", "P", "IP", "RS", "RE", "B", "I", "BR", "BI", "IR", "IB", "RB", "RI", "br",
    "sp", "nf", "fi", "ie", "el", "ds", "in", "ad", "nh", "hy",
];

/// Checks that `page` is roff as `man(7)` reads it, at the least: ASCII, each control line a
/// known request, each escape a known one, fonts given as B, I, R or P. The sections, in order.
fn roff_sections(page: &str) -> Vec<String> {
    assert!(page.is_ascii(), "a man page is ASCII (others as \\[uXXXX])");
    let mut sections = Vec::new();
    let mut titled = false;
    for (n, line) in page.lines().enumerate() {
        let at = format!("line {}: `{line}`", n + 1);
        if let Some(control) = line.strip_prefix('.') {
            let request = control.split_whitespace().next().unwrap_or("");
            assert!(REQUESTS.contains(&request), "unknown request {at}");
            if request == "TH" {
                titled = true;
            }
            if request == "SH" {
                assert!(titled, ".SH before .TH, {at}");
                sections.push(control[2..].trim().trim_matches('"').to_string());
            }
        }
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                continue;
            }
            match chars.next() {
                Some('-' | '\\' | 'e' | '&' | '(' | '*' | 'n' | ' ' | '.') => {}
                Some('f') => assert!(matches!(chars.next(), Some('B' | 'I' | 'R' | 'P')), "unknown font {at}"),
                Some('[') => {
                    let name: String = chars.by_ref().take_while(|c| *c != ']').collect();
                    assert!(
                        name.strip_prefix('u')
                            .is_some_and(|hex| u32::from_str_radix(hex, 16).is_ok()),
                        "unknown \\[{name}] {at}"
                    );
                }
                other => panic!("unknown escape \\{other:?} {at}"),
            }
        }
    }
    assert!(titled, "no .TH");
    sections
}

/// `\-` in roff is a hyphen: the text with its escapes undone, enough to find a name in.
fn plain(roff: &str) -> String {
    roff.replace("\\-", "-")
}

#[test]
fn the_man_page_is_roff_and_names_every_command() {
    let place = Place::new();
    let run = place.run(&["man"]);
    run.expect(0);
    let sections = roff_sections(&run.stdout);
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "SUBCOMMANDS", "EXIT STATUS"] {
        assert!(
            sections.iter().any(|s| s == section),
            "{section} missing from {sections:?}"
        );
    }
    let text = plain(&run.stdout);
    let commands = every_command();
    for command in commands.iter().filter(|c| c.len() == 1) {
        assert!(
            text.contains(&format!("sixfold-{}(1)", command[0])),
            "sixfold({}) missing",
            command[0]
        );
    }
    // The exit status of an unknown name is said there.
    assert!(text.contains("a name that is not there"), "{text}");

    // `--dir`: a page per command, nested ones included, each roff.
    let dir = place.cwd().join("man/man1");
    place.run(&["man", "--dir", dir.to_str().unwrap()]).expect(0);
    let top = std::fs::read_to_string(dir.join("sixfold.1")).unwrap();
    assert!(roff_sections(&top).iter().any(|s| s == "EXIT STATUS"));
    for command in &commands {
        let file = dir.join(format!("sixfold-{}.1", command.join("-")));
        let page = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        roff_sections(&page);
        assert!(
            plain(&page).contains(&format!("sixfold-{}", command.join("-"))),
            "{}",
            file.display()
        );
    }
    // Where groff is installed, it formats every page without a warning about the input.
    let groff = Command::new("groff").arg("--version").output();
    if groff.is_ok_and(|o| o.status.success()) {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let out = Command::new("groff")
                .args(["-man", "-Tutf8", "-ww", "-z"])
                .arg(&path)
                .output()
                .unwrap();
            let warnings = String::from_utf8_lossy(&out.stderr);
            let bad: Vec<&str> = warnings.lines().filter(|l| !l.contains("cannot adjust line")).collect();
            assert!(out.status.success() && bad.is_empty(), "{}: {bad:?}", path.display());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The binary outside a clone
// ---------------------------------------------------------------------------------------------

/// The binary as an install puts it: a file of its own outside the repository (a hard link, so
/// no copy of its size is made where the file system allows one).
fn installed(into: &Path) -> PathBuf {
    let bin = into.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("sixfold");
    if std::fs::hard_link(SIXFOLD, &exe).is_err() {
        std::fs::copy(SIXFOLD, &exe).unwrap();
    }
    exe
}

#[test]
fn sixfold_alone_outside_a_clone_suggests_commands_that_work_there() {
    let place = Place::new();
    let install = tempfile::tempdir().unwrap();
    let exe = installed(install.path());
    let alone = place.run_with(&exe, &[]);
    alone.expect(2);
    let suggested: Vec<&str> = alone
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| l.starts_with("sixfold "))
        .collect();
    assert!(suggested.len() >= 4, "{}", alone.stderr);
    assert!(
        suggested.iter().any(|s| s.starts_with("sixfold replay --example")),
        "{}",
        alone.stderr
    );
    let path = format!(
        "{}:{}",
        exe.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for line in suggested {
        // Each as a person would type it, in the empty directory.
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(line).env("PATH", &path);
        place.env(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "`{line}` exits {:?} outside a clone:\n{}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_embedded_example_runs_replay_as_the_files_do() {
    let place = Place::new();
    let install = tempfile::tempdir().unwrap();
    let exe = installed(install.path());
    let listed = place.run_with(&exe, &["examples", "--json"]);
    listed.expect(0);
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    let names: BTreeSet<String> = listed["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert!(!e["about"].as_str().unwrap().is_empty(), "{e}");
            e["name"].as_str().unwrap().to_string()
        })
        .collect();
    let on_disk: BTreeSet<String> = std::fs::read_dir(repo().join("examples/runs"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".jsonl"))
                .map(String::from)
        })
        .collect();
    assert_eq!(names, on_disk);

    // Replayed from the binary in an empty directory, and from the files in the clone: the same
    // judgements and verdicts, file for file.
    let embedded = place.run_with(
        &exe,
        &["replay", "--example", "all", "--mode", "workspace-write", "--json"],
    );
    embedded.expect(0);
    let mut cmd = Command::new(SIXFOLD);
    cmd.args(["replay", "examples/runs", "--mode", "workspace-write", "--json"])
        .current_dir(repo());
    let files = cmd.output().unwrap();
    assert!(files.status.success());
    let embedded: Value = serde_json::from_str(&embedded.stdout).unwrap();
    let files: Value = serde_json::from_str(&String::from_utf8_lossy(&files.stdout)).unwrap();
    let reports = |v: &Value| -> Vec<Value> {
        v["files"]
            .as_array()
            .unwrap_or_else(|| panic!("no files in {v}"))
            .iter()
            .map(
                |f| serde_json::json!({ "file": f["file"], "steps": f["steps"], "rows": f["rows"], "mode": f["mode"] }),
            )
            .collect()
    };
    assert_eq!(reports(&embedded).len(), on_disk.len());
    assert_eq!(reports(&embedded), reports(&files));
    // One example by name.
    let one = place.run_with(&exe, &["replay", "--example", "claude-claim-without-suite"]);
    one.expect(0);
    assert!(
        one.stdout.contains("examples/runs/claude-claim-without-suite.jsonl"),
        "{}",
        one.stdout
    );
    assert!(
        one.stdout.contains("gap  gating    suite-before-success-claim"),
        "{}",
        one.stdout
    );
}

#[test]
fn an_unknown_example_run_exits_2_and_offers_the_close_one() {
    let place = Place::new();
    let run = place.run(&["replay", "--example", "claude-claim-without-suit"]);
    says_unknown(
        &run,
        "example run `claude-claim-without-suit`",
        Some("claude-claim-without-suite"),
        "example",
    );
    says_unknown(
        &place.run(&["replay", "--example", "qqqq"]),
        "example run `qqqq`",
        None,
        "far example",
    );
    // Under an unknown mode, the embedded runs are not replayed either.
    let run = place.run(&["replay", "--example", "all", "--mode", "workspace-wirte"]);
    says_unknown(
        &run,
        "mode `workspace-wirte`",
        Some("workspace-write"),
        "example under a slip",
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

// ---------------------------------------------------------------------------------------------
// `#:schema` in a project's mode file
// ---------------------------------------------------------------------------------------------

/// The README's section `heading`: its first fenced block of `lang`, and the section's text.
fn readme_block(heading: &str, lang: &str) -> (String, String) {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find(heading)
        .unwrap_or_else(|| panic!("no `{heading}` in the README"));
    let section = &readme[start..];
    let section = match section[heading.len()..].find("\n## ") {
        Some(end) => &section[..heading.len() + end],
        None => section,
    };
    let fence = format!("```{lang}\n");
    let open = section.find(&fence).unwrap() + fence.len();
    let close = section[open..].find("```").unwrap();
    (section[open..open + close].to_string(), section.to_string())
}

/// The JSON Schema keywords `check` understands, and those that only annotate.
const CHECKED: &[&str] = &[
    "$ref",
    "type",
    "properties",
    "additionalProperties",
    "required",
    "items",
    "anyOf",
    "oneOf",
    "const",
    "enum",
    "minimum",
];
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$defs",
    "title",
    "description",
    "default",
    "format",
    "examples",
];

/// A minimal JSON Schema validator over the keywords `sixfold schema` emits (it fails on any
/// other, so nothing is skipped unseen): the errors, each with its JSON pointer.
fn check(root: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            errors.push(format!("{at}: not allowed"));
        }
        return;
    };
    for key in schema.keys() {
        assert!(
            CHECKED.contains(&key.as_str()) || ANNOTATIONS.contains(&key.as_str()),
            "the validator does not know `{key}`"
        );
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let target = root
            .pointer(r.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("no {r}"));
        check(root, target, value, at, errors);
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let is = |t: &str| match t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            _ => false,
        };
        if !types.iter().any(|t| is(t)) {
            errors.push(format!("{at}: not of type {types:?}"));
            return;
        }
    }
    if let Some(c) = schema.get("const") {
        if c != value {
            errors.push(format!("{at}: not {c}"));
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(value) {
            errors.push(format!("{at}: not one of {e:?}"));
        }
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_f64), value.as_f64()) {
        if n < min {
            errors.push(format!("{at}: below {min}"));
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema.get("properties").and_then(Value::as_object);
        for required in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !object.contains_key(required.as_str().unwrap()) {
                errors.push(format!("{at}: `{required}` missing"));
            }
        }
        for (key, v) in object {
            let here = format!("{at}/{key}");
            match (properties.and_then(|p| p.get(key)), schema.get("additionalProperties")) {
                (Some(s), _) => check(root, s, v, &here, errors),
                (None, Some(extra)) => check(root, extra, v, &here, errors),
                (None, None) => {}
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, v) in array.iter().enumerate() {
            check(root, items, v, &format!("{at}/{i}"), errors);
        }
    }
    let passing = |key: &str| -> Option<usize> {
        schema.get(key).and_then(Value::as_array).map(|alts| {
            alts.iter()
                .filter(|alt| {
                    let mut e = Vec::new();
                    check(root, alt, value, at, &mut e);
                    e.is_empty()
                })
                .count()
        })
    };
    if passing("anyOf") == Some(0) {
        errors.push(format!("{at}: matches none of anyOf"));
    }
    if passing("oneOf").is_some_and(|n| n != 1) {
        errors.push(format!("{at}: does not match exactly one of oneOf"));
    }
}

fn validate(schema: &Value, toml_text: &str) -> Vec<String> {
    let value: toml::Value = toml::from_str(toml_text).unwrap();
    let value = serde_json::to_value(value).unwrap();
    let mut errors = Vec::new();
    check(schema, schema, &value, "", &mut errors);
    errors
}

#[test]
fn the_readme_mode_example_reaches_its_schema_in_a_project_and_validates() {
    let (example, section) = readme_block("## Writing a mode", "toml");
    // The file's place and the command that writes the schemas, as the README gives them.
    let file = ".sixfold/modes/careful.toml";
    let command = "sixfold schema --write .sixfold/schema";
    assert!(section.contains(file), "the README does not say where the file goes");
    assert!(section.contains(command), "the README does not give `{command}`");
    let directive = example
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("#:schema "))
        .expect("#:schema first");

    let place = Place::new();
    std::fs::create_dir_all(place.cwd().join(".sixfold/modes")).unwrap();
    let mode_file = place.cwd().join(file);
    std::fs::write(&mode_file, &example).unwrap();
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    place.run(&args).expect(0);

    // TOML editors (Taplo) resolve a relative `#:schema` against the file's directory.
    let schema_file = mode_file.parent().unwrap().join(directive.trim());
    let schema_file = schema_file
        .canonicalize()
        .unwrap_or_else(|e| panic!("`#:schema {directive}` reaches nothing: {e}"));
    assert!(
        schema_file.starts_with(place.cwd().join(".sixfold")),
        "{}",
        schema_file.display()
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&schema_file).unwrap()).unwrap();
    assert_eq!(
        schema,
        serde_json::from_str::<Value>(&place.run(&["schema", "mode"]).stdout).unwrap()
    );
    let errors = validate(&schema, &example);
    assert!(errors.is_empty(), "{errors:?}");
    // The validator is not vacuous: a misspelt key, a wrong type and a missing id are caught.
    for (broken, what) in [
        (
            example.replace("decision = \"ask\"", "decison = \"ask\""),
            "misspelt key",
        ),
        (example.replace("decision = \"ask\"", "decision = 3"), "wrong type"),
        (example.replace("id = \"careful\"", ""), "no id"),
    ] {
        assert_ne!(broken, example, "{what}");
        assert!(!validate(&schema, &broken).is_empty(), "{what} passes the schema");
    }
    // The schemas beside the project's files are not bundle files: the bundle loads, the mode is
    // there, its examples pass.
    place.run(&["check"]).expect(0);
    assert!(place.run(&["modes"]).stdout.contains("careful"));

    // The kept rules' file `sixfold rules add` writes points at the policy schema there too.
    place.run(&["rules", "add", "--allow", "cargo test"]).expect(0);
    let kept_file = place.cwd().join(".sixfold/policies/kept.toml");
    let kept = std::fs::read_to_string(&kept_file).unwrap();
    let directive = kept
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("#:schema "))
        .expect("#:schema first");
    let schema_file = kept_file
        .parent()
        .unwrap()
        .join(directive.trim())
        .canonicalize()
        .unwrap();
    assert_eq!(schema_file, place.cwd().join(".sixfold/schema/policy.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&schema_file).unwrap()).unwrap();
    let errors = validate(&schema, &kept);
    assert!(errors.is_empty(), "{errors:?}\n{kept}");
}

/// `sixfold schema --write DIR` writes each kind's schema, the same as `sixfold schema KIND`.
#[test]
fn schema_write_puts_every_kind_in_a_directory() {
    let place = Place::new();
    let run = place.run(&["schema", "--write", "out/schema"]);
    run.expect(0);
    for kind in ["mode", "policy", "pattern", "provider", "effects", "launch-facts"] {
        let written: Value = serde_json::from_str(
            &std::fs::read_to_string(place.cwd().join(format!("out/schema/{kind}.json"))).unwrap(),
        )
        .unwrap();
        let printed: Value = serde_json::from_str(&place.run(&["schema", kind]).stdout).unwrap();
        assert_eq!(written, printed, "{kind}");
    }
    // One kind alone.
    place.run(&["schema", "policy", "--write", "one"]).expect(0);
    let one: Vec<_> = std::fs::read_dir(place.cwd().join("one")).unwrap().collect();
    assert_eq!(one.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Supported agent CLIs: one place
// ---------------------------------------------------------------------------------------------

/// The README's "Supported agent CLIs" names the versions `package.json` pins (the ones the
/// end-to-end tests drive), and each provider file's `min_version` as the oldest it accepts.
#[test]
fn the_supported_agent_cli_versions_are_the_pinned_ones() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme.find("## Supported agent CLIs").expect("a README section");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let package: Value = serde_json::from_str(&std::fs::read_to_string(repo().join("package.json")).unwrap()).unwrap();
    for (package_name, provider) in [
        ("@anthropic-ai/claude-code", Some("claude-code")),
        ("@openai/codex", Some("codex")),
        ("opencode-ai", None),
    ] {
        let pinned = package["devDependencies"][package_name].as_str().unwrap();
        let row = section
            .lines()
            .find(|l| l.contains(&format!("`{package_name}`")))
            .unwrap_or_else(|| panic!("no row for {package_name}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[3], pinned, "{row}");
        if let Some(id) = provider {
            let file = std::fs::read_to_string(repo().join(format!("providers/{id}.toml"))).unwrap();
            let file: toml::Value = toml::from_str(&file).unwrap();
            assert_eq!(cells[4], file["readiness"]["min_version"].as_str().unwrap(), "{row}");
        }
    }
}
