//! `sixfold replay`: recorded runs in, a verdict per row out, with the evidence.

use crate::bundles::{self, BundleArgs};
use serde::Serialize;
use sixfold_core::bundle::Bundle;
use sixfold_core::decision::Decision;
use sixfold_core::format::FactsKind;
use sixfold_core::judge::Context;
use sixfold_core::scope::Workspace;
use sixfold_core::trace::{edits_facts, parse_unified_diff, Edit, Malformed, Trace};
use sixfold_core::verdict::{exit_code, RowResult, Strictness, Verdict};
use sixfold_replay::{Format, ReadContext};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Diffs larger than this are refused: `--diff` is untrusted input.
const MAX_DIFF_BYTES: u64 = 256 * 1024 * 1024;

/// Replay recorded agent runs and check them against the bundle's trace rows (invariants such as
/// suite-before-success-claim and no-assertion-weakening), printing each row's verdict and evidence.
///
/// Formats, detected from the content unless --format says: Claude Code's stream-json output and
/// session file, Codex's `exec --json` output and rollout file, and sixfold's own event log.
/// Exit codes follow strictness: with --on (the default) 0 whatever the verdicts; with --strict,
/// 1 for any gating gap, else 3 for any gating unk, else 0.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Recordings to replay (processed in parallel, each file's verdicts separate).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Also say what this mode would have decided of each step.
    #[arg(long, value_name = "ID")]
    mode: Option<String>,
    /// A gating row that is not ok fails the run (exit 1 for a gap, else 3 for an unk).
    #[arg(long, conflicts_with = "on")]
    strict: bool,
    /// Report the verdicts and exit 0 (the default).
    #[arg(long)]
    on: bool,
    /// The recording's format: auto, claude-stream-json, claude-session, codex-exec-json,
    /// codex-rollout, sixfold-events.
    #[arg(long, default_value = "auto", value_name = "FORMAT", value_parser = parse_format)]
    format: FormatArg,
    /// A unified diff of the run's changes: it decides edits the record does not show.
    #[arg(long, value_name = "FILE", conflicts_with = "git")]
    diff: Option<PathBuf>,
    /// Diff the working tree of the current repository against BASE for the run's changes.
    #[arg(long, value_name = "BASE")]
    git: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bundle: BundleArgs,
}

#[derive(Debug, Clone, Copy)]
struct FormatArg(Option<Format>);

fn parse_format(text: &str) -> Result<FormatArg, String> {
    if text == "auto" {
        return Ok(FormatArg(None));
    }
    Format::parse(text).map(|f| FormatArg(Some(f))).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("`{text}` is not a format; use auto, {}", names.join(", "))
    })
}

/// What a mode says of a recorded step.
#[derive(Debug, Clone, Serialize)]
struct Judged {
    step: usize,
    tool: String,
    act: String,
    decision: Decision,
    reason: String,
    rules: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
struct StepCounts {
    allow: usize,
    ask: usize,
    refuse: usize,
    /// Each step the mode would not simply allow.
    judged: Vec<Judged>,
}

#[derive(Debug, Clone, Serialize)]
struct FileReport {
    file: String,
    format: Option<String>,
    error: Option<String>,
    lines: u64,
    steps: usize,
    ended: bool,
    skipped: std::collections::BTreeMap<String, u64>,
    malformed: Vec<Malformed>,
    rows: Vec<RowResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mode: Option<StepCounts>,
}

pub fn run(args: Args) -> u8 {
    let (bundle, _, diagnostics) = bundles::load(&args.bundle);
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        eprintln!(
            "error: the bundle has errors, so nothing was replayed\n  = help: run `sixfold check` for the full report"
        );
        return 2;
    }
    if let Some(mode) = &args.mode {
        if bundle.mode(mode).is_none() {
            let known: Vec<String> = bundle.modes().map(|m| format!("`{}`", m.id)).collect();
            eprintln!(
                "error: there is no mode `{mode}`\n  = help: the modes are {}",
                known.join(", ")
            );
            return 2;
        }
    }
    let diff = match supplied_diff(&args) {
        Ok(d) => d,
        Err(message) => {
            eprintln!("error: {message}");
            return 2;
        }
    };
    let rows = bundle.rows_about(FactsKind::Trace);
    let reports = replay_all(&args, &bundle, &rows, diff.as_deref());
    let all_rows: Vec<RowResult> = reports.iter().flat_map(|r| r.rows.iter().cloned()).collect();
    let strictness = if args.strict {
        Strictness::Strict
    } else {
        Strictness::On
    };
    let exit = exit_code(&all_rows, strictness);
    if args.json {
        print_json(&reports, exit);
    } else {
        print_text(&reports, args.mode.as_deref(), exit, strictness);
    }
    u8::try_from(exit).unwrap_or(1)
}

