//! End-to-end: what CI reads of sixfold. `sixfold replay`'s CI formats (JUnit, SARIF, GitHub
//! annotations) agree with its JSON and its exit code; every JSON output carries
//! `schema_version`; the example workflow runs only commands and flags that exist.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sixfold(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sixfold"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run sixfold")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The rows of `replay --json`, as (file, id, verdict, severity).
fn rows(strict: &str) -> Vec<(String, String, String, String)> {
    let out = sixfold(&["replay", "examples/runs", "--json", strict, "--no-project"]);
    json(&out)["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| {
            f["rows"].as_array().unwrap().iter().map(|r| {
                (
                    f["file"].as_str().unwrap().to_string(),
                    r["id"].as_str().unwrap().to_string(),
                    r["verdict"].as_str().unwrap().to_string(),
                    r["severity"].as_str().unwrap().to_string(),
                )
            })
        })
        .collect()
}

#[test]
fn every_format_exits_as_the_verdicts_decide() {
    for strict in ["--strict", "--on"] {
        let want = sixfold(&["replay", "examples/runs", "--json", strict, "--no-project"])
            .status
            .code();
        for format in ["text", "json", "junit", "sarif", "github"] {
            let out = sixfold(&["replay", "examples/runs", "--format", format, strict, "--no-project"]);
            assert_eq!(out.status.code(), want, "{format} {strict}");
        }
    }
    // The recordings hold gating gaps: strict fails.
    let strict = sixfold(&[
        "replay",
        "examples/runs",
        "--format",
        "sarif",
        "--strict",
        "--no-project",
    ]);
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn sarif_has_a_result_per_gap_and_unk() {
    let out = sixfold(&[
        "replay",
        "examples/runs",
        "--format",
        "sarif",
        "--strict",
        "--no-project",
    ]);
    let log = json(&out);
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    // SARIF's own shape: no field of ours at the top.
    assert!(log.get("schema_version").is_none());
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "sixfold");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    let findings: Vec<_> = rows("--strict").into_iter().filter(|r| r.2 != "ok").collect();
    assert!(!findings.is_empty());
    assert_eq!(results.len(), findings.len());
    for (result, (file, id, _, _)) in results.iter().zip(&findings) {
        assert_eq!(&result["ruleId"], id.as_str());
        assert_eq!(rules[result["ruleIndex"].as_u64().unwrap() as usize]["id"], *id);
        assert_eq!(
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            file.as_str()
        );
        assert!(!result["message"]["text"].as_str().unwrap().is_empty());
    }
    assert_eq!(run["invocations"][0]["exitCode"], 1);
}

#[test]
fn junit_has_a_suite_per_recording_and_a_case_per_row() {
    use quick_xml::events::Event;
    let out = sixfold(&["replay", "examples/runs", "--format", "junit", "--on", "--no-project"]);
    let xml = String::from_utf8(out.stdout).unwrap();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut suites, mut cases, mut failures, mut skipped, mut errors) = (0, 0, 0, 0, 0);
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) | Event::Empty(e) => match e.name().as_ref() {
                b"testsuite" => suites += 1,
                b"testcase" => cases += 1,
                b"failure" => failures += 1,
                b"skipped" => skipped += 1,
                b"error" => errors += 1,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    let all = rows("--on");
    assert_eq!(suites, 5);
    assert_eq!(cases, all.len());
    assert_eq!(failures, all.iter().filter(|r| r.2 == "gap").count());
    // Without --strict an unk fails nothing: skipped, never an error.
    assert_eq!(skipped, all.iter().filter(|r| r.2 == "unk").count());
    assert_eq!(errors, 0);
}

