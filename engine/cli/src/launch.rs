//! `sixfold launch`: an agent CLI started headless, hermetically when asked, and checked
//! against the hermetic contract's rows.

use crate::bundles::{self, BundleArgs};
use crate::output::errln;
use sixfold_core::verdict::{Severity, Strictness, Verdict};
use sixfold_launch::{EnvArg, Governed, Outcome, Request, StdoutSink, Workdir};
use std::path::PathBuf;

/// Launch a provider's agent CLI headless. With `--hermetic` (`on`) or `--hermetic strict` the
/// controls of the hermetic contract are imposed: an environment built from an allow-list and
/// what the run declares, a scratch config home (credentials copied in as one file when
/// declared), exactly the declared MCP servers and plugins, setting sources excluded, a working
/// directory the launcher owns (`--copy`) or a declared root, sixfold's own hooks installed in
/// the scratch config home, the version pinned, the governing documents hashed before and
/// after. Rows H1a … H11 are then checked over what was imposed and what the vendor recorded.
///
/// The vendor's output goes to stdout (with `--json`, to `stdout.jsonl` in the run directory);
/// the verdict table goes to stderr. The run directory keeps the copy, the config home,
/// `attestation.json` (what was imposed: intent, not evidence) and `report.json`.
///
/// Exit codes: the vendor's own with `off` and `on`; with `strict`, 1 for any gating gap, else 3
/// for any gating unk, else the vendor's. 2 when the launch could not be made.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The provider (see `sixfold providers`), e.g. `claude-code`, `codex`.
    provider: String,
    /// `off` (the default: nothing imposed), `on` (imposed and reported; bare `--hermetic`), or
    /// `strict` (a gating row that is not ok fails the run).
    #[arg(long, value_name = "off|on|strict", value_parser = parse_hermetic, num_args = 0..=1,
          default_value = "off", default_missing_value = "on")]
    hermetic: Strictness,
    /// Run in place, in this declared directory.
    #[arg(long, value_name = "DIR", conflicts_with = "copy")]
    root: Option<PathBuf>,
    /// Copy this tree into a fresh working directory the launcher owns, and run there.
    #[arg(long, value_name = "DIR")]
    copy: Option<PathBuf>,
    /// The version the vendor must be (default: the version found at launch).
    #[arg(long, value_name = "VERSION")]
    pin: Option<String>,
    /// The one variable that may carry an API key (passed through from this environment, or
    /// from `--env`).
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
    /// A declared input: `NAME=VALUE`, or `NAME` to pass this environment's value (repeatable).
    #[arg(long, value_name = "NAME[=VALUE]", value_parser = parse_env)]
    env: Vec<EnvArg>,
    /// The exact MCP servers (a config file in the provider's format); without it, none.
    #[arg(long, value_name = "FILE")]
    mcp_config: Option<PathBuf>,
    /// A declared plugin: a name, or a plugin directory to load (repeatable).
    #[arg(long, value_name = "NAME")]
    plugin: Vec<String>,
    /// A credentials file, copied into the scratch config home as one file.
    #[arg(long, value_name = "FILE")]
    credentials: Option<PathBuf>,
    /// An extra governing document to pin (relative to the working directory; repeatable).
    #[arg(long, value_name = "FILE")]
    govern: Vec<PathBuf>,
    /// The provider's CLI, instead of searching PATH.
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// Run it governed: its own file and shell tools off, sixfold's governed tools
    /// (`sixfold serve-tools`) offered instead, every call judged, sandboxed and recorded, and an
    /// ask waiting for `sixfold approvals answer` (how is the provider file's `[governed]`; see
    /// docs/governed.md).
    #[arg(long)]
    governed: bool,
    /// With `--governed`: pin the tools' mode (default: follow the project's active mode).
    #[arg(long, value_name = "ID", requires = "governed")]
    mode: Option<String>,
    /// With `--governed`: how long an ask waits for an answer before it is refused.
    #[arg(long, value_name = "SECONDS", requires = "governed")]
    ask_timeout: Option<u64>,
    /// With `--governed`: the session the tools record under (`.sixfold/runs/<ID>.jsonl`).
    #[arg(long, value_name = "ID", requires = "governed")]
    session: Option<String>,
    /// Print one JSON object: `{"attestation", "rows", "ambient_inputs", "unclaimed", "vendor",
    /// "run_dir", "exit"}` (the vendor's output then goes to the run directory).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bundle: BundleArgs,
    /// The run's own arguments to the vendor's CLI, after `--`.
    #[arg(last = true, value_name = "VENDOR_ARGS")]
    vendor_args: Vec<String>,
}

fn parse_hermetic(text: &str) -> Result<Strictness, String> {
    match text {
        "off" => Ok(Strictness::Off),
        "on" => Ok(Strictness::On),
        "strict" => Ok(Strictness::Strict),
        other => Err(format!("`{other}` is not a strictness; use off, on or strict")),
    }
}

/// A governed run's session id when none is given: the time and this process.
fn governed_session() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("governed-{secs}-{}", std::process::id())
}

fn parse_env(text: &str) -> Result<EnvArg, String> {
    EnvArg::parse(text)
}