fn supplied_diff(args: &Args) -> Result<Option<Vec<Edit>>, String> {
    let text = if let Some(path) = &args.diff {
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot read the diff `{}`: {e}", path.display()))?;
        if meta.len() > MAX_DIFF_BYTES {
            return Err(format!(
                "the diff `{}` is larger than {MAX_DIFF_BYTES} bytes",
                path.display()
            ));
        }
        std::fs::read_to_string(path).map_err(|e| format!("cannot read the diff `{}`: {e}", path.display()))?
    } else if let Some(base) = &args.git {
        let out = std::process::Command::new("git")
            .args(["diff", "--no-color", "--no-ext-diff", base])
            .output()
            .map_err(|e| format!("cannot run `git diff {base}`: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "`git diff {base}` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        return Ok(None);
    };
    Ok(Some(parse_unified_diff(&text, Path::new(""))))
}

fn replay_all(args: &Args, bundle: &Bundle, rows: &[&str], diff: Option<&[Edit]>) -> Vec<FileReport> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<FileReport>>> = Mutex::new(vec![None; args.files.len()]);
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(args.files.len())
        .max(1);
    let progress = args.files.len() > 1 && std::io::stderr().is_terminal();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = args.files.get(i) else { break };
                let report = replay_one(file, args, bundle, rows, diff);
                if let Ok(mut slots) = results.lock() {
                    if let Some(slot) = slots.get_mut(i) {
                        *slot = Some(report);
                    }
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if progress {
                    eprint!("\rreplayed {n}/{} files", args.files.len());
                }
            });
        }
    });
    if progress {
        eprintln!();
    }
    let slots = results.into_inner().unwrap_or_default();
    slots.into_iter().flatten().collect()
}

fn replay_one(file: &Path, args: &Args, bundle: &Bundle, rows: &[&str], diff: Option<&[Edit]>) -> FileReport {
    let shown = file.display().to_string();
    let cx = ReadContext { bundle };
    let mut trace = match sixfold_replay::read_file(file, args.format.0, &cx) {
        Ok(t) => t,
        Err(e) => {
            let error = format!("cannot read `{shown}`: {e}");
            let results = bundle
                .evaluate_rows(rows, &serde_json::Value::Null)
                .into_iter()
                .map(|mut r| {
                    r.verdict = Verdict::Unk;
                    r.evidence = error.clone();
                    r
                })
                .collect();
            return FileReport {
                file: shown,
                format: None,
                error: Some(error),
                lines: 0,
                steps: 0,
                ended: false,
                skipped: Default::default(),
                malformed: Vec::new(),
                rows: results,
                mode: None,
            };
        }
    };
    let workspace = workspace_of(&trace);
    let mode = args.mode.as_deref().map(|m| judge_steps(bundle, m, &trace, &workspace));
    let mut report = FileReport {
        file: shown,
        format: Some(trace.format.clone()),
        error: None,
        lines: trace.lines,
        steps: trace.steps.len(),
        ended: trace.ended,
        skipped: std::mem::take(&mut trace.skipped),
        malformed: std::mem::take(&mut trace.malformed),
        rows: Vec::new(),
        mode,
    };
    let mut extra = serde_json::Map::new();
    if let Some(supplied) = diff {
        let mut edits = edits_facts(supplied, &workspace);
        // A supplied diff names paths relative to its repository: that is what test globs see.
        if let Some(list) = edits.as_array_mut() {
            for (edit, value) in supplied.iter().zip(list.iter_mut()) {
                if let Some(o) = value.as_object_mut() {
                    o.insert("relative".into(), edit.path.clone().into());
                }
            }
        }
        extra.insert("diff".into(), serde_json::json!({ "edits": edits }));
    }
    // Rows that fold over steps read the trace one step at a time: memory stays flat.
    report.rows = bundle.evaluate_trace_rows(rows, &trace, &workspace, &extra);
    report
}

