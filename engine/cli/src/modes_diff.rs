//! `sixfold modes diff A B`: where two modes decide differently, over the whole effect space.

use crate::bundles::{self, BundleArgs};
use crate::output::{errln, outln};
use sixfold_core::effect_space::{Diff, Outcome, Region};

/// Where two modes decide differently, over every step they can tell apart (not over examples):
/// reads and writes drawn from the place classes their rules and ceilings name, and each of
/// reaches, reversible, contained and costs. Prints each region where they differ with both
/// decisions and the deciding rules, and says when one is at most as permissive as the other
/// everywhere. Rules with a Rhai script are not analysed: their regions are decided by a script.
///
/// Exit 0 when the two decide alike everywhere, 1 when they differ, 2 for a usage error (a mode
/// that does not exist, a bundle with errors).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The first mode.
    a: String,
    /// The second mode.
    b: String,
    #[command(flatten)]
    bundle: BundleArgs,
    /// Take the first mode from another bundle: this directory layered over the shipped bundle
    /// and the project's `.sixfold/` (repeatable), so a mode is compared with its changed self
    /// (`sixfold modes diff team team --base old/ --bundle new/`).
    #[arg(long = "base", value_name = "DIR")]
    base: Vec<std::path::PathBuf>,
    /// Print one JSON object: `{"a","b","alike","a_at_most_as_permissive","b_at_most_as_permissive","exact","classes","profiles","regions","exit"}`.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> u8 {
    let (bundle, _, mut diagnostics) = bundles::load(&args.bundle);
    let with_base = !args.base.is_empty();
    let base = with_base.then(|| {
        let (base, _, mut found) = bundles::load(&BundleArgs {
            bundles: args.base.clone(),
            no_project: args.bundle.no_project,
        });
        diagnostics.append(&mut found);
        base
    });
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        errln!(
            "error: a bundle has errors, so no modes were compared\n  = help: run `sixfold check` for the full report"
        );
        return 2;
    }
    let mut modes = Vec::new();
    for (id, bundle) in [(&args.a, base.as_ref().unwrap_or(&bundle)), (&args.b, &bundle)] {
        match bundle.mode(id) {
            Some(m) => modes.push(m),
            None => return crate::names::report(&bundle.unknown_mode(id)),
        }
    }
    let [a, b] = modes.as_slice() else { return 2 };
    let mut d = a.diff(b);
    if with_base {
        d.a = format!("{} (base)", d.a);
        d.b = format!("{} (new)", d.b);
    }
    let exit = u8::from(!d.alike());
    if args.json {
        crate::output::json(&as_json(&d, exit));
    } else {
        print_text(&d);
    }
    exit
}

fn print_text(d: &Diff) {
    let n = d.regions.len();
    outln!(
        "`{}` and `{}` over {} place classes read and written and the four yes/no fields ({} profiles): {}",
        d.a,
        d.b,
        d.space.classes().len(),
        d.space.len(),
        if n == 0 {
            "they decide alike".to_string()
        } else {
            format!("{n} region{} differ", if n == 1 { "" } else { "s" })
        }
    );
    let width = d.a.len().max(d.b.len());
    for (i, r) in d.regions.iter().enumerate() {
        outln!("  {}. a step that {}", i + 1, d.describe(r));
        outln!("       {:width$}  {}", d.a, r.a.in_words());
        outln!("       {:width$}  {}", d.b, r.b.in_words());
    }
    for line in verdict_lines(d) {
        outln!("{line}");
    }
}

/// What holds everywhere, in words.
fn verdict_lines(d: &Diff) -> Vec<String> {
    let mut lines = Vec::new();
    let (ab, ba) = (d.a_at_most_as_permissive(), d.b_at_most_as_permissive());
    if d.alike() {
        lines.push(format!("`{}` and `{}` decide alike everywhere", d.a, d.b));
    } else if ab {
        lines.push(format!("`{}` is at most as permissive as `{}` everywhere", d.a, d.b));
    } else if ba {
        lines.push(format!("`{}` is at most as permissive as `{}` everywhere", d.b, d.a));
    } else {
        lines.push("neither is at most as permissive as the other: each allows more somewhere".into());
    }
    if d.regions.iter().any(|r| r.a.scripted() || r.b.scripted()) {
        lines.push("regions decided by a script are not analysed: what the script answers decides them".into());
    }
    if !d.exact {
        lines.push(
            "note: a rule decides more permissively than its mode's default, so a step touching several places may be decided otherwise than its one-place regions"
                .into(),
        );
    }
    lines
}

fn outcome_json(o: &Outcome) -> serde_json::Value {
    serde_json::json!({
        "decision": o.decision, "by": o.by, "rules": o.rules, "scripts": o.scripts,
        "scripted": o.scripted(), "least": o.least(), "most": o.most(),
    })
}

fn region_json(d: &Diff, r: &Region) -> serde_json::Value {
    let labels = |ids: &[usize]| -> Vec<String> {
        ids.iter()
            .filter_map(|i| d.space.classes().get(*i))
            .map(|c| c.label.clone())
            .collect()
    };
    serde_json::json!({
        "description": d.describe(r),
        "reads": labels(&r.reads),
        "writes": labels(&r.writes),
        "flags": r.flags,
        "a": outcome_json(&r.a),
        "b": outcome_json(&r.b),
    })
}

fn as_json(d: &Diff, exit: u8) -> serde_json::Value {
    serde_json::json!({
        "a": d.a,
        "b": d.b,
        "alike": d.alike(),
        "a_at_most_as_permissive": d.a_at_most_as_permissive(),
        "b_at_most_as_permissive": d.b_at_most_as_permissive(),
        "exact": d.exact,
        "classes": d.space.classes(),
        "profiles": d.space.len(),
        "regions": d.regions.iter().map(|r| region_json(d, r)).collect::<Vec<_>>(),
        "exit": exit,
    })
}
