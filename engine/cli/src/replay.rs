//! `sixfold replay`: recorded runs in, a verdict per row out, with the evidence.

use crate::bundles::{self, BundleArgs};
use crate::examples::Recording;
use crate::output::{errln, out, outln};
use crate::progress::Progress;
use serde::Serialize;
use sixfold_core::bundle::Bundle;
use sixfold_core::decision::{DecidedBy, Decision};
use sixfold_core::format::FactsKind;
use sixfold_core::judge::Context;
use sixfold_core::scope::Workspace;
use sixfold_core::trace::{edits_facts, parse_unified_diff, Edit, Malformed, Step, Trace};
use sixfold_core::verdict::{exit_code, RowResult, Strictness, Verdict};
use sixfold_replay::{Format, ReadContext};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Diffs larger than this are refused: `--diff` is untrusted input.
const MAX_DIFF_BYTES: u64 = 256 * 1024 * 1024;

/// Replay recorded agent runs and check them against the bundle's trace rows (invariants such as
/// suite-before-success-claim and no-assertion-weakening), printing each row's verdict and evidence.
///
/// Formats, detected from the content unless --input-format says: Claude Code's stream-json
/// output and session file, Codex's `exec --json` output and rollout file, OpenCode's `run
/// --format json` output and `export` of a session, and sixfold's own event log. The verdicts
/// print as text, JSON, JUnit XML, SARIF or GitHub annotations (--format).
/// A directory stands for the `*.jsonl` files in it and in its subdirectories, in path order
/// (symbolic links to directories are not followed; other files, such as a recording's notes or
/// an OpenCode export, which is named by its path, are left out).
/// Exit codes follow strictness: with --on (the default) 0 whatever the verdicts; with --strict,
/// 1 for any gating gap, else 3 for any gating unk, else 0. A path that does not exist, or a
/// directory with no recordings, is a usage error (exit 2); a file that cannot be read is replayed
/// as unreadable, its rows unk.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Recordings to replay, or directories of them (processed in parallel, each file's verdicts
    /// separate).
    #[arg(required_unless_present = "examples", value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Also replay the example run NAME embedded in this binary, from any directory (`sixfold
    /// examples` lists them; `all` for every one). Repeatable.
    #[arg(long = "example", value_name = "NAME")]
    examples: Vec<String>,
    /// Also judge each step by this mode: its decision (allow, ask, refuse) and the reason.
    #[arg(long, value_name = "ID")]
    mode: Option<String>,
    /// A gating row that is not ok fails the run (exit 1 for a gap, else 3 for an unk).
    #[arg(long, conflicts_with = "on")]
    strict: bool,
    /// Report the verdicts and exit 0 (the default).
    #[arg(long)]
    on: bool,
    /// The output: text (the default), json, junit (JUnit XML), sarif (SARIF 2.1.0) or github
    /// (GitHub Actions annotations); see docs/ci.md. A recording's format named here is read as
    /// --input-format.
    #[arg(long, value_name = "FORMAT", value_parser = parse_format_choice)]
    format: Option<FormatChoice>,
    /// The recordings' format: auto, claude-stream-json, claude-session, codex-exec-json,
    /// codex-rollout, opencode-run-json, opencode-export, sixfold-events.
    #[arg(long, default_value = "auto", value_name = "FORMAT", value_parser = parse_format)]
    input_format: FormatArg,
    /// A unified diff of the run's changes: evidence added to the record's. It settles edits the
    /// record shows without their content; it never hides what the record shows.
    #[arg(long, value_name = "FILE", conflicts_with = "git")]
    diff: Option<PathBuf>,
    /// Diff the working tree of the current repository against BASE for the run's changes.
    #[arg(long, value_name = "BASE")]
    git: Option<String>,
    /// Print one JSON object instead of text (as --format json).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bundle: BundleArgs,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct FormatArg(pub(crate) Option<Format>);

pub(crate) fn parse_format(text: &str) -> Result<FormatArg, String> {
    if text == "auto" {
        return Ok(FormatArg(None));
    }
    Format::parse(text).map(|f| FormatArg(Some(f))).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("`{text}` is not a format; use auto, {}", names.join(", "))
    })
}

/// What `--format` names: an output, or (as before --input-format) the recordings' format.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FormatChoice {
    Output(Output),
    Input(FormatArg),
}

/// How the verdicts are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    Text,
    Json,
    Junit,
    Sarif,
    Github,
}

