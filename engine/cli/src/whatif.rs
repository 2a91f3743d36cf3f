//! `sixfold whatif`: what a policy change does to recorded runs. Every step is judged as
//! `replay --mode` judges it, under the base bundle and mode and under the new ones; the steps
//! whose decision changes and the rows whose verdict changes are printed, then a summary.

use crate::bundles::{self, BundleArgs};
use crate::output::{errln, outln};
use crate::replay::{self, FormatArg, Judged};
use serde::Serialize;
use sixfold_core::bundle::Bundle;
use sixfold_core::decision::Decision;
use sixfold_core::format::FactsKind;
use sixfold_core::judge::Context;
use sixfold_core::trace::Trace;
use sixfold_core::verdict::{RowResult, Severity, Verdict};
use sixfold_replay::ReadContext;
use std::path::{Path, PathBuf};

/// The most changed steps listed per file; the rest are counted.
const MAX_LISTED: usize = 1000;

/// What a policy change does to recorded runs: every step of the recordings and event logs
/// (`.sixfold/runs/*.jsonl`) judged under the base bundle and mode and under the new ones; each
/// step whose decision changes (both decisions, reasons and deciding rules), each row whose
/// verdict changes, then how many steps widened (refuse or ask → allow, refuse → ask),
/// narrowed and stayed.
///
/// The base is the bundle in force (the shipped bundle and the project's `.sixfold/`), with
/// --base layered over it; the new one is the bundle in force with --bundle layered over it.
/// To compare two versions of a project's `.sixfold/`, pass both with --no-project.
/// --to-mode compares two modes (of the new bundle, which is the base when no --bundle is given).
///
/// Exit 0 when no step widens and no gating row changes, 1 otherwise (and when a recording
/// cannot be read, or the two bundles read a run into different steps), 2 for a usage error.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Recordings and event logs, or directories of them (their `*.jsonl` files).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// The new bundle: a directory layered over the bundle in force (repeatable; later ones win).
    #[arg(long = "bundle", value_name = "DIR")]
    bundles: Vec<PathBuf>,
    /// The base bundle: a directory layered over the bundle in force (repeatable); without it
    /// the base is the bundle in force.
    #[arg(long = "base", value_name = "DIR")]
    base: Vec<PathBuf>,
    /// The mode steps are judged by (default: the project's active mode, else `ask`).
    #[arg(long, value_name = "ID")]
    mode: Option<String>,
    /// Judge the new side by this mode instead (default: --mode).
    #[arg(long, value_name = "ID")]
    to_mode: Option<String>,
    /// Do not layer the project's `.sixfold/` under either bundle.
    #[arg(long)]
    no_project: bool,
    /// The recordings' format (as `sixfold replay --input-format`).
    #[arg(long, default_value = "auto", value_name = "FORMAT", value_parser = replay::parse_format)]
    format: FormatArg,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// One side of the comparison: a bundle and the mode that judges.
pub(crate) struct Side<'b> {
    pub(crate) bundle: &'b Bundle,
    pub(crate) mode: String,
}

/// Both sides, and whether they share one bundle (then each run is read once and the rows,
/// which do not depend on the mode, cannot change).
pub(crate) struct Comparison<'b> {
    pub(crate) base: Side<'b>,
    pub(crate) new: Side<'b>,
    pub(crate) same_bundle: bool,
    pub(crate) format: FormatArg,
}

/// How a step's decision moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Movement {
    /// Refuse or ask → allow.
    ToAllow,
    /// Refuse → ask.
    RefuseToAsk,
    /// Stricter than before.
    Narrowed,
}

fn movement(before: Decision, after: Decision) -> Option<Movement> {
    match (before, after) {
        (b, a) if a == b => None,
        (_, Decision::Allow) => Some(Movement::ToAllow),
        (Decision::Refuse, Decision::Ask) => Some(Movement::RefuseToAsk),
        _ => Some(Movement::Narrowed),
    }
}

/// The counts of a file or of all.
#[derive(Debug, Clone, Copy, Default, Serialize)]
struct Tally {
    steps: usize,
    widened: usize,
    to_allow: usize,
    refuse_to_ask: usize,
    narrowed: usize,
    stayed: usize,
}

impl Tally {
    fn count(&mut self, moved: Option<Movement>) {
        self.steps += 1;
        match moved {
            None => self.stayed += 1,
            Some(Movement::Narrowed) => self.narrowed += 1,
            Some(m) => {
                self.widened += 1;
                if m == Movement::ToAllow {
                    self.to_allow += 1;
                } else {
                    self.refuse_to_ask += 1;
                }
            }
        }
    }

