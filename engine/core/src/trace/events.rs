//! sixfold's own event log: the events the hook adapters write, folded into a trace so the
//! live hooks and replay see the same facts.

use super::{Claim, Edit, Outcome, Output, Status, Step, Trace};
use serde::{Deserialize, Serialize};

/// One line of sixfold's own event log (`.sixfold/runs/<session>.jsonl`), written by the hook
/// adapters and read back by replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The session started.
    Started {
        /// The session's id.
        session: String,
        /// Its working directory.
        #[serde(default)]
        cwd: Option<String>,
        /// The active mode.
        #[serde(default)]
        mode: Option<String>,
        /// The agent CLI.
        #[serde(default)]
        provider: Option<String>,
        /// The vendor's record, when the adapter saw one.
        #[serde(default)]
        record: Option<serde_json::Value>,
    },
    /// A step was judged before it ran.
    Judged {
        /// The step, as far as it was known then.
        step: Box<Step>,
        /// The judgement: its decision, reason, rules, mode and what decided it, as fields of
        /// the event.
        #[serde(flatten)]
        judgement: crate::decision::Judgement,
    },
    /// A step's outcome was observed after it ran.
    Observed {
        /// The step's id.
        id: String,
        /// How it ended.
        outcome: Outcome,
        /// The edits it made, where visible.
        #[serde(default)]
        edits: Vec<Edit>,
        /// What a command printed, where it was seen (from the vendor's transcript).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Output>,
    },
    /// The active mode changed.
    ModeChanged {
        /// The mode before.
        #[serde(default)]
        from: Option<String>,
        /// The mode after.
        to: String,
    },
    /// A person's prompt was submitted (kept short: the log is not a transcript).
    Prompted {
        /// The prompt's first characters.
        prompt: String,
    },
    /// The agent made its final claim (it tried to stop).
    Claimed {
        /// The claim.
        claim: Claim,
    },
    /// Rows were evaluated.
    Verdict {
        /// The results.
        rows: Vec<crate::verdict::RowResult>,
    },
    /// The session ended.
    Ended {},
    /// A step was charged to its lease as it ran (`steps`), with the model's usage read from the
    /// agent CLI's record since the last charge (charged even beside a refused step: the model
    /// was paid for).
    Charged {
        /// The helper's carve it is charged to (the spawning call's id); absent: the session.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        carve: Option<String>,
        /// The agent id the agent CLI gave the helper's call, where it gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        /// When (seconds since the Unix epoch).
        at: u64,
        /// Steps charged.
        #[serde(default)]
        steps: u64,
        /// Tokens, per model.
        #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        tokens: std::collections::BTreeMap<String, crate::lease::Tokens>,
        /// Why usage could not be read (the cents spent are unknown from then on).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unread: Option<String>,
        /// How far the record was read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        read: Option<crate::lease::usage::Cursor>,
        /// The lease the account was under when charged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lease: Option<crate::lease::Lease>,
        /// The account's cents spent after this charge, as priced then; absent: unknown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cents: Option<f64>,
    },
    /// A helper was given a carve of its parent's lease when it was spawned.
    Carved {
        /// The spawning call's id.
        id: String,
        /// The helper asked for.
        #[serde(default)]
        helper: String,
        /// What it got.
        lease: crate::lease::Lease,
    },
    /// A step was held back: its lease was spent, or could not be counted.
    Held {
        /// The step's id.
        id: String,
        /// What ran out: `steps`, `seconds` or `cents`.
        what: String,
        /// The reason the agent was given.
        reason: String,
        /// The helper's carve that ran out; absent: the session's lease.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        carve: Option<String>,
    },
    /// A person answered a step that asked (or nobody did before the timeout).
    Answered {
        /// The step's id.
        id: String,
        /// The pending ask's id (`sixfold approvals answer ID`).
        approval: String,
        /// `allow`, `deny`, `allow-and-keep` or `timeout`.
        answer: String,
        /// The OS user who answered (empty at a timeout).
        #[serde(default)]
        by: String,
        /// For `allow-and-keep`: the rule kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kept: Option<String>,
    },
}

