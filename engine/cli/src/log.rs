//! `sixfold log export`: the project's event logs (`.sixfold/runs/*.jsonl`) as decisions in the
//! shape OPA writes its decision logs in, so a team's existing tooling for those reads sixfold's.
//! Each log is untrusted: a regular file only, read a line at a time to a bound, a line that is
//! not an event skipped and counted.

use crate::output::{errln, outln};
use serde_json::{json, Map, Value};
use sixfold_core::lines::{read_line, Line as Read};
use sixfold_core::trace::{Event, Line};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The most bytes one line of a log may have to be read; a longer one is skipped, never held.
const MAX_LINE_BYTES: usize = sixfold_hook::checkpoint::MAX_LINE_BYTES;

/// Read the project's event logs (`.sixfold/runs/`): `sixfold log export`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    Export(ExportArgs),
}

/// The formats `export` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// One JSON object a line per decision, in OPA's decision-log shape: `decision_id`,
    /// `timestamp`, `path`, `input`, `result`, `bundles`, `labels`.
    Opa,
}

/// Write the decisions on the event logs (each judgement, and each person's answer to an ask)
/// to stdout, one JSON object a line. Lines written before lines were stamped have no
/// `timestamp` or `bundles`, and a `decision_id` made of their file and line number.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  sixfold log export --format opa > decisions.jsonl\n  \
    sixfold log export --session abc123 --since 2026-12-01T00:00:00Z")]
struct ExportArgs {
    /// The shape to write.
    #[arg(long, value_enum, default_value = "opa")]
    format: Format,
    /// Only this session's log (repeatable).
    #[arg(long, value_name = "ID")]
    session: Vec<String>,
    /// Only decisions at or after this time (RFC 3339 in UTC, `2026-12-01T09:00:00Z`, or a
    /// date). A line without a time is then left out.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    since: Option<SystemTime>,
    /// Only decisions before this time (as `--since`).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    until: Option<SystemTime>,
    /// Event logs, or directories of them (their `*.jsonl` files); default: the project's
    /// `.sixfold/runs/`.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// A time on the command line: RFC 3339 in UTC, or a date (its midnight, UTC).
fn parse_time(text: &str) -> Result<SystemTime, String> {
    let full = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_string()
    };
    humantime::parse_rfc3339(&full)
        .map_err(|e| format!("`{text}` is not a time in RFC 3339 UTC form like 2026-12-01T09:00:00Z ({e})"))
}

/// `sixfold log`.
pub(crate) fn run(args: Args) -> u8 {
    match args.command {
        Command::Export(args) => export(args),
    }
}

fn export(args: ExportArgs) -> u8 {
    let files = match files(&args) {
        Ok(files) => files,
        Err((message, hint)) => {
            errln!("error: {message}\n  = help: {hint}");
            return 2;
        }
    };
    let range = Range {
        since: args.since,
        until: args.until,
    };
    let mut tally = Tally::default();
    for file in &files {
        if let Err(why) = export_file(file, args.format, &range, &mut tally) {
            errln!("warning: `{}` not read: {why}", file.display());
            tally.unread += 1;
        }
    }
    tally.report();
    // INVARIANT (fail closed): a log that could not be read never reads as a complete export.
    u8::from(tally.unread > 0)
}

/// The logs to read: the sessions named, the paths given, or the project's `.sixfold/runs/`.
fn files(args: &ExportArgs) -> Result<Vec<PathBuf>, (String, String)> {
    let project = || {
        let cwd =
            std::env::current_dir().map_err(|e| (format!("cannot read the current directory: {e}"), String::new()))?;
        sixfold_hook::project_of(&cwd).map_err(|e| (e, "run it inside the project, or name the logs".to_string()))
    };
    let mut files = Vec::new();
    if args.paths.is_empty() && args.session.is_empty() {
        let runs = sixfold_hook::project::dir(&project()?).join("runs");
        if runs.is_dir() {
            files.extend(logs_in(&runs));
        }
        return Ok(files);
    }
    for path in &args.paths {
        if path.is_dir() {
            files.extend(logs_in(path));
        } else if path.exists() {
            files.push(path.clone());
        } else {
            return Err((
                format!("`{}` does not exist", path.display()),
                "name event logs (`.sixfold/runs/*.jsonl`) or directories of them".into(),
            ));
        }
    }
    if !args.session.is_empty() {
        let wanted: Vec<String> = args.session.iter().map(|s| sixfold_hook::log::file_name(s)).collect();
        if args.paths.is_empty() {
            let project = project()?;
            for session in &args.session {
                let log = sixfold_hook::log::Log::new(&project, session);
                if !log.path().exists() {
                    return Err((
                        format!("no session `{session}` is recorded in this project"),
                        "the event logs are in .sixfold/runs/, one per session, named by its id".into(),
                    ));
                }
                files.push(log.path().to_path_buf());
            }
        } else {
            files.retain(|f| stem(f).is_some_and(|s| wanted.contains(&s)));
        }
    }
    Ok(files)
}