    fn add(&mut self, other: &Tally) {
        self.steps += other.steps;
        self.widened += other.widened;
        self.to_allow += other.to_allow;
        self.refuse_to_ask += other.refuse_to_ask;
        self.narrowed += other.narrowed;
        self.stayed += other.stayed;
    }
}

/// A step whose decision changed.
#[derive(Debug, Clone, Serialize)]
struct StepChange {
    step: usize,
    tool: String,
    act: String,
    movement: Movement,
    before: Judged,
    after: Judged,
}

/// A row whose verdict changed (absent on one side when only one bundle has the row).
#[derive(Debug, Clone, Serialize)]
struct RowChange {
    id: String,
    title: String,
    gating: bool,
    before: Option<Verdict>,
    after: Option<Verdict>,
    evidence: String,
}

#[derive(Debug, Clone, Serialize)]
struct FileReport {
    file: String,
    format: Option<String>,
    error: Option<String>,
    /// Set when the two bundles read the run into different numbers of steps.
    mismatch: Option<String>,
    tally: Tally,
    changes: Vec<StepChange>,
    /// Changed steps beyond `MAX_LISTED`, counted but not listed.
    unlisted: usize,
    rows: Vec<RowChange>,
}

impl FileReport {
    fn failed(&self) -> bool {
        self.error.is_some() || self.mismatch.is_some()
    }
}

pub(crate) fn run(args: Args) -> u8 {
    let files = match replay::recordings(&args.paths) {
        Ok(files) => files,
        Err(message) => {
            errln!("error: {message}");
            return 2;
        }
    };
    let layered = |dirs: &[PathBuf]| BundleArgs {
        bundles: dirs.to_vec(),
        no_project: args.no_project,
    };
    let (base, _, mut diagnostics) = bundles::load(&layered(&args.base));
    let (new, _, mut more) = bundles::load(&layered(&args.bundles));
    diagnostics.append(&mut more);
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        errln!("error: a bundle has errors, so nothing was compared\n  = help: run `sixfold check` (with the same --bundle) for the full report");
        return 2;
    }
    let mode = args.mode.clone().unwrap_or_else(active_mode);
    let to_mode = args.to_mode.clone().unwrap_or_else(|| mode.clone());
    let cmp = Comparison {
        base: Side { bundle: &base, mode },
        new: Side {
            bundle: &new,
            mode: to_mode,
        },
        same_bundle: args.bundles == args.base,
        format: args.format,
    };
    if let Some(code) = check_modes(&cmp) {
        return code;
    }
    compare(&files, &cmp, args.json)
}

/// The project's active mode, as the hooks judge by it; `ask` outside a project.
fn active_mode() -> String {
    let state = std::env::current_dir()
        .ok()
        .and_then(|cwd| sixfold_hook::project_of(&cwd).ok())
        .and_then(|project| sixfold_hook::state::State::load(&project).ok());
    match state {
        Some(s) => s.mode_for(None),
        None => sixfold_hook::DEFAULT_MODE.to_string(),
    }
}

/// A usage error (exit 2) when a side's mode is not in its bundle.
pub(crate) fn check_modes(cmp: &Comparison<'_>) -> Option<u8> {
    for side in [&cmp.base, &cmp.new] {
        if side.bundle.mode(&side.mode).is_none() {
            return Some(crate::names::report(&side.bundle.unknown_mode(&side.mode)));
        }
    }
    None
}

/// Compares every file and prints the result; the exit code.
pub(crate) fn compare(files: &[PathBuf], cmp: &Comparison<'_>, json: bool) -> u8 {
    let reports = each_file(files, cmp, json);
    let mut total = Tally::default();
    for r in &reports {
        total.add(&r.tally);
    }
    let gating_rows = reports.iter().flat_map(|r| &r.rows).filter(|r| r.gating).count();
    let failed = reports.iter().filter(|r| r.failed()).count();
    // INVARIANT (fail closed): a run that could not be compared never reads as "nothing widens".
    let exit = u8::from(total.widened > 0 || gating_rows > 0 || failed > 0);
    if json {
        let out = serde_json::json!({
            "base": { "mode": cmp.base.mode },
            "new": { "mode": cmp.new.mode },
            "files": reports,
            "summary": {
                "steps": total.steps, "widened": total.widened, "to_allow": total.to_allow,
                "refuse_to_ask": total.refuse_to_ask, "narrowed": total.narrowed, "stayed": total.stayed,
                "rows_changed": reports.iter().map(|r| r.rows.len()).sum::<usize>(),
                "gating_rows_changed": gating_rows, "files": reports.len(), "files_not_compared": failed,
            },
            "exit": exit,
        });
        crate::output::json(&out);
    } else {
        print_text(&reports, cmp, &total, gating_rows, exit);
    }
    exit
}

