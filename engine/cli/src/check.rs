//! `sixfold check`: load and validate a bundle, and run every example in it.

use crate::bundles::{self, BundleArgs};
use crate::output::{errln, outln};

/// Load and validate the bundle (shipped, the project's `.sixfold/`, and any `--bundle`), and
/// run every example its files carry. Exit 0 when clean, 1 with diagnostics.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    bundle: BundleArgs,
    /// Print one JSON object: `{"ok", "sources", "counts", "diagnostics"}`.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, serde::Serialize)]
struct Counts {
    modes: usize,
    policies: usize,
    environments: usize,
    patterns: usize,
    providers: usize,
    rows: usize,
    examples: usize,
}

pub(crate) fn run(args: Args) -> u8 {
    let (bundle, sources, mut diagnostics) = bundles::load(&args.bundle);
    let mut failed_examples = bundle.run_examples();
    let examples = bundle.example_count();
    diagnostics.append(&mut failed_examples);
    let counts = Counts {
        modes: bundle.modes().count(),
        policies: bundle.policies().count(),
        environments: bundle.environments().count(),
        patterns: bundle.patterns().count(),
        providers: bundle.providers().count(),
        rows: bundle.rows().count(),
        examples,
    };
    let labels: Vec<String> = sources.iter().map(|s| s.label()).collect();
    // The project layer's trust standing: an untrusted `.sixfold/` only narrows.
    let project = (!args.bundle.no_project)
        .then(|| std::env::current_dir().ok())
        .flatten()
        .and_then(|cwd| sixfold_hook::project::place(&cwd).ok())
        .filter(|p| crate::bundles::project_bundle(p).is_some())
        .map(|p| (sixfold_hook::project::dir(&p), crate::trust::standing_words(&p)));
    if args.json {
        let out = serde_json::json!({
            "ok": diagnostics.is_empty(),
            "sources": labels,
            "counts": counts,
            "diagnostics": diagnostics,
            "project": project.as_ref().map(|(dir, standing)| serde_json::json!({"dir": dir, "standing": standing})),
        });
        crate::output::json(&out);
    } else {
        bundles::report(&diagnostics);
        let summary = format!(
            "{} modes, {} policies, {} environments, {} patterns, {} providers, {} rows; {} examples",
            counts.modes,
            counts.policies,
            counts.environments,
            counts.patterns,
            counts.providers,
            counts.rows,
            counts.examples
        );
        if let Some((dir, standing)) = &project {
            let what = match *standing {
                "trusted" => "trusted: it may widen what the shipped bundle allows",
                "empty" => "empty",
                _ => "not trusted on this machine: it only narrows (review it and run `sixfold trust`)",
            };
            outln!("project layer {}: {what}", dir.display());
        }
        if diagnostics.is_empty() {
            outln!("ok: {summary} (from {})", labels.join(", "));
        } else {
            let n = diagnostics.len();
            errln!(
                "{n} problem{} found in {summary} (from {})",
                if n == 1 { "" } else { "s" },
                labels.join(", ")
            );
        }
    }
    // The process ends right after printing: freeing every compiled rule, example and row
    // would be wasted work.
    std::mem::forget(bundle);
    u8::from(!diagnostics.is_empty())
}
