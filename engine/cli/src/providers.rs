//! `sixfold providers`: which agent CLIs this machine has, with versions and status.

use crate::bundles::{self, BundleArgs};
use crate::output::{errln, outln};
use sixfold_launch::probe::{self, ProviderStatus, Status};

/// Show the providers the bundle knows (Claude Code, Codex, OpenCode, …) and what this machine
/// has of each: ready, signed-out, absent (with the install hint), unsupported (older than
/// sixfold knows how to launch and read) or unknown (nobody could ask). Only the exit code of
/// a provider's sign-in status command is read; its output may name an account and is never
/// read, kept or printed. Exit 0.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON object: `{"providers": [{"id", "name", "status", "reason", "binary",
    /// "version", "install_hint", "hermetic"}]}`.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bundle: BundleArgs,
}

pub(crate) fn run(args: Args) -> u8 {
    let (bundle, _, diagnostics) = bundles::load(&args.bundle);
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        errln!("error: the bundle has errors, so its providers cannot be trusted\n  = help: run `sixfold check` for the full report");
        return 2;
    }
    let found: Vec<ProviderStatus> = bundle.providers().map(|p| probe::status(&p.spec, None)).collect();
    if args.json {
        outln!("{}", serde_json::json!({ "providers": found }));
        return 0;
    }
    let id_width = found.iter().map(|p| p.id.len()).max().unwrap_or(0);
    for p in &found {
        let version = p.version.as_deref().unwrap_or("-");
        let hermetic = if p.hermetic {
            "hermetic launch"
        } else {
            "no hermetic launch"
        };
        outln!(
            "{:<id_width$}  {:<11}  {:<10}  {hermetic}",
            p.id,
            p.status.as_str(),
            version
        );
        match (&p.binary, p.status) {
            (_, Status::Absent) => {
                outln!("{:<id_width$}  {}", "", p.reason);
                if let Some(hint) = &p.install_hint {
                    outln!("{:<id_width$}  install: {hint}  (sixfold never installs anything)", "");
                }
            }
            (Some(binary), _) => {
                outln!("{:<id_width$}  {}", "", binary.display());
                outln!("{:<id_width$}  {}", "", p.reason);
            }
            (None, _) => outln!("{:<id_width$}  {}", "", p.reason),
        }
    }
    0
}
