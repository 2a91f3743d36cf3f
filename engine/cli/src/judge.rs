//! `sixfold judge`: one step's effects in, one judgement out.

use crate::bundles::{self, BundleArgs};
use crate::output::{errln, outln};
use sixfold_core::effects::EffectProfile;
use sixfold_core::judge::Context;
use sixfold_core::scope::Workspace;
use std::io::Read;
use std::path::PathBuf;

/// Effects JSON larger than this is refused: it is untrusted input.
const MAX_EFFECTS_BYTES: u64 = 1024 * 1024;

/// Judge one step's effects under a mode. Prints one JSON object
/// `{"decision","reason","rules","mode","by"}` (`by`: what decided it, `ceiling`, `rules`,
/// `default` or `unjudgeable`) and exits 0 whatever the decision (2 for a usage or bundle error).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  sixfold judge --mode workspace-write --effects '{\"writes\":[\"/etc/passwd\"]}'\n\n\
Effects are an object with `reads` and `writes` (named scopes such as `workspace`, `tmp`, `*`, a root's \
name, or paths), and `reaches`, `reversible`, `contained`, `costs`. Missing fields take the empty/false \
defaults, except `reversible`, which defaults to true."
)]
pub(crate) struct Args {
    /// The mode to judge under (see `sixfold modes`).
    #[arg(long, value_name = "ID")]
    mode: String,
    /// A workspace root: `DIR` for the primary one (where relative paths resolve), `NAME=DIR` for a
    /// named one (repeatable). Defaults to the current directory.
    #[arg(long = "root", value_name = "[NAME=]DIR")]
    roots: Vec<String>,
    /// The effects as JSON; read from stdin when absent.
    #[arg(long, value_name = "JSON")]
    effects: Option<String>,
    /// Extra context for scripts, as a JSON object.
    #[arg(long, value_name = "JSON")]
    context: Option<String>,
    #[command(flatten)]
    bundle: BundleArgs,
}

fn usage_error(message: &str, hint: &str) -> u8 {
    errln!("error: {message}\n  = help: {hint}");
    2
}

/// The workspace from `--root` flags: the first unnamed root is primary (the current directory
/// when there is none); named roots are added beside it.
pub(crate) fn workspace(roots: &[String]) -> Result<Workspace, String> {
    let mut primary: Option<PathBuf> = None;
    let mut named = Vec::new();
    for root in roots {
        match root.split_once('=') {
            Some((name, _)) if ["workspace", "tmp", "*"].contains(&name) => {
                return Err(format!("`{name}` is a reserved scope name and cannot name a root"))
            }
            Some((name, dir)) if !name.is_empty() && !name.contains('/') => {
                named.push((name.to_string(), PathBuf::from(dir)))
            }
            _ if primary.is_none() => primary = Some(PathBuf::from(root)),
            _ => return Err(format!("`{root}` is a second primary root; name it as NAME=DIR")),
        }
    }
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let primary = match primary {
        Some(p) if p.is_absolute() => p,
        Some(p) => cwd.join(p),
        None => cwd.clone(),
    };
    let mut ws = Workspace::new(primary).with_process_environment();
    for (name, dir) in named {
        let dir = if dir.is_absolute() { dir } else { cwd.join(dir) };
        ws = ws.with_root(&name, dir);
    }
    Ok(ws)
}

/// `sixfold judge`: prints the judgement of one step's effects.
pub(crate) fn run(args: Args) -> u8 {
    let text = match args.effects {
        Some(t) => t,
        None => {
            let mut buf = String::new();
            let read = std::io::stdin().take(MAX_EFFECTS_BYTES + 1).read_to_string(&mut buf);
            if let Err(e) = read {
                return usage_error(
                    &format!("cannot read effects from stdin: {e}"),
                    "pass them with --effects JSON",
                );
            }
            if buf.len() as u64 > MAX_EFFECTS_BYTES {
                return usage_error(
                    "the effects on stdin are larger than 1 MiB",
                    "effects are a small JSON object",
                );
            }
            buf
        }
    };
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return usage_error(
                &format!(
                    "the effects are not valid JSON (line {}, column {}): {e}",
                    e.line(),
                    e.column()
                ),
                "pass an object such as {\"writes\":[\"workspace\"]}",
            )
        }
    };
    if !value.is_object() {
        return usage_error(
            "the effects must be a JSON object",
            "pass an object such as {\"reads\":[\"workspace\"],\"reaches\":false}",
        );
    }
    let effects: EffectProfile = match serde_json::from_value(value) {
        Ok(e) => e,
        Err(e) => {
            return usage_error(
                &format!("the effects do not fit the effect profile: {e}"),
                "the fields are reads, writes (lists of scopes), reaches, reversible, contained, costs (booleans)",
            )
        }
    };
    let workspace = match workspace(&args.roots) {
        Ok(ws) => ws,
        Err(message) => return usage_error(&message, "--root DIR for the primary root, --root NAME=DIR for others"),
    };
    let mut context = Context::new(workspace);
    if let Some(extra) = &args.context {
        match serde_json::from_str::<serde_json::Value>(extra) {
            Ok(serde_json::Value::Object(map)) => context.extra = map,
            _ => {
                return usage_error(
                    "--context must be a JSON object",
                    "e.g. --context '{\"session\":\"abc\"}'",
                )
            }
        }
    }
    let (bundle, _, diagnostics) = bundles::load(&args.bundle);
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        return usage_error(
            "the bundle has errors, so nothing was judged",
            "run `sixfold check` for the full report",
        );
    }
    if bundle.mode(&args.mode).is_none() {
        let known: Vec<String> = bundle.modes().map(|m| format!("`{}`", m.id)).collect();
        return usage_error(
            &format!("there is no mode `{}`", args.mode),
            &format!("the modes are {}", known.join(", ")),
        );
    }
    let mut judgement = bundle.judge(&args.mode, &effects, &context);
    // A project `.sixfold/` that is not trusted only narrows: judged without it too, the
    // stricter stands (under the default mode where the mode is the project's own).
    if let Some(without) = bundles::without_untrusted_project(&args.bundle) {
        let mode = if without.mode(&args.mode).is_some() {
            args.mode.as_str()
        } else {
            sixfold_hook::DEFAULT_MODE
        };
        let narrowed = sixfold_core::narrow::narrowed(without.judge(mode, &effects, &context), judgement);
        if let Some(ignored) = &narrowed.ignored {
            errln!("note: untrusted project bundle ignored: {ignored}");
        }
        judgement = narrowed.judgement;
        std::mem::forget(without);
    }
    // The process ends right after printing: freeing the bundle would be wasted work on the
    // path whose latency is measured.
    std::mem::forget(bundle);
    match serde_json::to_string(&judgement) {
        Ok(line) => {
            outln!("{line}");
            0
        }
        Err(e) => usage_error(&format!("cannot print the judgement: {e}"), "this is a bug in sixfold"),
    }
}
