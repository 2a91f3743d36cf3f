//! Checking a launch: the bundle's launch rows evaluated over the facts, in natural order, and
//! sixfold's exit code from their verdicts and the vendor's.

use serde_json::Value;
use sixfold_core::bundle::Bundle;
use sixfold_core::format::FactsKind;
use sixfold_core::verdict::{exit_code, RowResult, Strictness};

/// Each argument as the rows see it is cut to this many characters (a prompt can be long).
const MAX_FACT_ARG_CHARS: usize = 4096;

/// The bundle's launch rows over `facts`, sorted `H1a`, `H1b`, `H2` … `H10`.
pub(crate) fn check(bundle: &Bundle, facts: &Value, warnings: &mut Vec<String>) -> Vec<RowResult> {
    let ids = bundle.rows_about(FactsKind::Launch);
    let mut rows = bundle.evaluate_rows(&ids, &for_rows(facts));
    rows.sort_by_key(|a| natural_key(&a.id));
    if rows.is_empty() {
        warnings.push("the bundle has no launch rows (`facts = \"launch\"`), so nothing was checked".into());
    }
    rows
}

/// sixfold's exit code: the vendor's, unless `strict` finds a gating row that is not ok.
pub(crate) fn exit(rows: &[RowResult], strictness: Strictness, vendor_exit: i32) -> i32 {
    // INVARIANT (fail closed): under `strict`, a gating gap or unk decides the exit code, whatever
    // the vendor's own.
    match strictness {
        Strictness::Strict => match exit_code(rows, Strictness::Strict) {
            0 => vendor_exit,
            gate => gate,
        },
        _ => vendor_exit,
    }
}

/// The facts as rows see them: long arguments cut, so a long prompt cannot hit a script's limits.
fn for_rows(facts: &Value) -> Value {
    let mut out = facts.clone();
    if let Some(argv) = out.pointer_mut("/launch/argv").and_then(Value::as_array_mut) {
        for arg in argv.iter_mut() {
            if let Some(s) = arg.as_str() {
                if s.chars().count() > MAX_FACT_ARG_CHARS {
                    *arg = Value::String(s.chars().take(MAX_FACT_ARG_CHARS).collect());
                }
            }
        }
    }
    out
}

/// A key that sorts `H2` before `H10`: text, then the number after it, run by run.
fn natural_key(id: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in id.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                out.push((std::mem::take(&mut text), digits.parse().unwrap_or(u64::MAX)));
                digits.clear();
            }
            text.push(c);
        }
    }
    if !text.is_empty() || !digits.is_empty() {
        out.push((text, digits.parse().unwrap_or(0)));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn rows_sort_naturally() {
        let mut ids = vec!["H10", "H2", "H1b", "H11", "H1a", "H9"];
        ids.sort_by_key(|a| natural_key(a));
        assert_eq!(ids, ["H1a", "H1b", "H2", "H9", "H10", "H11"]);
    }

    #[test]
    fn long_arguments_are_cut_for_the_rows() {
        let long = "x".repeat(MAX_FACT_ARG_CHARS + 10);
        let facts = serde_json::json!({ "launch": { "argv": ["claude", long] } });
        let cut = for_rows(&facts);
        assert_eq!(cut["launch"]["argv"][1].as_str().unwrap().len(), MAX_FACT_ARG_CHARS);
        assert_eq!(cut["launch"]["argv"][0], "claude");
    }

    #[test]
    fn strict_gates_the_exit_code() {
        assert_eq!(exit(&[], Strictness::On, 5), 5);
        assert_eq!(exit(&[], Strictness::Strict, 5), 5);
    }
}