pub(crate) fn run(args: Args) -> u8 {
    let (bundle, _, diagnostics) = bundles::load(&args.bundle);
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        errln!(
            "error: the bundle has errors, so nothing was launched\n  = help: run `sixfold check` for the full report"
        );
        return 2;
    }
    let Some(provider) = bundle.provider(&args.provider) else {
        return crate::names::report(&bundle.unknown_provider(&args.provider));
    };
    if let Some(mode) = args.mode.as_deref().filter(|m| bundle.mode(m).is_none()) {
        return crate::names::report_then(&bundle.unknown_mode(mode), "nothing was launched");
    }
    let sixfold_exe = match std::env::current_exe().and_then(|p| p.canonicalize()) {
        Ok(p) => p,
        Err(e) => {
            errln!("error: cannot tell where the sixfold binary is ({e}), so its hooks cannot be installed");
            return 2;
        }
    };
    let workdir = match (args.root, args.copy) {
        (Some(root), _) => Workdir::Root(root),
        (None, Some(copy)) => Workdir::Copy(copy),
        (None, None) => Workdir::Current,
    };
    let request = Request {
        provider: provider.spec.clone(),
        hermetic: args.hermetic,
        workdir,
        pin: args.pin,
        api_key_env: args.api_key_env,
        env: args.env,
        mcp_config: args.mcp_config,
        plugins: args.plugin,
        credentials: args.credentials,
        govern: args.govern,
        binary: args.binary,
        governed: args.governed.then(|| Governed {
            mode: args.mode,
            ask_timeout: args.ask_timeout,
            session: args.session.unwrap_or_else(governed_session),
        }),
        vendor_args: args.vendor_args,
        sixfold_exe,
        stdout: if args.json {
            StdoutSink::File
        } else {
            StdoutSink::Forward
        },
        runs_in: None,
    };
    let outcome = match sixfold_launch::launch(&request, &bundle) {
        Ok(o) => o,
        Err(e) => {
            errln!("{e}");
            return 2;
        }
    };
    if args.json {
        crate::output::json(&sixfold_launch::report_json(&outcome));
    } else {
        print_text(&outcome, args.hermetic);
    }
    u8::try_from(outcome.exit.clamp(0, 255)).unwrap_or(1)
}

/// The verdict table and what surrounds it, on stderr (stdout is the vendor's).
fn print_text(outcome: &Outcome, strictness: Strictness) {
    let mode = match strictness {
        Strictness::Off => "off",
        Strictness::On => "on",
        Strictness::Strict => "strict",
    };
    errln!();
    errln!(
        "sixfold launch: hermetic {mode}; run directory {}",
        outcome.run_dir.display()
    );
    // The governed controls, when imposed: `None` for a run that is not governed.
    let governed = outcome
        .attestation
        .get("governed")
        .filter(|g| g.get("imposed") == Some(&serde_json::Value::Bool(true)));
    if let Some(g) = governed {
        let servers: Vec<&str> = g
            .get("servers")
            .and_then(|s| s.as_array())
            .map(|s| s.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        errln!(
            "  governed: sixfold's tools served by {}; the session's record is .sixfold/runs/{}.jsonl (`sixfold approvals list` shows what waits)",
            servers.join(", "),
            g.get("session").and_then(|v| v.as_str()).unwrap_or("")
        );
    }
    for w in &outcome.warnings {
        errln!("  warning: {w}");
    }
    match (&outcome.vendor.exit, &outcome.vendor.reason) {
        (Some(code), None) => errln!("  vendor exited {code}"),
        (Some(code), Some(why)) => errln!("  vendor exited {code} ({why})"),
        (None, Some(why)) => errln!("  vendor {why}"),
        (None, None) => {}
    }
    if strictness == Strictness::Off {
        if governed.is_some() {
            errln!("  nothing imposed but the governed controls, nothing checked (use --hermetic on|strict)");
        } else {
            errln!("  nothing imposed, nothing checked (use --hermetic on|strict)");
        }
        errln!("exit {}", outcome.exit);
        return;
    }
    let width = outcome.rows.iter().map(|r| r.id.len()).max().unwrap_or(0);
    for row in &outcome.rows {
        errln!(
            "  {:<3}  {:<8}  {:<6}  {:<width$}  {}",
            row.verdict.as_str(),
            row.severity.to_string(),
            row.assertion.to_string(),
            row.id,
            row.title
        );
        if !row.evidence.is_empty() {
            errln!("  {:<3}  {:<8}  {:<6}  {:<width$}    {}", "", "", "", "", row.evidence);
        }
    }
    if !outcome.ambient_inputs.is_empty() {
        errln!("ambient inputs (reported, not removed):");
        for a in &outcome.ambient_inputs {
            errln!("  {}: {}", a.name, a.why);
        }
    }
    errln!("unclaimed (never a successful confinement):");
    for u in &outcome.unclaimed {
        errln!("  {}: {}", u.control, u.why);
    }
    let gating = |v: Verdict| {
        outcome
            .rows
            .iter()
            .filter(|r| r.severity == Severity::Gating && r.verdict == v)
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>()
    };
    let (gaps, unks) = (gating(Verdict::Gap), gating(Verdict::Unk));
    let why = match strictness {
        Strictness::Strict if !gaps.is_empty() => format!("strict: gating gap in {}", gaps.join(", ")),
        Strictness::Strict if !unks.is_empty() => format!("strict: gating unk in {}", unks.join(", ")),
        Strictness::Strict => "strict: every gating row ok; the vendor's exit code".into(),
        _ => "the vendor's exit code".into(),
    };
    errln!("exit {} ({why})", outcome.exit);
}