impl Output {
    const ALL: [(&'static str, Output); 5] = [
        ("text", Output::Text),
        ("json", Output::Json),
        ("junit", Output::Junit),
        ("sarif", Output::Sarif),
        ("github", Output::Github),
    ];
}

fn parse_format_choice(text: &str) -> Result<FormatChoice, String> {
    if let Some((_, output)) = Output::ALL.iter().find(|(name, _)| *name == text) {
        return Ok(FormatChoice::Output(*output));
    }
    parse_format(text).map(FormatChoice::Input).map_err(|_| {
        let outputs: Vec<&str> = Output::ALL.iter().map(|(name, _)| *name).collect();
        let inputs: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!(
            "`{text}` is not a format; outputs are {}, and a recording's format (--input-format) is auto, {}",
            outputs.join(", "),
            inputs.join(", ")
        )
    })
}

/// The output and the recordings' format the arguments ask for, or why they disagree.
fn formats(args: &Args) -> Result<(Output, FormatArg), String> {
    let mut output = if args.json { Output::Json } else { Output::Text };
    let mut input = args.input_format;
    match args.format {
        None => {}
        Some(FormatChoice::Output(o)) if args.json && o != Output::Json => {
            return Err(format!(
                "--json and --format {} ask for two outputs",
                Output::ALL.iter().find(|(_, x)| *x == o).map_or("?", |(n, _)| *n)
            ));
        }
        Some(FormatChoice::Output(o)) => output = o,
        Some(FormatChoice::Input(_)) if input.0.is_some() => {
            return Err("--format names a recording's format and so does --input-format".into());
        }
        Some(FormatChoice::Input(f)) => input = f,
    }
    Ok((output, input))
}

/// What a mode says of a recorded step.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Judged {
    /// The step's number in the run, from 1.
    pub(crate) step: usize,
    pub(crate) tool: String,
    pub(crate) act: String,
    pub(crate) decision: Decision,
    pub(crate) reason: String,
    pub(crate) rules: Vec<String>,
    /// What decided it: the ceiling, rules, the default, or unjudgeable (a fail-closed refusal).
    pub(crate) by: DecidedBy,
    /// The act in a few words, for the text output.
    #[serde(skip)]
    pub(crate) words: String,
}

/// What a mode says of a run's steps: how many of each decision, and each step's judgement.
#[derive(Debug, Clone, Default, Serialize)]
struct ModeReport {
    allow: usize,
    ask: usize,
    refuse: usize,
    /// Each step, in order.
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
    mode: Option<ModeReport>,
}

impl FileReport {
    fn as_recording(&self) -> crate::ci::Recording<'_> {
        crate::ci::Recording {
            file: &self.file,
            format: self.format.as_deref(),
            error: self.error.as_deref(),
            steps: self.steps,
            malformed: &self.malformed,
            rows: &self.rows,
        }
    }
}

pub(crate) fn run(args: Args) -> u8 {
    let (output, input) = match formats(&args) {
        Ok(f) => f,
        Err(message) => {
            errln!("error: {message}\n  = help: --format takes the output, --input-format the recordings' format");
            return 2;
        }
    };
    let mut files: Vec<Recording> = match recordings(&args.paths) {
        Ok(files) => files.into_iter().map(Recording::File).collect(),
        Err(message) => {
            errln!("error: {message}");
            return 2;
        }
    };
    match crate::examples::chosen(&args.examples) {
        Ok(chosen) => files.extend(chosen.into_iter().map(Recording::Example)),
        Err(code) => return code,
    }
    let (bundle, _, diagnostics) = bundles::load(&args.bundle);
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        errln!(
            "error: the bundle has errors, so nothing was replayed\n  = help: run `sixfold check` for the full report"
        );
        return 2;
    }
    if let Some(mode) = &args.mode {
        if bundle.mode(mode).is_none() {
            return crate::names::report(&bundle.unknown_mode(mode));
        }
    }
    let diff = match supplied_diff(&args) {
        Ok(d) => d,
        Err(message) => {
            errln!("error: {message}");
            return 2;
        }
    };
    let rows = bundle.rows_about(FactsKind::Trace);
    // Progress is for a person watching the text output, never in JSON or a CI format.
    // The embedded examples are small: only files on disk count towards the bytes shown.
    let on_disk: Vec<PathBuf> = files
        .iter()
        .filter_map(Recording::path)
        .map(Path::to_path_buf)
        .collect();
    let progress = Progress::new(
        &on_disk,
        "replayed",
        output == Output::Text && Progress::watched(),
        true,
    );
    let reports = replay_all(&files, &args, input, &bundle, &rows, diff.as_deref(), &progress);
    let all_rows: Vec<RowResult> = reports.iter().flat_map(|r| r.rows.iter().cloned()).collect();
    let strictness = if args.strict {
        Strictness::Strict
    } else {
        Strictness::On
    };
    let exit = exit_code(&all_rows, strictness);
    let run = || crate::ci::Run {
        recordings: reports.iter().map(FileReport::as_recording).collect(),
        strictness,
        exit,
        bundle: &bundle,
    };
    match output {
        Output::Text => print_text(&reports, args.mode.as_deref(), exit, strictness),
        Output::Json => print_json(&reports, exit),
        Output::Github => out!("{}", crate::ci::github(&run())),
        // SARIF's shape is its own: printed as the standard defines it.
        Output::Sarif => outln!("{}", crate::ci::sarif(&run())),
        Output::Junit => match crate::ci::junit(&run()) {
            Ok(xml) => out!("{xml}"),
            Err(e) => {
                errln!("error: cannot write the JUnit report: {e}");
                return 1;
            }
        },
    }
    u8::try_from(exit).unwrap_or(1)
}