/// The `*.jsonl` files in a directory and below it, in path order.
fn logs_in(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![(dir.to_path_buf(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten().take(100_000) {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            // A symlinked directory is not walked (two links to `.` would be endless).
            if kind.is_dir() && depth < 16 {
                dirs.push((path, depth + 1));
            } else if !kind.is_dir() && path.extension().is_some_and(|x| x == "jsonl") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn stem(path: &Path) -> Option<String> {
    path.file_stem().map(|s| s.to_string_lossy().into_owned())
}

/// The time range asked for.
struct Range {
    since: Option<SystemTime>,
    until: Option<SystemTime>,
}

impl Range {
    /// Whether a line at `time` is in the range; a line without a time is in it only when no
    /// range was asked for.
    fn holds(&self, time: Option<&str>) -> Option<bool> {
        if self.since.is_none() && self.until.is_none() {
            return Some(true);
        }
        let at = humantime::parse_rfc3339(time?).ok()?;
        Some(self.since.is_none_or(|s| at >= s) && self.until.is_none_or(|u| at < u))
    }
}

/// What an export met besides what it wrote.
#[derive(Debug, Default)]
struct Tally {
    written: usize,
    /// Lines that are not events (or too long to read).
    skipped: usize,
    /// Decisions without a time, left out of a time range.
    untimed: usize,
    /// Logs that could not be read at all.
    unread: usize,
}

impl Tally {
    fn report(&self) {
        if self.skipped > 0 {
            errln!(
                "warning: {} line(s) skipped: not events, or longer than {} MiB",
                self.skipped,
                MAX_LINE_BYTES / (1024 * 1024)
            );
        }
        if self.untimed > 0 {
            errln!(
                "note: {} decision(s) left out: written before lines carried a time, so not in the range",
                self.untimed
            );
        }
    }
}

/// What a log says of its session, from its `started` line, for every decision after it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Session {
    /// The session's id (the file's name until a `started` line says).
    pub(crate) id: String,
    /// The agent CLI, or sixfold's own tool server or proxy.
    pub(crate) provider: Option<String>,
    /// Its working directory.
    pub(crate) cwd: Option<String>,
}

impl Session {
    /// Folds a line in: a `started` line names the session.
    pub(crate) fn see(&mut self, event: &Event) {
        if let Event::Started {
            session, cwd, provider, ..
        } = event
        {
            self.id.clone_from(session);
            self.provider.clone_from(provider);
            self.cwd.clone_from(cwd);
        }
    }
}

/// One log's decisions written out.
fn export_file(path: &Path, format: Format, range: &Range, tally: &mut Tally) -> Result<(), String> {
    let file = sixfold_core::bounded::open(path).map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(file);
    let name = stem(path).unwrap_or_default();
    let mut session = Session {
        id: name.clone(),
        ..Session::default()
    };
    let mut number = 0usize;
    loop {
        number += 1;
        let bytes = match read_line(&mut reader, MAX_LINE_BYTES) {
            Read::Frame(bytes) => bytes,
            Read::TooLarge(_) => {
                tally.skipped += 1;
                continue;
            }
            Read::End => return Ok(()),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(line) = serde_json::from_slice::<Line>(&bytes) else {
            tally.skipped += 1;
            continue;
        };
        session.see(&line.event);
        let Some(decision) = decision(&line, &session, &format!("{name}:{number}")) else {
            continue;
        };
        match range.holds(line.stamp.timestamp.as_deref()) {
            Some(true) => {}
            Some(false) => continue,
            None => {
                tally.untimed += 1;
                continue;
            }
        }
        match format {
            Format::Opa => outln!("{decision}"),
        }
        tally.written += 1;
    }
}

/// A line of the log as a decision in OPA's decision-log shape, where it is one: a judgement
/// (`path` `sixfold/modes/<mode>`) or a person's answer to an ask (`sixfold/approvals`).
/// `fallback_id` names a line written before lines carried a decision id.
pub(crate) fn decision(line: &Line, session: &Session, fallback_id: &str) -> Option<Value> {
    let (path, input, result) = match &line.event {
        Event::Judged { step, judgement } => {
            let mut step = serde_json::to_value(step).ok()?;
            // What the judgement was given: the outcome and edits come after it.
            if let Some(fields) = step.as_object_mut() {
                for after in ["outcome", "edits", "output"] {
                    fields.remove(after);
                }
            }
            let result = json!({
                "decision": judgement.decision,
                "reason": judgement.reason,
                "rules": judgement.rules,
                "mode": judgement.mode,
                "by": judgement.by,
            });
            (
                format!("sixfold/modes/{}", judgement.mode),
                json!({ "step": step }),
                result,
            )
        }
        Event::Answered {
            id,
            approval,
            answer,
            by,
            kept,
        } => {
            let result = json!({ "answer": answer, "by": by, "kept": kept });
            let input = json!({ "step": { "id": id }, "approval": approval });
            ("sixfold/approvals".to_string(), input, result)
        }
        _ => return None,
    };
    let mut input = input;
    if let Some(fields) = input.as_object_mut() {
        fields.insert("session".into(), json!(session.id));
        if let Some(provider) = &session.provider {
            fields.insert("provider".into(), json!(provider));
        }
        if let Some(cwd) = &session.cwd {
            fields.insert("cwd".into(), json!(cwd));
        }
    }
    let mut labels = Map::new();
    labels.insert("app".into(), json!("sixfold"));
    labels.insert("version".into(), json!(env!("CARGO_PKG_VERSION")));
    labels.insert("session".into(), json!(session.id));
    if let Some(provider) = &session.provider {
        labels.insert("provider".into(), json!(provider));
    }
    let mut out = Map::new();
    let id = line.stamp.decision_id.as_deref().unwrap_or(fallback_id);
    out.insert("decision_id".into(), json!(id));
    if let Some(time) = &line.stamp.timestamp {
        out.insert("timestamp".into(), json!(time));
    }
    out.insert("path".into(), json!(path));
    out.insert("input".into(), input);
    out.insert("result".into(), result);
    if let Some(bundle) = &line.stamp.bundle {
        out.insert("bundles".into(), json!({ "sixfold": { "revision": bundle } }));
    }
    out.insert("labels".into(), Value::Object(labels));
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sixfold_core::decision::{DecidedBy, Decision, Judgement};
    use sixfold_core::trace::{Stamp, Step};

    fn judged() -> Event {
        Event::Judged {
            step: Box::new(Step {
                id: "t1".into(),
                tool: "Bash".into(),
                ..Step::default()
            }),
            judgement: Judgement {
                decision: Decision::Refuse,
                reason: "reaches the network".into(),
                rules: vec!["boundaries/network".into()],
                mode: "workspace-write".into(),
                by: DecidedBy::Rules,
            },
        }
    }

    #[test]
    fn a_judgement_is_an_opa_decision_and_other_events_are_not() {
        let session = Session {
            id: "s".into(),
            provider: Some("claude-code".into()),
            cwd: Some("/w".into()),
        };
        let line = Line {
            event: judged(),
            stamp: Stamp {
                timestamp: Some("2026-12-01T18:03:09.000001Z".into()),
                bundle: Some("sha256:ab".into()),
                decision_id: Some("d-1".into()),
            },
        };
        let d = decision(&line, &session, "s:1").unwrap();
        assert_eq!(d["decision_id"], "d-1");
        assert_eq!(d["timestamp"], "2026-12-01T18:03:09.000001Z");
        assert_eq!(d["path"], "sixfold/modes/workspace-write");
        assert_eq!(d["result"]["decision"], "refuse");
        assert_eq!(d["result"]["rules"][0], "boundaries/network");
        assert_eq!(d["input"]["step"]["tool"], "Bash");
        assert!(d["input"]["step"].get("outcome").is_none());
        assert_eq!(d["input"]["session"], "s");
        assert_eq!(d["bundles"]["sixfold"]["revision"], "sha256:ab");
        assert_eq!(d["labels"]["provider"], "claude-code");
        // An old line: its id made of its place, no time, no bundle.
        let old = Line {
            event: judged(),
            stamp: Stamp::default(),
        };
        let d = decision(&old, &session, "s:7").unwrap();
        assert_eq!(d["decision_id"], "s:7");
        assert!(d.get("timestamp").is_none() && d.get("bundles").is_none());
        let ended = Line {
            event: Event::Ended {},
            stamp: Stamp::default(),
        };
        assert!(decision(&ended, &session, "s:8").is_none());
    }

    #[test]
    fn a_range_holds_what_lies_in_it_and_leaves_out_what_has_no_time() {
        let t = |s: &str| parse_time(s).unwrap();
        let range = Range {
            since: Some(t("2026-12-01")),
            until: Some(t("2026-12-02T00:00:00Z")),
        };
        assert_eq!(range.holds(Some("2026-12-01T00:00:00.000000Z")), Some(true));
        assert_eq!(range.holds(Some("2026-12-01T23:59:59.999999Z")), Some(true));
        assert_eq!(range.holds(Some("2026-12-02T00:00:00.000000Z")), Some(false));
        assert_eq!(range.holds(Some("2026-11-30T23:59:59.999999Z")), Some(false));
        assert_eq!(range.holds(None), None);
        assert_eq!(range.holds(Some("yesterday")), None);
        let all = Range {
            since: None,
            until: None,
        };
        assert_eq!(all.holds(None), Some(true));
        assert!(parse_time("2026-13-01").is_err());
        assert!(parse_time("2026-12-01T09:00:00+02:00").is_err());
    }
}