/// Each file compared, in parallel as replay reads them, the reports in the files' order.
fn each_file(files: &[PathBuf], cmp: &Comparison<'_>, json: bool) -> Vec<FileReport> {
    // Each file is read once per bundle: files done is the measure, shown only beside text.
    let progress =
        crate::progress::Progress::new(files, "compared", !json && crate::progress::Progress::watched(), false);
    replay::in_parallel(files, &progress, |file| one_file(file, cmp))
}

fn read(file: &Path, bundle: &Bundle, format: FormatArg) -> Result<Trace, String> {
    sixfold_replay::read_file(file, format.0, &ReadContext { bundle })
        .map_err(|e| format!("cannot read `{}`: {e}", file.display()))
}

fn one_file(file: &Path, cmp: &Comparison<'_>) -> FileReport {
    let mut report = FileReport {
        file: file.display().to_string(),
        format: None,
        error: None,
        mismatch: None,
        tally: Tally::default(),
        changes: Vec::new(),
        unlisted: 0,
        rows: Vec::new(),
    };
    // Each bundle reads the run itself: its providers and command rules say what a step does.
    let base = read(file, cmp.base.bundle, cmp.format);
    let new = if cmp.same_bundle {
        None
    } else {
        Some(read(file, cmp.new.bundle, cmp.format))
    };
    let (base, new) = match (base, new) {
        (Ok(b), None) => (b, None),
        (Ok(b), Some(Ok(n))) => (b, Some(n)),
        (Err(e), _) | (_, Some(Err(e))) => {
            report.error = Some(e);
            return report;
        }
    };
    let new_trace = new.as_ref().unwrap_or(&base);
    report.format = Some(base.format.clone());
    if base.steps.len() != new_trace.steps.len() {
        report.mismatch = Some(format!(
            "the base bundle reads {} steps and the new one {}",
            base.steps.len(),
            new_trace.steps.len()
        ));
    }
    let workspace = replay::workspace_of(&base);
    let context = Context::new(workspace.clone());
    let cwd = base.cwd.as_deref();
    for (i, (b, n)) in base.steps.iter().zip(&new_trace.steps).enumerate() {
        let before = replay::judge_step(cmp.base.bundle, &cmp.base.mode, i, b, &context, cwd);
        let after = replay::judge_step(cmp.new.bundle, &cmp.new.mode, i, n, &context, cwd);
        let moved = movement(before.decision, after.decision);
        report.tally.count(moved);
        let Some(movement) = moved else { continue };
        if report.changes.len() >= MAX_LISTED {
            report.unlisted += 1;
            continue;
        }
        report.changes.push(StepChange {
            step: i + 1,
            tool: b.tool.clone(),
            act: before.words.clone(),
            movement,
            before,
            after,
        });
    }
    if let Some(new) = &new {
        let rows_ws = replay::rows_workspace(&base, workspace);
        report.rows = row_changes(
            &rows(cmp.base.bundle, &base, &rows_ws),
            &rows(cmp.new.bundle, new, &rows_ws),
        );
    }
    report
}

fn rows(bundle: &Bundle, trace: &Trace, workspace: &sixfold_core::scope::Workspace) -> Vec<RowResult> {
    let ids = bundle.rows_about(FactsKind::Trace);
    bundle.evaluate_trace_rows(&ids, trace, workspace, &serde_json::Map::new())
}

/// The rows whose verdict differs, or that only one side has.
fn row_changes(before: &[RowResult], after: &[RowResult]) -> Vec<RowChange> {
    let mut out = Vec::new();
    for b in before {
        let a = after.iter().find(|a| a.id == b.id);
        if a.is_some_and(|a| a.verdict == b.verdict) {
            continue;
        }
        out.push(RowChange {
            id: b.id.clone(),
            title: b.title.clone(),
            gating: b.severity == Severity::Gating || a.is_some_and(|a| a.severity == Severity::Gating),
            before: Some(b.verdict),
            after: a.map(|a| a.verdict),
            evidence: a
                .map(|a| a.evidence.clone())
                .unwrap_or_else(|| "the new bundle has no such row".into()),
        });
    }
    for a in after.iter().filter(|a| !before.iter().any(|b| b.id == a.id)) {
        out.push(RowChange {
            id: a.id.clone(),
            title: a.title.clone(),
            gating: a.severity == Severity::Gating,
            before: None,
            after: Some(a.verdict),
            evidence: a.evidence.clone(),
        });
    }
    out
}