fn supplied_diff(args: &Args) -> Result<Option<Vec<Edit>>, String> {
    let text = if let Some(path) = &args.diff {
        let cannot = |e: std::io::Error| format!("cannot read the diff `{}`: {e}", path.display());
        // A FIFO or a device would never end: only a regular file is read, as far as its size.
        let file = sixfold_replay::open_recording(path).map_err(cannot)?;
        if file.limit() > MAX_DIFF_BYTES {
            return Err(format!(
                "the diff `{}` is larger than {MAX_DIFF_BYTES} bytes",
                path.display()
            ));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut { file }, &mut bytes).map_err(cannot)?;
        String::from_utf8(bytes).map_err(|e| format!("cannot read the diff `{}`: {e}", path.display()))?
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

/// The deepest a directory is searched for recordings.
const MAX_DEPTH: usize = 32;

/// The files to replay: each path named that is not a directory as it is, each directory's
/// `*.jsonl` files (recursively, in path order). A path that does not exist, or a directory
/// holding no recordings, is an error.
pub(crate) fn recordings(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(format!(
                    "`{}` does not exist\n  = help: replay takes recordings and directories of them",
                    path.display()
                ));
            }
            Ok(meta) if meta.is_dir() => {
                let before = files.len();
                collect_dir(path, 0, &mut files);
                if files.len() == before {
                    return Err(format!(
                        "there are no recordings (`*.jsonl` files) in `{}`",
                        path.display()
                    ));
                }
            }
            // A file, or a path that exists but whose kind cannot be told: reading it says more.
            _ => files.push(path.clone()),
        }
    }
    Ok(files)
}

/// Adds a directory's recordings to `files`, in path order. A directory that cannot be listed is
/// added itself: reading it fails, and its rows are unk.
fn collect_dir(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let listed = std::fs::read_dir(dir).and_then(|entries| entries.collect::<std::io::Result<Vec<_>>>());
    let mut entries = match listed {
        Ok(entries) if depth < MAX_DEPTH => entries,
        // INVARIANT (fail closed): what cannot be listed is replayed as unreadable, never dropped.
        _ => return files.push(dir.to_path_buf()),
    };
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            files.push(path);
            continue;
        };
        if kind.is_dir() {
            collect_dir(&path, depth + 1, files);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            // A link to a file is followed; a link to a directory is not (it could loop).
            let regular = kind.is_file() || std::fs::metadata(&path).is_ok_and(|m| m.is_file());
            if regular {
                files.push(path);
            }
        }
    }
}

fn replay_all(
    files: &[Recording],
    args: &Args,
    input: FormatArg,
    bundle: &Bundle,
    rows: &[&str],
    diff: Option<&[Edit]>,
    progress: &Progress,
) -> Vec<FileReport> {
    in_parallel(files, progress, |file| {
        replay_one(file, args, input, bundle, rows, diff, progress)
    })
}

/// `each` applied to every file on as many threads as the machine has cores (files are
/// independent), the results in the files' order, each file done told to `progress`.
pub(crate) fn in_parallel<F: Sync, T: Send>(files: &[F], progress: &Progress, each: impl Fn(&F) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new(files.iter().map(|_| None).collect());
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(files.len())
        .max(1);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                let report = each(file);
                if let Ok(mut slots) = results.lock() {
                    if let Some(slot) = slots.get_mut(i) {
                        *slot = Some(report);
                    }
                }
                progress.file_done();
            });
        }
    });
    progress.finish();
    let slots = results.into_inner().unwrap_or_default();
    slots.into_iter().flatten().collect()
}