/// One line of the event log as written: the event, and its [`Stamp`]. The event's fields come
/// first (`{"event":"judged",…`), which is what a reader that looks only at how a line starts
/// relies on ([`super::SoFar::may_change`]). A reader that wants only the event parses the line as
/// an [`Event`]: the stamp's fields are ignored there, and a line written before lines were
/// stamped reads as a line with an empty stamp.
///
/// ```
/// use sixfold_core::trace::{Event, Line, Stamp};
/// let line = Line {
///     event: Event::Ended {},
///     stamp: Stamp {
///         timestamp: Some("2026-12-01T18:03:09.123456Z".into()),
///         bundle: Some("sha256:ab".into()),
///         decision_id: Some("4ca636c1-55e4-417a-b1d8-4aceb67960d1".into()),
///     },
/// };
/// let text = serde_json::to_string(&line).unwrap();
/// assert!(text.starts_with(r#"{"event":"ended","timestamp":"#));
/// assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), Event::Ended {});
/// // A line from before the stamp: read, with an empty one.
/// let old: Line = serde_json::from_str(r#"{"event":"ended"}"#).unwrap();
/// assert_eq!(old.stamp, Stamp::default());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
    /// When, under which bundle, and its id.
    #[serde(flatten)]
    pub stamp: Stamp,
}

/// What every line of the event log carries besides its event, so the log can be audited apart
/// from the machine that wrote it. Each field is absent on lines written before lines were
/// stamped; readers take those lines as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// When the line was written: RFC 3339 in UTC, to the microsecond
    /// (`2026-12-01T18:03:09.123456Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// The content hash of the bundle in force (`sha256:…`, see
    /// the bundle's `content_hash`): the shipped bundle and the project's `.sixfold/` over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// A random UUID (v4) unique to the line: on a `judged` line, the id of that judgement. Random
    /// rather than a session's count because writers in several processes append to one log
    /// without a shared counter, and a count would start again in a log that was moved away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_id: Option<String>,
}

/// What a session's `started` event says of it.
#[derive(Debug, Clone, Copy)]
pub struct SessionStart<'a> {
    /// The session's id.
    pub session: &'a str,
    /// Its working directory.
    pub cwd: &'a str,
    /// The agent CLI (or sixfold's own tool server).
    pub provider: &'a str,
}

/// The events to write before a call's own, given the record so far: `started` for a new record,
/// `mode_changed` when `mode` is not the one the record last recorded. Every writer of the record
/// (the hooks, the governed tools) keeps it this one way, so a replay sees the same modes.
pub fn preamble(so_far: &super::SoFar, start: SessionStart<'_>, mode: &str) -> Vec<Event> {
    if !so_far.started {
        return vec![Event::Started {
            session: start.session.to_string(),
            cwd: Some(start.cwd.to_string()),
            mode: Some(mode.to_string()),
            provider: Some(start.provider.to_string()),
            record: None,
        }];
    }
    if so_far.mode.as_deref() == Some(mode) {
        return Vec::new();
    }
    vec![Event::ModeChanged {
        from: so_far.mode.clone(),
        to: mode.to_string(),
    }]
}

