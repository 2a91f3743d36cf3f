#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! `sixfold whatif`, `sixfold modes diff` and `sixfold mode set --dry-run`, through the real
//! binary: exit codes, JSON, a widening and a narrowing bundle, and a session's dry run.
//!
//! The tests name shipped modes but not their rules' ids: what they check is which way a
//! decision moves, which holds whatever the rules are called.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn runs() -> PathBuf {
    repo().join("examples/runs")
}

/// A scratch directory under Cargo's target tmp dir (not the system temp dir).
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("whatif")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// A bundle directory holding `files`.
fn bundle(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = scratch();
    for (path, text) in files {
        let at = dir.path().join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }
    dir
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", self.stdout, self.stderr))
    }
}

/// `sixfold ARGS…` in a scratch directory with its own HOME, outside any project.
fn sixfold(args: &[&str]) -> Run {
    let home = scratch();
    let out = Command::new(SIXFOLD)
        .args(args)
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// modes diff
// ---------------------------------------------------------------------------------------------

#[test]
fn modes_diff_exits_0_alike_1_differ_2_usage() {
    let same = sixfold(&["modes", "diff", "ask", "ask", "--no-project"]);
    assert_eq!(same.code, 0, "{}{}", same.stdout, same.stderr);
    assert!(same.stdout.contains("decide alike everywhere"), "{}", same.stdout);

    let narrower = sixfold(&["modes", "diff", "read-only", "ask", "--no-project"]);
    assert_eq!(narrower.code, 1, "{}", narrower.stderr);
    assert!(
        narrower
            .stdout
            .contains("`read-only` is at most as permissive as `ask` everywhere"),
        "{}",
        narrower.stdout
    );
    // Either way round, the narrower one is named.
    let other_way = sixfold(&["modes", "diff", "ask", "read-only", "--no-project"]);
    assert_eq!(other_way.code, 1);
    assert!(other_way
        .stdout
        .contains("`read-only` is at most as permissive as `ask` everywhere"));

    let both = sixfold(&["modes", "diff", "ask", "workspace-write", "--no-project"]);
    assert_eq!(both.code, 1);
    assert!(
        both.stdout.contains("neither is at most as permissive"),
        "{}",
        both.stdout
    );

    let missing = sixfold(&["modes", "diff", "ask", "yolo", "--no-project"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("there is no mode `yolo`"), "{}", missing.stderr);
    assert_eq!(sixfold(&["modes", "diff", "ask"]).code, 2, "one mode is a usage error");
    // `sixfold modes` alone still lists the modes.
    let list = sixfold(&["modes", "--no-project"]);
    assert_eq!(list.code, 0);
    assert!(list.stdout.contains("workspace-write"));
}

#[test]
fn modes_diff_json_lists_regions_with_both_decisions() {
    let run = sixfold(&["modes", "diff", "read-only", "full", "--no-project", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["exit"], 1);
    assert_eq!(v["alike"], false);
    assert_eq!(v["a_at_most_as_permissive"], true);
    assert_eq!(v["b_at_most_as_permissive"], false);
    assert_eq!(v["exact"], true);
    let classes = v["classes"].as_array().unwrap();
    assert_eq!(classes[0]["label"], "no place");
    assert_eq!(v["profiles"], classes.len() * classes.len() * 16);
    let regions = v["regions"].as_array().unwrap();
    assert!(!regions.is_empty());
    for r in regions {
        // `full` allows everything, so wherever they differ read-only is the stricter.
        assert_eq!(r["b"]["decision"], "allow", "{r}");
        assert_ne!(r["a"]["decision"], "allow", "{r}");
        assert!(r["description"].as_str().unwrap().contains("reads"), "{r}");
    }
    // The region of a write in the workspace: read-only's ceiling decides it.
    assert!(
        regions.iter().any(|r| r["writes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == "a file in the workspace")
            && r["a"]["by"] == "ceiling"),
        "{regions:#?}"
    );
}

const CAREFUL: &str = r#"
id = "careful"
extends = "workspace-write"
[[rules]]
id = "docs"
decision = "ask"
reason = "writes the docs"
when.writes = ["docs/**"]
"#;

#[test]
fn modes_diff_over_a_project_bundle_names_the_places_its_rules_name() {
    let dir = bundle(&[("modes/careful.toml", CAREFUL)]);
    let path = dir.path().to_str().unwrap();
    let run = sixfold(&[
        "modes",
        "diff",
        "careful",
        "workspace-write",
        "--no-project",
        "--bundle",
        path,
        "--json",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["a_at_most_as_permissive"], true);
    let regions = v["regions"].as_array().unwrap();
    assert!(!regions.is_empty());
    for r in regions {
        assert!(r["description"].as_str().unwrap().contains("`docs/**`"), "{r}");
        assert_eq!(r["a"]["rules"], json!(["careful/docs"]), "{r}");
    }
}

#[test]
fn check_says_where_a_mode_that_claims_to_narrow_widens() {
    let loose = "id = \"loose\"\nextends = \"read-only\"\n[ceiling]\nwrites = [\"workspace\"]\n";
    let dir = bundle(&[("modes/loose.toml", loose)]);
    let run = sixfold(&["check", "--no-project", "--bundle", dir.path().to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("widens the mode it extends"), "{}", run.stderr);
    assert!(run.stderr.contains("it widens where a step"), "{}", run.stderr);
    assert!(run.stderr.contains("writes a file in the workspace"), "{}", run.stderr);
    // One that narrows is fine.
    let dir = bundle(&[("modes/careful.toml", CAREFUL)]);
    let run = sixfold(&["check", "--no-project", "--bundle", dir.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

// ---------------------------------------------------------------------------------------------
// whatif
// ---------------------------------------------------------------------------------------------

fn whatif(extra: &[&str]) -> Run {
    let runs = runs();
    let mut args = vec!["whatif", "--no-project", "--json"];
    args.extend_from_slice(extra);
    args.push(runs.to_str().unwrap());
    let path: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let refs: Vec<&str> = path.iter().map(String::as_str).collect();
    sixfold(&refs)
}

#[test]
fn switching_to_a_wider_mode_widens_and_exits_1() {
    let run = whatif(&["--mode", "ask", "--to-mode", "workspace-write"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    let s = &v["summary"];
    assert!(s["widened"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(
        s["widened"],
        s["to_allow"].as_u64().unwrap() + s["refuse_to_ask"].as_u64().unwrap()
    );
    assert_eq!(
        s["steps"].as_u64().unwrap(),
        s["widened"].as_u64().unwrap() + s["narrowed"].as_u64().unwrap() + s["stayed"].as_u64().unwrap()
    );
    // Same bundle, so no row can change.
    assert_eq!(s["rows_changed"], 0);
    let change = &v["files"][0]["changes"][0];
    assert_eq!(change["movement"], "to_allow");
    assert_eq!(change["after"]["decision"], "allow");
    assert_ne!(change["before"]["decision"], "allow");
    assert!(change["before"]["reason"].as_str().unwrap().contains("mode `ask`"));
    assert!(change["after"]["reason"]
        .as_str()
        .unwrap()
        .contains("mode `workspace-write`"));
}

#[test]
fn switching_to_a_narrower_mode_exits_0() {
    let run = whatif(&["--mode", "workspace-write", "--to-mode", "read-only"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let s = &run.json()["summary"];
    assert_eq!(s["widened"], 0, "{s}");
    assert!(s["narrowed"].as_u64().unwrap() > 0, "{s}");
    // The text form: each changed step with both reasons, then the summary.
    let text = sixfold(&[
        "whatif",
        "--no-project",
        "--mode",
        "workspace-write",
        "--to-mode",
        "read-only",
        runs().to_str().unwrap(),
    ]);
    assert_eq!(text.code, 0);
    assert!(text.stdout.contains("allow → refuse  narrows"), "{}", text.stdout);
    assert!(
        text.stdout.contains("before: mode `workspace-write`"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("after:  mode `read-only`"), "{}", text.stdout);
    assert!(text.stdout.contains("0 widened"), "{}", text.stdout);
}

#[test]
fn a_bundle_that_widens_a_mode_exits_1_and_one_that_narrows_it_exits_0() {
    let wide = bundle(&[("modes/ask.toml", "id = \"ask\"\ndefault = \"allow\"\n")]);
    let run = whatif(&["--mode", "ask", "--bundle", wide.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let s = &run.json()["summary"];
    assert!(s["to_allow"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(s["narrowed"], 0, "{s}");

    let narrow = bundle(&[("modes/ask.toml", "id = \"ask\"\ndefault = \"refuse\"\n")]);
    let run = whatif(&["--mode", "ask", "--bundle", narrow.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["summary"]["widened"], 0);
    assert!(v["summary"]["narrowed"].as_u64().unwrap() > 0);
    // A bundle against itself changes nothing.
    let run = whatif(&[
        "--mode",
        "ask",
        "--bundle",
        narrow.path().to_str().unwrap(),
        "--base",
        narrow.path().to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0);
    assert_eq!(run.json()["summary"]["stayed"], run.json()["summary"]["steps"]);
}

#[test]
fn a_gating_row_that_changes_exits_1() {
    // The new bundle drops a gating row: a run where it found a gap no longer has it.
    let dropped = bundle(&[(
        "policies/no-assertion-weakening.toml",
        "id = \"no-assertion-weakening\"\ndescription = \"dropped\"\n",
    )]);
    let run = whatif(&["--mode", "ask", "--bundle", dropped.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let v = run.json();
    assert_eq!(v["summary"]["widened"], 0);
    assert!(
        v["summary"]["gating_rows_changed"].as_u64().unwrap() > 0,
        "{}",
        v["summary"]
    );
    let rows: Vec<&Value> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["rows"].as_array().unwrap())
        .collect();
    assert!(
        rows.iter()
            .all(|r| r["id"] == "no-assertion-weakening" && r["after"].is_null()),
        "{rows:?}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let run = sixfold(&["whatif", "--no-project", "--mode", "ask", "/nonexistent/run.jsonl"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = whatif(&["--mode", "nope"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("there is no mode `nope`"), "{}", run.stderr);
    let run = whatif(&["--mode", "ask", "--to-mode", "nope"]);
    assert_eq!(run.code, 2);
    let broken = bundle(&[("modes/broken.toml", "id = \"broken\"\ndefault = \"maybe\"\n")]);
    let run = whatif(&["--mode", "ask", "--bundle", broken.path().to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn a_recording_that_cannot_be_read_is_not_a_clean_comparison() {
    let dir = scratch();
    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "not json at all\n").unwrap();
    let run = sixfold(&[
        "whatif",
        "--no-project",
        "--json",
        "--mode",
        "ask",
        junk.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.json()["summary"]["files_not_compared"], 1);
}

// ---------------------------------------------------------------------------------------------
// mode set --dry-run
// ---------------------------------------------------------------------------------------------

/// `sixfold ARGS…` in a project, with a state dir of its own.
fn in_project(project: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    use std::io::Write;
    let mut child = Command::new(SIXFOLD)
        .args(args)
        .current_dir(project)
        .env("HOME", project.parent().unwrap())
        .env("XDG_STATE_HOME", project.parent().unwrap().join("state"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        { input }.write_all(text.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn mode_set_dry_run_shows_the_session_under_the_new_mode_and_changes_nothing() {
    let dir = scratch();
    let project = dir.path().join("p");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let project = project.canonicalize().unwrap();
    assert!(Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .unwrap()
        .success());
    assert_eq!(in_project(&project, &["mode", "set", "workspace-write"], None).code, 0);
    // Nothing recorded yet: a usage error.
    let none = in_project(&project, &["mode", "set", "read-only", "--dry-run"], None);
    assert_eq!(none.code, 2, "{}", none.stderr);
    // Two calls through the hook: a write inside the workspace, a read of a secret.
    for (id, tool, input) in [
        (
            "1",
            "Write",
            json!({ "file_path": project.join("src/a.rs"), "content": "" }),
        ),
        ("2", "Read", json!({ "file_path": project.join(".env") })),
    ] {
        let event = json!({ "hook_event_name": "PreToolUse", "session_id": "s", "cwd": project,
            "tool_name": tool, "tool_input": input, "tool_use_id": id });
        let out = in_project(&project, &["hook", "claude-code"], Some(&event.to_string()));
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    // Narrower: the write would have been refused. Nothing widens: exit 0.
    let narrower = in_project(&project, &["mode", "set", "read-only", "--dry-run"], None);
    assert_eq!(narrower.code, 0, "{}{}", narrower.stdout, narrower.stderr);
    assert!(
        narrower.stdout.contains("dry run: the mode stays `workspace-write`"),
        "{}",
        narrower.stdout
    );
    assert!(
        narrower.stdout.contains("allow → refuse  narrows"),
        "{}",
        narrower.stdout
    );
    // Wider: the secret would have been read. Exit 1.
    let wider = in_project(&project, &["mode", "set", "full", "--dry-run", "--session", "s"], None);
    assert_eq!(wider.code, 1, "{}{}", wider.stdout, wider.stderr);
    assert!(wider.stdout.contains("refuse → allow  WIDENS"), "{}", wider.stdout);
    // The mode was not changed.
    let shown = in_project(&project, &["mode", "show", "--json"], None);
    let v: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(v["mode"], "workspace-write");
    // A mode that does not exist is a usage error there too.
    assert_eq!(
        in_project(&project, &["mode", "set", "yolo", "--dry-run"], None).code,
        2
    );
}

// ---------------------------------------------------------------------------------------------
// The walk-through in docs/policy-review.md
// ---------------------------------------------------------------------------------------------

#[test]
fn the_policy_review_example_widens_and_only_widens() {
    let example = repo().join("examples/policy-change");
    let (before, after) = (example.join("before"), example.join("after"));
    let (before, after) = (before.to_str().unwrap(), after.to_str().unwrap());
    for dir in [before, after] {
        let run = sixfold(&["check", "--no-project", "--bundle", dir]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    let diff = sixfold(&[
        "modes",
        "diff",
        "team",
        "team",
        "--no-project",
        "--base",
        before,
        "--bundle",
        after,
    ]);
    assert_eq!(diff.code, 1, "{}", diff.stderr);
    assert!(
        diff.stdout
            .contains("`team (base)` is at most as permissive as `team (new)` everywhere"),
        "{}",
        diff.stdout
    );
    let run = whatif(&["--mode", "team", "--base", before, "--bundle", after]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let s = &run.json()["summary"];
    assert!(s["to_allow"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(s["narrowed"], 0, "{s}");
}