#[test]
fn github_annotates_each_finding_and_nothing_else() {
    let out = sixfold(&[
        "replay",
        "examples/runs",
        "--format",
        "github",
        "--strict",
        "--no-project",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let findings: Vec<_> = rows("--strict").into_iter().filter(|r| r.2 != "ok").collect();
    assert_eq!(lines.len(), findings.len() + 1, "{text}");
    for (line, (file, id, verdict, severity)) in lines.iter().zip(&findings) {
        // Under --strict a gating finding fails the run; an advisory one only informs.
        let level = match (severity.as_str(), verdict.as_str()) {
            ("advisory", "unk") => "notice",
            ("advisory", _) => "warning",
            _ => "error",
        };
        assert!(line.starts_with(&format!("::{level} file=")), "{line}");
        assert!(
            line.contains(&format!("file={file},title=sixfold {id} {verdict}::")),
            "{line}"
        );
    }
    assert!(lines.last().unwrap().starts_with("sixfold replay: 5 files,"));
}

#[test]
fn two_outputs_or_two_recording_formats_are_a_usage_error() {
    for args in [
        &["--json", "--format", "junit"][..],
        &["--format", "codex-rollout", "--input-format", "claude-stream-json"][..],
        &["--format", "xml"][..],
    ] {
        let mut all = vec!["replay", "examples/runs", "--no-project"];
        all.extend_from_slice(args);
        let out = sixfold(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
    }
    // Still allowed: the output and the recordings' format each named once.
    let ok = sixfold(&[
        "replay",
        "examples/runs/claude-claim-without-suite.jsonl",
        "--format",
        "sarif",
        "--input-format",
        "claude-stream-json",
        "--no-project",
    ]);
    assert_eq!(ok.status.code(), Some(0));
    // The recording's gap, and the advisory within-lease unk (a vendor's record holds no
    // charges) as a note.
    let results = json(&ok)["runs"][0]["results"].as_array().unwrap().clone();
    let (lease, other): (Vec<_>, Vec<_>) = results.iter().partition(|r| r["ruleId"] == "within-lease");
    assert_eq!(other.len(), 1, "{results:?}");
    assert!(lease.iter().all(|r| r["level"] == "note"), "{results:?}");
}

/// Runs sixfold in `dir` with a private home, feeding `stdin`.
fn run_in(dir: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sixfold"))
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.parent().unwrap())
        .env("XDG_STATE_HOME", dir.parent().unwrap().join("state"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    { child.stdin.take().unwrap() }.write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// Every JSON document sixfold prints of its own carries `schema_version`, at the top of an
/// object (a list is under a name), one per line or one indented document.
#[test]
fn every_json_output_carries_schema_version() {
    let dir = tempfile::Builder::new()
        .prefix("ci")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let project = dir.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    let project = project.canonicalize().unwrap();
    assert!(Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .unwrap()
        .success());
    let runs = root().join("examples/runs");
    let runs = runs.to_str().unwrap();
    assert_eq!(
        run_in(&project, &["mode", "set", "workspace-write"], "").status.code(),
        Some(0)
    );
    let effects = r#"{"writes":["workspace"]}"#;
    let commands: Vec<(Vec<&str>, &str)> = vec![
        (vec!["replay", runs, "--json"], ""),
        (vec!["check", "--json"], ""),
        (vec!["check", "--no-project", "--json"], ""),
        (vec!["modes", "--json"], ""),
        (vec!["modes", "diff", "read-only", "full", "--json"], ""),
        (vec!["providers", "--json"], ""),
        (vec!["sandbox", "check", "--mode", "full", "--json"], ""),
        (
            vec!["whatif", "--mode", "read-only", "--to-mode", "full", "--json", runs],
            "",
        ),
        (vec!["judge", "--mode", "read-only", "--effects", effects], ""),
        (
            vec!["judge", "--batch", "--mode", "read-only"],
            "{\"effects\":{\"writes\":[\"workspace\"]}}\nnot json\n",
        ),
        (vec!["mode", "show", "--json"], ""),
        (vec!["rules", "list", "--json"], ""),
        (vec!["approvals", "list", "--json"], ""),
        (vec!["examples", "--json"], ""),
        (vec!["lease", "show", "--json"], ""),
        (vec!["doctor", "--json"], ""),
    ];
    for (args, stdin) in commands {
        let out = run_in(&project, &args, stdin);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.trim().is_empty(),
            "{args:?} printed nothing: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // One document per line, or one indented document.
        let docs: Vec<serde_json::Value> = match serde_json::from_str(&text) {
            Ok(doc) => vec![doc],
            Err(_) => text.lines().map(|l| serde_json::from_str(l).unwrap()).collect(),
        };
        for doc in &docs {
            assert_eq!(doc["schema_version"], 1, "{args:?}: {doc}");
        }
        if args[0] == "judge" && args[1] == "--batch" {
            assert_eq!(docs.len(), 2, "{args:?}: a line for each, the unreadable one too");
        }
    }
}

/// The shell lines of a workflow's `run:` steps (a `run: |` block's lines, or a one-line `run:`),
/// read as far as a workflow needs: by indentation.
fn run_lines(yaml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<usize> = None;
    for line in yaml.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(at) = block {
            if line.trim().is_empty() || indent > at {
                out.push(line.trim().to_string());
                continue;
            }
            block = None;
        }
        let trimmed = line.trim_start().trim_start_matches("- ");
        if let Some(rest) = trimmed.strip_prefix("run:") {
            match rest.trim() {
                "|" | ">" | "|-" | ">-" => block = Some(indent),
                one => out.push(one.to_string()),
            }
        }
    }
    out
}

/// Each `sixfold …` command in shell lines, as words, up to a redirection.
fn sixfold_commands(lines: &[String]) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    for line in lines {
        if line.starts_with('#') {
            continue;
        }
        for part in line.split(['&', ';', '|']) {
            let words: Vec<String> = part
                .split_whitespace()
                .take_while(|w| !w.starts_with('>') && !w.starts_with("2>") && !w.starts_with('<'))
                .map(String::from)
                .collect();
            if words.first().is_some_and(|w| w == "sixfold") {
                commands.push(words);
            }
        }
    }
    commands
}

/// The subcommands a `--help` lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

fn help(words: &[String]) -> String {
    let mut args: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
    args.push("--help");
    let out = sixfold(&args);
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every `sixfold` command the example workflow runs is one sixfold has, with flags it takes,
/// and the workflow replays with `--strict` and uploads the SARIF.
#[test]
fn the_example_workflow_runs_commands_that_exist() {
    let yaml = std::fs::read_to_string(root().join("examples/ci/sixfold.yml")).unwrap();
    let commands = sixfold_commands(&run_lines(&yaml));
    assert!(commands.len() >= 4, "{commands:?}");
    for command in &commands {
        // The subcommand path: each word the help before it lists as a command.
        let mut path = vec!["sixfold".to_string()];
        for word in command.iter().skip(1).take_while(|w| !w.starts_with('-')) {
            if subcommands(&help(&path)).contains(word) {
                path.push(word.clone());
            } else {
                break;
            }
        }
        let text = help(&path);
        for flag in command.iter().filter(|w| w.starts_with("--")) {
            let flag = flag.split('=').next().unwrap();
            assert!(text.contains(flag), "`{}` has no {flag}", path.join(" "));
        }
        if path.len() > 1 && path[1] == "replay" {
            // The values given to --format are ones replay takes.
            if let Some(i) = command.iter().position(|w| w == "--format") {
                let mut args: Vec<&str> = vec!["replay", "examples/runs", "--no-project", "--format"];
                args.push(&command[i + 1]);
                assert_ne!(sixfold(&args).status.code(), Some(2), "{command:?}");
            }
        }
    }
    let replays: Vec<_> = commands
        .iter()
        .filter(|c| c.get(1).is_some_and(|w| w == "replay"))
        .collect();
    assert!(!replays.is_empty());
    assert!(replays.iter().all(|c| c.iter().any(|w| w == "--strict")), "{replays:?}");
    assert!(replays
        .iter()
        .any(|c| c.windows(2).any(|w| w[0] == "--format" && w[1] == "sarif")));
    assert!(yaml.contains("upload-sarif"));
    assert!(yaml.contains("--output-format stream-json --verbose"));
    assert!(yaml.contains("codex exec --json"));
    // The reader of this test reads what it meant to: a command it cannot see would pass unseen.
    assert_eq!(
        sixfold_commands(&run_lines("steps:\n  - run: sixfold a --b > x\n  - name: y\n    run: |\n      sixfold c && echo\n      sixfold d --e\n  - run: echo\n")),
        vec![vec!["sixfold", "a", "--b"], vec!["sixfold", "c"], vec!["sixfold", "d", "--e"]]
    );
}

/// A flag that does not exist is caught: the check is not one that passes whatever it reads.
#[test]
fn a_missing_flag_is_caught() {
    let words: Vec<String> = ["sixfold", "replay"].iter().map(|s| s.to_string()).collect();
    let text = help(&words);
    assert!(text.contains("--strict") && text.contains("--input-format"));
    assert!(!text.contains("--no-such-flag"));
    assert!(subcommands(&help(&words[..1])).contains(&"replay".to_string()));
    assert!(!subcommands(&help(&words[..1])).contains(&"runs".to_string()));
}

/// A long Claude Code recording: the example run's steps repeated until it holds `bytes`.
fn long_recording(path: &Path, bytes: usize) {
    let text = std::fs::read_to_string(root().join("examples/runs/claude-fix-then-suite-pass.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (first, body, last) = (lines[0], &lines[1..lines.len() - 1], lines[lines.len() - 1]);
    let mut out = String::with_capacity(bytes + text.len());
    out.push_str(first);
    out.push('\n');
    while out.len() < bytes {
        for line in body {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(last);
    out.push('\n');
    std::fs::write(path, out).unwrap();
}

/// Runs sixfold under a pseudo-terminal (`script`), stdout and stderr both on it.
fn on_a_terminal(args: &str) -> String {
    let command = format!("{} {args}", env!("CARGO_BIN_EXE_sixfold"));
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1), from util-linux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A long replay shows how far it has read, by bytes, on a terminal, and only there: never with
/// JSON or a CI format, never when stderr is not a terminal.
#[test]
fn a_long_replay_shows_progress_by_bytes_on_a_terminal_only() {
    let dir = tempfile::Builder::new()
        .prefix("ci")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let file = dir.path().join("long.jsonl");
    long_recording(&file, 4 << 20);
    let path = file.to_str().unwrap();
    let text = on_a_terminal(&format!("replay --no-project {path}"));
    assert!(text.contains("replayed 0/1 file, "), "{text}");
    assert!(text.contains("replayed 1/1 file, 4.0 MiB of 4.0 MiB (100%)"), "{text}");
    // The redraws are few (rate-limited), not one per buffer read.
    let draws = text.matches("\rreplayed").count();
    assert!((1..100).contains(&draws), "{draws} redraws");
    // Even a short replay draws once in text; never in the other outputs.
    let short = root().join("examples/runs/claude-fix-then-suite-pass.jsonl");
    let short = short.to_str().unwrap();
    assert!(on_a_terminal(&format!("replay --no-project {short}")).contains("\rreplayed"));
    for format in ["--json", "--format sarif", "--format junit", "--format github"] {
        let text = on_a_terminal(&format!("replay --no-project {format} {short}"));
        assert!(!text.contains("replayed"), "{format}: {}", &text[..text.len().min(300)]);
    }
    // Not a terminal: nothing on stderr but what the run says.
    let piped = sixfold(&["replay", "--no-project", short]);
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("replayed"));
}