impl Trace {
    /// Folds one event of sixfold's own log into the trace.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Started { cwd, record, .. } => {
                if cwd.is_some() {
                    self.cwd = cwd;
                }
                if record.is_some() {
                    self.record = record;
                }
            }
            Event::Judged { mut step, judgement } => {
                if judgement.decision == crate::decision::Decision::Refuse {
                    step.outcome.status = Status::Refused;
                }
                // A step after a claim means the run went on: it has not ended yet.
                self.ended = false;
                self.steps.push(*step);
            }
            Event::Observed {
                id,
                outcome,
                edits,
                output,
            } => {
                if let Some(step) = self.step_mut(&id) {
                    step.outcome = outcome;
                    if !edits.is_empty() {
                        step.edits = edits;
                    }
                    if output.is_some() {
                        step.output = output;
                    }
                }
            }
            // A claim is where the agent said it was finished: the record reaches an end there.
            Event::Claimed { claim } => {
                self.claim = Some(claim);
                self.ended = true;
            }
            Event::Ended {} => self.ended = true,
            Event::Charged {
                carve,
                at,
                steps,
                lease,
                cents,
                ..
            } => self
                .lease
                .get_or_insert_with(Default::default)
                .charge(carve.as_deref(), at, steps, lease, cents),
            Event::Held { .. } => {
                let run = self.lease.get_or_insert_with(Default::default);
                run.held = run.held.saturating_add(1);
            }
            Event::ModeChanged { .. }
            | Event::Verdict { .. }
            | Event::Prompted { .. }
            | Event::Answered { .. }
            | Event::Carved { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judged_event_holds_the_judgement_as_its_own_fields() {
        let judged = Event::Judged {
            step: Box::default(),
            judgement: crate::decision::Judgement::refuse_unjudgeable("m", "x"),
        };
        let line = serde_json::to_value(&judged).unwrap();
        assert_eq!(line["event"], "judged");
        assert_eq!(line["decision"], "refuse");
        assert_eq!(line["mode"], "m");
        assert_eq!(line["by"], "unjudgeable");
        assert_eq!(serde_json::from_value::<Event>(line).unwrap(), judged);
    }

    /// A stamped line is read by every reader of events, the judgement's own fields intact; and
    /// the fields that make a line count for a checkpoint stay at its start.
    #[test]
    fn a_stamped_line_reads_as_its_event_and_an_old_line_as_one_without_a_stamp() {
        let judged = Event::Judged {
            step: Box::new(Step {
                id: "t1".into(),
                tool: "Bash".into(),
                ..Step::default()
            }),
            judgement: crate::decision::Judgement::refuse_unjudgeable("ask", "x"),
        };
        let stamp = Stamp {
            timestamp: Some("2026-12-01T18:03:09.000001Z".into()),
            bundle: Some("sha256:00".into()),
            decision_id: Some("d".into()),
        };
        let line = Line {
            event: judged.clone(),
            stamp: stamp.clone(),
        };
        let text = serde_json::to_string(&line).unwrap();
        assert!(crate::trace::SoFar::may_change(text.as_bytes()), "{text}");
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), judged);
        assert_eq!(serde_json::from_str::<Line>(&text).unwrap(), line);
        let old = serde_json::to_string(&judged).unwrap();
        let read: Line = serde_json::from_str(&old).unwrap();
        assert_eq!((read.event, read.stamp), (judged, Stamp::default()));
        // Every kind of event keeps its fields beside a stamp.
        for event in [
            Event::Started {
                session: "s".into(),
                cwd: Some("/w".into()),
                mode: Some("ask".into()),
                provider: Some("p".into()),
                record: None,
            },
            Event::ModeChanged {
                from: None,
                to: "full".into(),
            },
            Event::Answered {
                id: "t1".into(),
                approval: "a".into(),
                answer: "allow".into(),
                by: "me".into(),
                kept: None,
            },
            Event::Ended {},
        ] {
            let line = Line {
                event: event.clone(),
                stamp: stamp.clone(),
            };
            let text = serde_json::to_string(&line).unwrap();
            assert!(text.starts_with(r#"{"event":""#), "{text}");
            assert_eq!(serde_json::from_str::<Line>(&text).unwrap(), line);
            assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event);
        }
    }

    #[test]
    fn events_fold_into_a_trace() {
        let mut t = Trace::default();
        t.apply(Event::Started {
            session: "s".into(),
            cwd: Some("/w".into()),
            mode: None,
            provider: None,
            record: None,
        });
        let step = Step {
            id: "1".into(),
            tool: "Bash".into(),
            ..Step::default()
        };
        t.apply(Event::Judged {
            step: Box::new(step),
            judgement: crate::decision::Judgement {
                decision: crate::decision::Decision::Allow,
                reason: String::new(),
                rules: vec![],
                mode: "m".into(),
                by: crate::decision::DecidedBy::Default,
            },
        });
        t.apply(Event::Observed {
            id: "1".into(),
            outcome: Outcome {
                status: Status::Completed,
                exit_code: Some(0),
            },
            edits: vec![],
            output: Some(Output {
                text: "running 1 test".into(),
                cut: false,
            }),
        });
        t.apply(Event::Claimed {
            claim: Claim {
                message: "done".into(),
                ..Claim::default()
            },
        });
        assert_eq!(t.cwd.as_deref(), Some("/w"));
        assert_eq!(t.steps[0].outcome.exit_code, Some(0));
        assert_eq!(
            t.steps[0].output.as_ref().map(|o| o.text.as_str()),
            Some("running 1 test")
        );
        assert_eq!(t.claim.as_ref().map(|c| c.message.as_str()), Some("done"));
        let line = serde_json::to_string(&Event::Ended {}).unwrap();
        assert_eq!(line, r#"{"event":"ended"}"#);
    }

    #[test]
    fn the_preamble_starts_a_log_once_and_records_each_mode_change() {
        let start = SessionStart {
            session: "s",
            cwd: "/w",
            provider: "an-agent",
        };
        let of = |events: &[Event]| crate::trace::SoFar::of(events);
        let first = preamble(&of(&[]), start, "ask");
        assert!(matches!(first.as_slice(), [Event::Started { mode: Some(m), .. }] if m == "ask"));
        assert!(preamble(&of(&first), start, "ask").is_empty());
        let changed = preamble(&of(&first), start, "full");
        assert!(matches!(changed.as_slice(), [Event::ModeChanged { from: Some(f), to }] if f == "ask" && to == "full"));
        let log: Vec<Event> = first.into_iter().chain(changed).collect();
        assert!(preamble(&of(&log), start, "full").is_empty());
    }
}
