//! A row that reads `facts.steps` whole does not make memory grow with the run: past the bundle's
//! bound on whole steps ([`sixfold_core::bundle::MAX_WHOLE_STEPS_BYTES`]) it is unk, naming the
//! bound. Measured as a property of peak resident memory (`VmHWM` in `/proc/self/status`) of a
//! child process, this test binary run again, that reads a generated recording and evaluates the
//! row: never a timing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use sixfold_core::bundle::{Bundle, BundleSource};
use sixfold_core::scope::Workspace;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the child: `PATH|BOUND|ROW` (ROW 1 to evaluate the row, 0 for the baseline).
const CHILD: &str = "SIXFOLD_MEMORY_CHILD";

const ROW: &str = "reads-steps-whole";

/// A custom row that reads the steps whole.
const POLICY: &str = r#"
id = "whole-steps"
[[rows]]
id = "reads-steps-whole"
title = "Reads every step at once"
assertion = "record"
severity = "gating"
script = "whole-steps.rhai"
function = "check"
"#;

const SCRIPT: &str = r#"
fn check(facts, settings) {
    let tools = 0;
    for step in facts.steps { if step.tool != "" { tools += 1; } }
    if tools > 0 { #{ verdict: "ok", evidence: `${tools} steps` } } else { "gap" }
}
"#;

fn bundle() -> Bundle {
    let custom = BundleSource::from_files(
        "memory-test",
        [
            ("policies/whole-steps.toml", POLICY),
            ("policies/whole-steps.rhai", SCRIPT),
        ],
    );
    let (bundle, diagnostics) = Bundle::load(&[sixfold_core::shipped::source(), custom]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    bundle
}

fn vm_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The child: reads the recording, evaluates the row (or not), prints its verdict and its peak.
#[test]
fn child() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    let bound: u64 = parts[1].parse().unwrap();
    let b = bundle().with_max_whole_steps_bytes(bound);
    let cx = sixfold_replay::ReadContext { bundle: &b };
    let trace = sixfold_replay::read_file(Path::new(parts[0]), None, &cx).unwrap();
    let workspace = Workspace::new(trace.cwd.clone().unwrap_or_else(|| "/".into()));
    let rows: Vec<&str> = if parts[2] == "1" { vec![ROW] } else { vec![] };
    let results = b.evaluate_trace_rows(&rows, &trace, &workspace, &serde_json::Map::new());
    let result = results
        .first()
        .map(|r| format!("{} {}", r.verdict, r.evidence))
        .unwrap_or_default();
    println!("\nSTEPS {}\nRESULT {result}\nVMHWM {}", trace.steps.len(), vm_hwm_kib());
}

/// What the child said: its peak in KiB, its step count and the row's verdict and evidence.
fn measure(recording: &Path, bound: u64, row: bool) -> (u64, usize, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{}|{bound}|{}", recording.display(), u8::from(row)))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .to_string()
    };
    (
        field("VMHWM ").parse().unwrap(),
        field("STEPS ").parse().unwrap(),
        field("RESULT "),
    )
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/runs/claude-fix-then-suite-pass.jsonl")
}

/// The example Claude Code run with its steps repeated until it holds `bytes`.
fn long_recording(path: &Path, bytes: usize) {
    let text = std::fs::read_to_string(example()).unwrap();
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

/// KiB in a MiB.
const MIB: u64 = 1024;

#[test]
fn a_row_reading_every_step_keeps_within_the_bound() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let long = dir.join("long.jsonl");
    long_recording(&long, 12 << 20);
    // A small bound, so a recording a debug build reads quickly is long past it.
    let bound = 256 * 1024;
    let (baseline, steps, _) = measure(&long, bound, false);
    let (bounded, _, verdict) = measure(&long, bound, true);
    let (unbounded, _, whole) = measure(&long, u64::MAX, true);
    eprintln!("{steps} steps: baseline {baseline} KiB, bounded {bounded} KiB, unbounded {unbounded} KiB");
    // Past the bound the row is unk, and says which bound and where.
    assert!(verdict.starts_with("unk "), "{verdict}");
    assert!(verdict.contains("more than 256 KiB of facts"), "{verdict}");
    assert!(verdict.contains("each_step"), "{verdict}");
    // What the row adds stays near the bound; without it, it grows with the run (the control
    // that shows this measure sees the growth).
    assert!(whole.starts_with("ok "), "{whole}");
    assert!(
        bounded.saturating_sub(baseline) < 12 * MIB,
        "bounded: +{} KiB",
        bounded.saturating_sub(baseline)
    );
    assert!(
        unbounded.saturating_sub(baseline) > 24 * MIB,
        "unbounded: +{} KiB",
        unbounded.saturating_sub(baseline)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Within the bound the row reads every step as before: the shipped default holds a real run.
#[test]
fn a_short_run_is_read_whole() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let (_, steps, verdict) = measure(&example(), sixfold_core::bundle::MAX_WHOLE_STEPS_BYTES, true);
    assert_eq!(verdict, format!("ok {steps} steps"));
}
