//! JUnit XML: a `testsuite` per recording, a `testcase` per row.
//!
//! A gap is a `failure` (whatever the row's severity: the row did not hold). An unk is an `error`
//! where it fails the run (a gating row under `--strict`, exit 3), else `skipped`: it was not
//! decided either way. A recording that could not be read says why in its `system-err`; its rows
//! are unk like any other. Written with quick-xml, which escapes text and attributes; characters
//! XML 1.0 cannot hold at all (most control characters, which a recording may carry) are replaced
//! first.

use super::{level, message, Level, Run};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::Writer;
use sixfold_core::verdict::{RowResult, Verdict};

/// What a row's testcase holds besides its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    Failure,
    Error,
    Skipped,
}

fn outcome(row: &RowResult, run: &Run<'_>) -> Outcome {
    match (row.verdict, level(row, run.strictness)) {
        (Verdict::Ok, _) => Outcome::Passed,
        (Verdict::Gap, _) => Outcome::Failure,
        (Verdict::Unk, Level::Error) => Outcome::Error,
        (Verdict::Unk, _) => Outcome::Skipped,
    }
}

/// The counts a suite (or all of them) carries as attributes.
#[derive(Debug, Default)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Counts {
    fn of<'r>(rows: impl Iterator<Item = &'r RowResult>, run: &Run<'_>) -> Counts {
        let mut c = Counts::default();
        for row in rows {
            c.tests += 1;
            match outcome(row, run) {
                Outcome::Passed => {}
                Outcome::Failure => c.failures += 1,
                Outcome::Error => c.errors += 1,
                Outcome::Skipped => c.skipped += 1,
            }
        }
        c
    }

    fn attributes(&self) -> [(&'static str, String); 4] {
        [
            ("tests", self.tests.to_string()),
            ("failures", self.failures.to_string()),
            ("errors", self.errors.to_string()),
            ("skipped", self.skipped.to_string()),
        ]
    }
}

