//! `sixfold judge --explain`: the core's explanation of one tool call's judgement, in words.

use sixfold_core::call::{Considered, Explanation};
use sixfold_core::effects::EffectProfile;
use std::fmt::Write;

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn places(p: &[String]) -> String {
    if p.is_empty() {
        "nothing".into()
    } else {
        p.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
    }
}

fn effects(e: &EffectProfile) -> String {
    format!(
        "reads {}; writes {}; reaches {}; reversible {}; contained {}; costs {}",
        places(&e.reads),
        places(&e.writes),
        yes(e.reaches),
        yes(e.reversible),
        yes(e.contained),
        yes(e.costs)
    )
}

fn considered(out: &mut String, c: &Considered, several: bool) {
    let which = match (c.layer, several) {
        ("without", _) => "without the project's `.sixfold/` (not trusted)",
        (_, true) => "with the project's `.sixfold/`",
        _ => "the bundle",
    };
    let _ = writeln!(out, "\n{which}, mode `{}`:", c.mode);
    let Some(judged_effects) = &c.effects else {
        let _ = writeln!(out, "  not judged: {}", c.judgement.reason);
        return;
    };
    let _ = writeln!(out, "  effects as judged: {}", effects(judged_effects));
    if c.ceiling.is_empty() {
        let _ = writeln!(out, "  ceiling: within it");
    } else {
        let _ = writeln!(out, "  ceiling: beyond it: {}", c.ceiling.join("; "));
    }
    for rule in &c.rules {
        let (mark, word) = if rule.matched {
            ("+", "matched")
        } else {
            ("-", "no match")
        };
        let _ = writeln!(
            out,
            "  {mark} rule `{}` ({}): {word}: {}",
            rule.id, rule.decision, rule.why
        );
    }
    if let Some(by_mode) = &c.by_mode {
        let _ = writeln!(
            out,
            "  the mode decides {} (by {}): {}",
            by_mode.decision, by_mode.by, by_mode.reason
        );
        if by_mode.decision != c.judgement.decision || by_mode.reason != c.judgement.reason {
            let _ = writeln!(
                out,
                "  the step decides {} (by {}; kept rules, containment, the pattern): {}",
                c.judgement.decision, c.judgement.by, c.judgement.reason
            );
        }
    }
}

/// The explanation as text: the step, each bundle's trace, and what decided.
pub(crate) fn text(tool: &str, provider: &str, e: &Explanation) -> String {
    let mut out = String::new();
    let step = &e.judged.step;
    let _ = writeln!(
        out,
        "step: {} `{}` (tool `{tool}` read through provider `{provider}`)",
        step.act.kind, step.act.text
    );
    if let Some(opaque) = &e.judged.opaque {
        let _ = writeln!(out, "not understood: {opaque}");
    }
    let several = e.considered.len() > 1;
    for c in &e.considered {
        considered(&mut out, c, several);
    }
    let j = &e.judged.judgement;
    let rules = if j.rules.is_empty() {
        String::new()
    } else {
        format!(" [{}]", j.rules.join(", "))
    };
    let _ = writeln!(out, "\ndecided: {} by {}{rules}: {}", j.decision, j.by, j.reason);
    if let Some(ignored) = &e.judged.ignored {
        let _ = writeln!(out, "ignored (the project's `.sixfold/` is not trusted): {ignored}");
    }
    match e.judged.updated_input.as_ref().and_then(|i| i.as_object()) {
        _ if j.decision == sixfold_core::Decision::Refuse => {
            let _ = writeln!(out, "would not run");
        }
        Some(input) => {
            let shown = input
                .values()
                .find_map(|v| v.as_str().filter(|s| s.contains(" sandbox run ")))
                .map(str::to_string)
                .unwrap_or_else(|| serde_json::Value::Object(input.clone()).to_string());
            let _ = writeln!(out, "would run contained: {shown}");
        }
        None => {
            let _ = writeln!(out, "would run as it is (not contained)");
        }
    }
    out
}
