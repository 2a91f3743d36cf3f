//! SARIF 2.1.0: one run of the `sixfold` tool, a rule per row, a result per gap or unk located at
//! the recording, and the recordings that could not be read or had malformed lines as the tool's
//! notifications (on their line where known).

use super::{level, message, Level, Run};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use serde_json::{json, Value};

/// What a path's characters must be escaped from to be a URI reference: `/` stays a separator.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// The SARIF log.
pub(crate) fn render(run: &Run<'_>) -> Value {
    let mut rule_ids: Vec<&str> = Vec::new();
    let mut rules: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let mut notifications: Vec<Value> = Vec::new();
    for rec in &run.recordings {
        let location = |line: Option<u64>| {
            let mut physical = json!({ "artifactLocation": { "uri": uri(rec.file) } });
            if let (Some(line), Some(fields)) = (line, physical.as_object_mut()) {
                fields.insert("region".into(), json!({ "startLine": line.max(1) }));
            }
            json!({ "physicalLocation": physical })
        };
        if let Some(error) = rec.error {
            notifications.push(json!({
                "level": "error",
                "message": { "text": error },
                "locations": [location(None)],
            }));
        }
        for m in rec.malformed {
            notifications.push(json!({
                "level": "warning",
                "message": { "text": format!("malformed line skipped: {}", m.error) },
                "locations": [location(Some(m.line))],
            }));
        }
        for row in rec.rows {
            let index = match rule_ids.iter().position(|id| *id == row.id) {
                Some(i) => i,
                None => {
                    rule_ids.push(&row.id);
                    rules.push(rule(row, run));
                    rule_ids.len() - 1
                }
            };
            let level = level(row, run.strictness);
            if level == Level::Pass {
                continue;
            }
            results.push(json!({
                "ruleId": row.id,
                "ruleIndex": index,
                "kind": "fail",
                "level": level.word(),
                "message": { "text": message(row, run.bundle) },
                "locations": [location(None)],
                "properties": {
                    "verdict": row.verdict,
                    "severity": row.severity,
                    "assertion": row.assertion,
                    "evidence": row.evidence,
                },
            }));
        }
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "sixfold",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
            "invocations": [{
                "executionSuccessful": true,
                "exitCode": run.exit,
                "toolExecutionNotifications": notifications,
            }],
            "properties": {
                "strictness": if run.strictness == sixfold_core::verdict::Strictness::Strict { "strict" } else { "on" },
            },
        }],
    })
}

/// A row as a SARIF rule: its id, title, remedy and the level a gap has.
fn rule(row: &sixfold_core::verdict::RowResult, run: &Run<'_>) -> Value {
    let gap = sixfold_core::verdict::RowResult {
        verdict: sixfold_core::verdict::Verdict::Gap,
        ..row.clone()
    };
    let mut rule = json!({
        "id": row.id,
        "shortDescription": { "text": if row.title.is_empty() { &row.id } else { &row.title } },
        "defaultConfiguration": { "level": level(&gap, run.strictness).word() },
        "properties": { "severity": row.severity, "assertion": row.assertion },
    });
    if let (Some(remedy), Some(fields)) = (run.bundle.remedy(&row.id), rule.as_object_mut()) {
        fields.insert("help".into(), json!({ "text": remedy.trim() }));
    }
    rule
}

/// A recording's path as a URI reference: relative paths stay relative (to the directory replay
/// ran in, which a CI job's checkout is), absolute ones become `file://` URIs.
fn uri(path: &str) -> String {
    let encoded = utf8_percent_encode(path, PATH).to_string();
    if path.starts_with('/') {
        format!("file://{encoded}")
    } else {
        encoded
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::row;
    use super::super::Recording;
    use super::*;
    use sixfold_core::trace::Malformed;
    use sixfold_core::verdict::{Severity, Strictness, Verdict};

    #[test]
    fn the_log_has_sarif_s_required_fields() {
        let b = sixfold_core::bundle::Bundle::load(&[sixfold_core::shipped::source()]).0;
        let a = [
            row("suite-before-success-claim", Severity::Gating, Verdict::Gap, "no suite"),
            row("advice", Severity::Advisory, Verdict::Unk, "not known"),
            row("fine", Severity::Gating, Verdict::Ok, ""),
        ];
        let bad = [Malformed {
            line: 3,
            error: "not JSON".into(),
        }];
        let run = Run {
            recordings: vec![
                Recording {
                    file: "runs/a b#1.jsonl",
                    format: Some("codex-exec-json"),
                    error: None,
                    steps: 2,
                    malformed: &bad,
                    rows: &a,
                },
                Recording {
                    file: "/abs/b.jsonl",
                    format: Some("codex-exec-json"),
                    error: None,
                    steps: 2,
                    malformed: &[],
                    rows: &a,
                },
            ],
            strictness: Strictness::Strict,
            exit: 1,
            bundle: &b,
        };
        // Through text and back, as a consumer reads it.
        let log: Value = serde_json::from_str(&render(&run).to_string()).unwrap();
        assert_eq!(log["version"], "2.1.0");
        let sarif_run = &log["runs"][0];
        assert_eq!(sarif_run["tool"]["driver"]["name"], "sixfold");
        let rules = sarif_run["tool"]["driver"]["rules"].as_array().unwrap();
        // A rule per row, once however many recordings.
        let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["suite-before-success-claim", "advice", "fine"]);
        assert!(rules[0]["help"]["text"].as_str().is_some_and(|t| !t.is_empty()));
        let results = sarif_run["results"].as_array().unwrap();
        assert_eq!(results.len(), 4, "a gap and an unk in each recording, nothing for ok");
        for r in results {
            let id = r["ruleId"].as_str().unwrap();
            let index = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[index]["id"], id);
            assert!(r["message"]["text"].as_str().unwrap().starts_with(id));
            assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
            assert!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string());
        }
        assert_eq!(results[0]["level"], "error");
        assert_eq!(results[1]["level"], "note");
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "runs/a%20b%231.jsonl"
        );
        assert_eq!(
            results[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "file:///abs/b.jsonl"
        );
        let invocation = &sarif_run["invocations"][0];
        assert_eq!(invocation["exitCode"], 1);
        assert_eq!(invocation["executionSuccessful"], true);
        let note = &invocation["toolExecutionNotifications"][0];
        assert_eq!(note["locations"][0]["physicalLocation"]["region"]["startLine"], 3);
    }
}