fn replay_one(
    file: &Recording,
    args: &Args,
    input: FormatArg,
    bundle: &Bundle,
    rows: &[&str],
    diff: Option<&[Edit]>,
    progress: &Progress,
) -> FileReport {
    let shown = file.shown();
    let cx = ReadContext { bundle };
    let mut trace = match file.read(input.0, &cx, &|n| progress.read(n)) {
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
    report.rows = bundle.evaluate_trace_rows(rows, &trace, &rows_workspace(&trace, workspace), &extra);
    report
}

/// The recorded working directory is the workspace the run's paths are judged against.
pub(crate) fn workspace_of(trace: &Trace) -> Workspace {
    let root = trace
        .cwd
        .clone()
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    Workspace::new(root).with_process_environment()
}

/// The workspace rows judge the run's writes against. A record without a working directory
/// (Codex's `exec --json`) does not say where the workspace was, so for rows every path may lie
/// in it: the whole file system is the workspace.
pub(crate) fn rows_workspace(trace: &Trace, recorded: Workspace) -> Workspace {
    // INVARIANT (fail closed): not knowing where the workspace is never lets a write (an edit
    // after the suite, a test file changed) fall outside it.
    if trace.cwd.is_none() {
        Workspace::new("/")
    } else {
        recorded
    }
}

fn judge_steps(bundle: &Bundle, mode: &str, trace: &Trace, workspace: &Workspace) -> ModeReport {
    let context = Context::new(workspace.clone());
    let mut counts = ModeReport::default();
    for (i, step) in trace.steps.iter().enumerate() {
        let j = judge_step(bundle, mode, i, step, &context, trace.cwd.as_deref());
        match j.decision {
            Decision::Allow => counts.allow += 1,
            Decision::Ask => counts.ask += 1,
            Decision::Refuse => counts.refuse += 1,
        }
        counts.judged.push(j);
    }
    counts
}

/// One recorded step (the `i`th, from 0) judged by a mode, as `--mode` shows it; `sixfold
/// whatif` judges each step this way under both bundles.
pub(crate) fn judge_step(
    bundle: &Bundle,
    mode: &str,
    i: usize,
    step: &Step,
    context: &Context,
    cwd: Option<&str>,
) -> Judged {
    let j = bundle.judge(mode, &step.effects, context);
    Judged {
        step: i + 1,
        tool: step.tool.clone(),
        act: step.act.text.clone(),
        decision: j.decision,
        reason: j.reason,
        rules: j.rules,
        by: j.by,
        words: in_words(step, cwd),
    }
}

/// The most of an act the text output shows.
const ACT_CHARS: usize = 60;

/// A step's act in a few words: the tool and the act's first line, a path inside the working
/// directory relative to it, cut at `ACT_CHARS`.
fn in_words(step: &Step, cwd: Option<&str>) -> String {
    let text = step.act.text.lines().next().unwrap_or("");
    let inside = cwd.and_then(|c| Path::new(text).strip_prefix(c).ok());
    let text = match inside {
        Some(relative) if step.act.kind == "path" && !relative.as_os_str().is_empty() => {
            relative.to_string_lossy().into_owned()
        }
        _ => text.to_string(),
    };
    let more = text.chars().count() > ACT_CHARS || step.act.text.lines().nth(1).is_some();
    let cut: String = text.chars().take(ACT_CHARS).collect();
    format!("{} {cut}{}", step.tool, if more { " …" } else { "" })
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
            Some(error) => outln!("{}  (unreadable: {error})", report.file),
            None => {
                let skipped: u64 = report.skipped.values().sum();
                outln!(
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
            errln!("{}:{}: malformed line skipped: {}", report.file, m.line, m.error);
        }
        // The steps as the mode judges them, then the rows' verdicts on the whole run.
        if let (Some(judged), Some(mode)) = (&report.mode, mode) {
            outln!(
                "  mode {mode}: {} allow, {} ask, {} refuse",
                judged.allow,
                judged.ask,
                judged.refuse
            );
            for j in &judged.judged {
                outln!("    {:>3}  {:<6}  {}", j.step, j.decision.as_str(), j.words);
                outln!("                 {}", j.reason);
            }
        }
        for row in &report.rows {
            outln!(
                "  {:<3}  {:<8}  {:<width$}  {}",
                row.verdict.as_str(),
                row.severity.to_string(),
                row.id,
                row.evidence
            );
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
    outln!(
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
        let sum = |f: fn(&ModeReport) -> usize| reports.iter().filter_map(|r| r.mode.as_ref()).map(f).sum::<usize>();
        steps.insert("allow".into(), sum(|c| c.allow).into());
        steps.insert("ask".into(), sum(|c| c.ask).into());
        steps.insert("refuse".into(), sum(|c| c.refuse).into());
    }
    crate::output::json(&serde_json::json!({ "rows": rows, "steps": steps, "files": reports, "exit": exit }));
}
