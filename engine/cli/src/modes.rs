//! `sixfold modes`: the modes in the loaded bundle.

use crate::bundles::{self, BundleArgs};
use crate::output::outln;

/// List the modes in the loaded bundle, with their descriptions; `sixfold modes diff A B` shows
/// where two of them decide differently.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    bundle: BundleArgs,
    /// Print a JSON array of `{"id","name","description","extends","environment","file"}`.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    Diff(crate::modes_diff::Args),
}

pub(crate) fn run(args: Args) -> u8 {
    if let Some(Command::Diff(diff)) = args.command {
        return crate::modes_diff::run(diff);
    }
    let (bundle, _, diagnostics) = bundles::load(&args.bundle);
    bundles::report(&diagnostics);
    if args.json {
        let list: Vec<serde_json::Value> = bundle
            .modes()
            .map(|m| {
                serde_json::json!({
                    "id": m.id, "name": m.name, "description": m.description,
                    "extends": m.extends, "environment": m.environment, "file": m.file,
                })
            })
            .collect();
        crate::output::json(&serde_json::json!({ "modes": list }));
    } else {
        let width = bundle.modes().map(|m| m.id.len()).max().unwrap_or(0);
        for m in bundle.modes() {
            let mut line = format!("{:width$}  {}", m.id, m.description.as_deref().unwrap_or(""));
            if let Some(parent) = &m.extends {
                line.push_str(&format!(" (narrows `{parent}`)"));
            }
            outln!("{line}");
        }
    }
    // The process ends right after printing: freeing the whole bundle (a fifth of this
    // command's instructions) would be wasted work.
    std::mem::forget(bundle);
    u8::from(!diagnostics.is_empty())
}