/// The JUnit document.
pub(crate) fn render(run: &Run<'_>) -> std::io::Result<String> {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let all = Counts::of(run.recordings.iter().flat_map(|r| r.rows.iter()), run);
    let mut suites = BytesStart::new("testsuites");
    suites.push_attribute(("name", "sixfold replay"));
    push(&mut suites, &all.attributes());
    w.write_event(Event::Start(suites))?;
    for rec in &run.recordings {
        let counts = Counts::of(rec.rows.iter(), run);
        let mut suite = BytesStart::new("testsuite");
        suite.push_attribute(("name", clean(rec.file).as_str()));
        push(&mut suite, &counts.attributes());
        w.write_event(Event::Start(suite))?;
        w.write_event(Event::Start(BytesStart::new("properties")))?;
        let strictness = if run.strictness == sixfold_core::verdict::Strictness::Strict {
            "strict"
        } else {
            "on"
        };
        let steps = rec.steps.to_string();
        let properties = [
            ("format", rec.format.unwrap_or("unreadable")),
            ("steps", steps.as_str()),
            ("strictness", strictness),
        ];
        for (name, value) in properties {
            let mut p = BytesStart::new("property");
            push(&mut p, &[("name", name.to_string()), ("value", clean(value))]);
            w.write_event(Event::Empty(p))?;
        }
        w.write_event(Event::End(BytesEnd::new("properties")))?;
        for row in rec.rows {
            let mut case = BytesStart::new("testcase");
            push(
                &mut case,
                &[
                    ("name", clean(&row.id)),
                    ("classname", clean(&format!("sixfold.{}", row.severity))),
                    ("file", clean(rec.file)),
                ],
            );
            let element = match outcome(row, run) {
                Outcome::Passed => None,
                Outcome::Failure => Some("failure"),
                Outcome::Error => Some("error"),
                Outcome::Skipped => Some("skipped"),
            };
            let Some(element) = element else {
                w.write_event(Event::Empty(case))?;
                continue;
            };
            w.write_event(Event::Start(case))?;
            let mut said = BytesStart::new(element);
            let title = if row.title.is_empty() { &row.id } else { &row.title };
            push(
                &mut said,
                &[("message", clean(title)), ("type", row.verdict.as_str().to_string())],
            );
            w.write_event(Event::Start(said))?;
            w.write_event(Event::Text(BytesText::new(&clean(&message(row, run.bundle)))))?;
            w.write_event(Event::End(BytesEnd::new(element)))?;
            w.write_event(Event::End(BytesEnd::new("testcase")))?;
        }
        let mut notes: Vec<String> = rec.error.iter().map(|e| e.to_string()).collect();
        notes.extend(
            rec.malformed
                .iter()
                .map(|m| format!("{}:{}: malformed line skipped: {}", rec.file, m.line, m.error)),
        );
        if !notes.is_empty() {
            w.write_event(Event::Start(BytesStart::new("system-err")))?;
            w.write_event(Event::Text(BytesText::new(&clean(&notes.join("\n")))))?;
            w.write_event(Event::End(BytesEnd::new("system-err")))?;
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    let mut text = String::from_utf8(w.into_inner()).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text)
}

fn push(element: &mut BytesStart<'_>, attributes: &[(&str, String)]) {
    for (name, value) in attributes {
        element.push_attribute((*name, value.as_str()));
    }
}

/// The text with every character XML 1.0 cannot hold (control characters but tab, LF and CR,
/// surrogates cannot occur in a `str`, U+FFFE and U+FFFF) replaced by U+FFFD.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => '\u{fffd}',
            _ => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::row;
    use super::super::Recording;
    use super::*;
    use quick_xml::events::Event;
    use quick_xml::Reader;
    use sixfold_core::verdict::{Severity, Strictness};

    /// An element's name and attributes.
    type Element = (String, Vec<(String, String)>);

    /// Each element's name and attributes, and the text, read back by an XML parser.
    fn parse(xml: &str) -> (Vec<Element>, String) {
        let mut reader = Reader::from_str(xml);
        let mut elements = Vec::new();
        let mut text = String::new();
        loop {
            match reader.read_event().unwrap() {
                Event::Start(e) | Event::Empty(e) => {
                    let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                    let attrs = e
                        .attributes()
                        .map(|a| {
                            let a = a.unwrap();
                            let key = String::from_utf8(a.key.as_ref().to_vec()).unwrap();
                            (key, a.unescape_value().unwrap().into_owned())
                        })
                        .collect();
                    elements.push((name, attrs));
                }
                Event::Text(t) => text.push_str(&t.decode().unwrap()),
                // Entities come as events of their own; the text is unescaped whole at the end.
                Event::GeneralRef(r) => text.push_str(&format!("&{};", r.decode().unwrap())),
                Event::Eof => break,
                _ => {}
            }
        }
        (elements, quick_xml::escape::unescape(&text).unwrap().into_owned())
    }

    fn attr<'a>(e: &'a Element, key: &str) -> &'a str {
        e.1.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap()
    }

    #[test]
    fn rows_become_testcases_and_text_is_escaped() {
        let b = sixfold_core::bundle::Bundle::load(&[sixfold_core::shipped::source()]).0;
        let rows = [
            row(
                "gap-row",
                Severity::Advisory,
                Verdict::Gap,
                "</failure><x a=\"1\">&amp; \u{1b}[31m",
            ),
            row("unk-row", Severity::Gating, Verdict::Unk, "not known"),
            row("ok-row", Severity::Gating, Verdict::Ok, ""),
        ];
        let mut run = Run {
            recordings: vec![Recording {
                file: "runs/<a>&\"b\".jsonl",
                format: Some("claude-stream-json"),
                error: None,
                steps: 3,
                malformed: &[],
                rows: &rows,
            }],
            strictness: Strictness::On,
            exit: 0,
            bundle: &b,
        };
        let xml = render(&run).unwrap();
        let (elements, text) = parse(&xml);
        let names: Vec<&str> = elements.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "testsuites",
                "testsuite",
                "properties",
                "property",
                "property",
                "property",
                "testcase",
                "failure",
                "testcase",
                "skipped",
                "testcase"
            ]
        );
        assert_eq!(attr(&elements[1], "name"), "runs/<a>&\"b\".jsonl");
        assert_eq!(attr(&elements[1], "tests"), "3");
        assert_eq!(attr(&elements[1], "failures"), "1");
        assert_eq!(attr(&elements[1], "skipped"), "1");
        assert_eq!(attr(&elements[1], "errors"), "0");
        assert_eq!(attr(&elements[7], "type"), "gap");
        // The evidence comes back as it was, but for the escape character XML cannot hold.
        assert!(text.contains("</failure><x a=\"1\">&amp; \u{fffd}[31m"), "{text}");
        // Under --strict the gating unk fails the run, so it is an error.
        run.strictness = Strictness::Strict;
        let (strict, _) = parse(&render(&run).unwrap());
        assert_eq!(strict[9].0, "error");
        assert_eq!(attr(&strict[0], "errors"), "1");
    }
}