fn verdict_word(v: Option<Verdict>) -> &'static str {
    v.map(|v| v.as_str()).unwrap_or("(none)")
}

fn print_text(reports: &[FileReport], cmp: &Comparison<'_>, total: &Tally, gating_rows: usize, exit: u8) {
    let (b, n) = (&cmp.base.mode, &cmp.new.mode);
    outln!(
        "base: mode `{b}`{}; new: mode `{n}`{}",
        if cmp.same_bundle { "" } else { " of the base bundle" },
        if cmp.same_bundle { "" } else { " of the new bundle" }
    );
    for r in reports {
        match (&r.error, &r.format) {
            (Some(e), _) => outln!("{}  (not compared: {e})", r.file),
            (None, format) => outln!(
                "{}  ({}, {} steps: {} widened, {} narrowed, {} stayed)",
                r.file,
                format.as_deref().unwrap_or("?"),
                r.tally.steps,
                r.tally.widened,
                r.tally.narrowed,
                r.tally.stayed
            ),
        }
        if let Some(m) = &r.mismatch {
            outln!("  not compared step by step past the shorter: {m}");
        }
        for c in &r.changes {
            let how = match c.movement {
                Movement::Narrowed => "narrows",
                _ => "WIDENS",
            };
            outln!(
                "  {:>4}  {} → {}  {how}  {}",
                c.step,
                c.before.decision,
                c.after.decision,
                c.act
            );
            outln!("          before: {}", c.before.reason);
            outln!("          after:  {}", c.after.reason);
        }
        if r.unlisted > 0 {
            outln!("  … and {} more changed steps (counted, not listed)", r.unlisted);
        }
        for row in &r.rows {
            outln!(
                "  row {} ({}): {} → {}  {}",
                row.id,
                if row.gating { "gating" } else { "advisory" },
                verdict_word(row.before),
                verdict_word(row.after),
                row.evidence
            );
        }
    }
    let rows_changed: usize = reports.iter().map(|r| r.rows.len()).sum();
    outln!(
        "{} file{}, {} steps: {} widened ({} to allow, {} refuse → ask), {} narrowed, {} stayed; {} row{} changed ({} gating); exit {exit}",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        total.steps,
        total.widened,
        total.to_allow,
        total.refuse_to_ask,
        total.narrowed,
        total.stayed,
        rows_changed,
        if rows_changed == 1 { "" } else { "s" },
        gating_rows
    );
}

/// `sixfold mode set ID --dry-run`: what the session's run so far would have met under the mode
/// it is about to switch to, from its event log; nothing is changed.
pub(crate) fn dry_run(project: &Path, session: Option<&str>, from: &str, to: &str, bundle: &Bundle) -> u8 {
    // A slip in the mode's name is said first, whether or not a session was recorded.
    if bundle.mode(to).is_none() {
        return crate::names::report(&bundle.unknown_mode(to));
    }
    let log = match session {
        Some(s) => Some(sixfold_hook::log::Log::new(project, s).path().to_path_buf()),
        None => newest_log(project),
    };
    let Some(log) = log.filter(|l| l.is_file()) else {
        errln!(
            "error: no session has been recorded in this project yet, so there is nothing to compare\n  = help: the event logs are in .sixfold/runs/; name one with --session"
        );
        return 2;
    };
    outln!(
        "dry run: the mode stays `{from}`; the session's log `{}` under `{to}`:",
        log.display()
    );
    let cmp = Comparison {
        base: Side {
            bundle,
            mode: from.to_string(),
        },
        new: Side {
            bundle,
            mode: to.to_string(),
        },
        same_bundle: true,
        format: FormatArg(Some(sixfold_replay::Format::Events)),
    };
    if let Some(code) = check_modes(&cmp) {
        return code;
    }
    compare(&[log], &cmp, false)
}

/// The event log written last: the current session's.
fn newest_log(project: &Path) -> Option<PathBuf> {
    let dir = sixfold_hook::project::dir(project).join("runs");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}