/// The recorded working directory is the workspace the run's paths are judged against.
fn workspace_of(trace: &Trace) -> Workspace {
    let root = trace
        .cwd
        .clone()
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    Workspace::new(root).with_process_environment()
}

fn judge_steps(bundle: &Bundle, mode: &str, trace: &Trace, workspace: &Workspace) -> StepCounts {
    let context = Context::new(workspace.clone());
    let mut counts = StepCounts::default();
    for (i, step) in trace.steps.iter().enumerate() {
        let j = bundle.judge(mode, &step.effects, &context);
        match j.decision {
            Decision::Allow => counts.allow += 1,
            Decision::Ask => counts.ask += 1,
            Decision::Refuse => counts.refuse += 1,
        }
        if j.decision != Decision::Allow {
            counts.judged.push(Judged {
                step: i + 1,
                tool: step.tool.clone(),
                act: step.act.text.clone(),
                decision: j.decision,
                reason: j.reason,
                rules: j.rules,
            });
        }
    }
    counts
}

fn print_text(reports: &[FileReport], mode: Option<&str>, exit: i32, strictness: Strictness) {
    let width = reports
        .iter()
        .flat_map(|r| r.rows.iter())
        .map(|r| r.id.len())
        .max()
        .unwrap_or(0);
    for report in reports {
        match &report.error {
            Some(error) => println!("{}  (unreadable: {error})", report.file),
            None => {
                let skipped: u64 = report.skipped.values().sum();
                println!(
                    "{}  ({}, {} steps, {} lines, {} skipped, {} malformed{})",
                    report.file,
                    report.format.as_deref().unwrap_or("?"),
                    report.steps,
                    report.lines,
                    skipped,
                    report.malformed.len(),
                    if report.ended { "" } else { ", did not end" }
                );
            }
        }
        for m in &report.malformed {
            eprintln!("{}:{}: malformed line skipped: {}", report.file, m.line, m.error);
        }
        for row in &report.rows {
            println!(
                "  {:<3}  {:<8}  {:<width$}  {}",
                row.verdict.as_str(),
                row.severity.to_string(),
                row.id,
                row.evidence
            );
        }
        if let (Some(counts), Some(mode)) = (&report.mode, mode) {
            println!(
                "  mode {mode}: {} allow, {} ask, {} refuse",
                counts.allow, counts.ask, counts.refuse
            );
            for j in &counts.judged {
                println!(
                    "    {:<6}  step {} {} `{}`: {}",
                    j.decision.as_str(),
                    j.step,
                    j.tool,
                    j.act,
                    j.reason
                );
            }
        }
    }
    let count = |v: Verdict| {
        reports
            .iter()
            .flat_map(|r| r.rows.iter())
            .filter(|r| r.verdict == v)
            .count()
    };
    let files = reports.len();
    println!(
        "{files} file{}: {} ok, {} gap, {} unk; exit {exit} ({})",
        if files == 1 { "" } else { "s" },
        count(Verdict::Ok),
        count(Verdict::Gap),
        count(Verdict::Unk),
        if strictness == Strictness::Strict {
            "strict"
        } else {
            "on"
        },
    );
}

fn print_json(reports: &[FileReport], exit: i32) {
    let rows: Vec<serde_json::Value> = reports
        .iter()
        .flat_map(|r| {
            r.rows.iter().map(move |row| {
                serde_json::json!({
                    "file": r.file, "id": row.id, "title": row.title, "severity": row.severity,
                    "assertion": row.assertion, "verdict": row.verdict, "evidence": row.evidence,
                })
            })
        })
        .collect();
    let mut steps = serde_json::Map::new();
    steps.insert("total".into(), reports.iter().map(|r| r.steps).sum::<usize>().into());
    if reports.iter().any(|r| r.mode.is_some()) {
        let sum = |f: fn(&StepCounts) -> usize| reports.iter().filter_map(|r| r.mode.as_ref()).map(f).sum::<usize>();
        steps.insert("allow".into(), sum(|c| c.allow).into());
        steps.insert("ask".into(), sum(|c| c.ask).into());
        steps.insert("refuse".into(), sum(|c| c.refuse).into());
    }
    let out = serde_json::json!({ "rows": rows, "steps": steps, "files": reports, "exit": exit });
    println!("{out}");
}
