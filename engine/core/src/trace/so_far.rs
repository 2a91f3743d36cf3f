//! What a session's record holds so far that its next call needs: whether it was started, the
//! mode it last recorded, the sub-agents allowed, and what its lease and its helpers' carves
//! spent (with how far the agent CLI's record was read for usage). Folded one event at a time, so a writer of
//! the record can keep it beside the record (the hooks' checkpoint) instead of reading the whole
//! record again at every call.

use super::Event;
use crate::decision::Decision;
use crate::lease::usage::Cursor;
use crate::lease::{Carved, Lease, Spending};
use serde::{Deserialize, Serialize};

/// A session's record, folded down to what judging and recording its next call read.
///
/// ```
/// use sixfold_core::trace::{Event, SoFar};
///
/// let mut so_far = SoFar::default();
/// so_far.apply(&Event::ModeChanged { from: None, to: "ask".into() });
/// assert!(so_far.started);
/// assert_eq!(so_far.mode.as_deref(), Some("ask"));
/// assert_eq!(so_far.spawns, 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoFar {
    /// Whether the record was started (a `started` or `mode_changed` event is on it).
    pub started: bool,
    /// The mode the record last recorded, where it recorded one.
    pub mode: Option<String>,
    /// Sub-agent spawns allowed so far (what a pattern's limit counts).
    pub spawns: u32,
    /// What the session spent of its lease (its helpers' carves apart).
    #[serde(default)]
    pub spent: Spending,
    /// The carves given to helpers, with what each spent.
    #[serde(default)]
    pub carves: Vec<Carved>,
    /// How far each record of the agent CLI was read for usage.
    #[serde(default)]
    pub read: Vec<Cursor>,
}

impl SoFar {
    /// Folds one more event of the record in.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::Started { mode: Some(mode), .. } => {
                self.started = true;
                self.mode = Some(mode.clone());
            }
            Event::Started { mode: None, .. } => self.started = true,
            Event::ModeChanged { to, .. } => {
                self.started = true;
                self.mode = Some(to.clone());
            }
            Event::Judged { step, judgement } if judgement.decision == Decision::Allow && step.act.kind == "agent" => {
                self.spawns = self.spawns.saturating_add(1);
            }
            Event::Charged {
                carve,
                agent,
                at,
                steps,
                tokens,
                unread,
                read,
                ..
            } => {
                let account = match carve.as_deref() {
                    Some(id) => match self.carves.iter_mut().find(|c| c.id == id) {
                        Some(carved) => {
                            if carved.agent.is_none() {
                                carved.agent = agent.clone();
                            }
                            &mut carved.spent
                        }
                        // INVARIANT (fail closed): a charge to a carve that is not on the record
                        // is the session's, never lost.
                        None => &mut self.spent,
                    },
                    None => &mut self.spent,
                };
                account.charge(*steps, *at, tokens, unread.as_deref());
                if let Some(cursor) = read {
                    match self.read.iter_mut().find(|c| c.path == cursor.path) {
                        Some(slot) => *slot = cursor.clone(),
                        None => self.read.push(cursor.clone()),
                    }
                }
            }
            Event::Carved { id, helper, lease } => self.carves.push(Carved {
                id: id.clone(),
                helper: helper.clone(),
                lease: *lease,
                agent: None,
                spent: Spending::default(),
            }),
            _ => {}
        }
    }

    /// The carve a helper's call is charged to: the one its agent id claimed, else the oldest
    /// unclaimed carve for a helper of its type; `None`: the session's own lease.
    pub fn carve_of(&self, agent: &str, helper: &str) -> Option<&Carved> {
        self.carves
            .iter()
            .find(|c| c.agent.as_deref() == Some(agent))
            .or_else(|| {
                self.carves
                    .iter()
                    .find(|c| c.agent.is_none() && (c.helper == helper || c.helper.is_empty()))
            })
    }

    /// What the session gave its helpers: the sum of their carves' steps and cents (time is not
    /// taken from it: its clock runs on).
    pub fn carved(&self) -> Lease {
        let sum = |f: fn(&Lease) -> Option<u64>| {
            self.carves
                .iter()
                .filter_map(|c| f(&c.lease))
                .fold(None, |acc: Option<u64>, v| Some(acc.unwrap_or(0).saturating_add(v)))
        };
        Lease {
            steps: sum(|l| l.steps),
            seconds: None,
            cents: sum(|l| l.cents),
        }
    }

    /// How far the record at `path` was read.
    pub fn cursor(&self, path: &str) -> Cursor {
        self.read.iter().find(|c| c.path == path).cloned().unwrap_or(Cursor {
            path: path.to_string(),
            ..Cursor::default()
        })
    }

    /// A whole record folded.
    pub fn of<'a>(events: impl IntoIterator<Item = &'a Event>) -> SoFar {
        let mut so_far = SoFar::default();
        for event in events {
            so_far.apply(event);
        }
        so_far
    }

    /// Whether a line of the record can change what is folded here: lines that cannot are
    /// skipped unparsed (a quick look at how the line starts; a line that passes is parsed).
    pub fn may_change(line: &[u8]) -> bool {
        line.starts_with(br#"{"event":"started""#)
            || line.starts_with(br#"{"event":"mode_changed""#)
            || line.starts_with(br#"{"event":"judged""#)
            || line.starts_with(br#"{"event":"charged""#)
            || line.starts_with(br#"{"event":"carved""#)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{DecidedBy, Judgement};
    use crate::trace::{Step, StepAct};

    fn judged(kind: &str, decision: Decision) -> Event {
        Event::Judged {
            step: Box::new(Step {
                act: StepAct {
                    kind: kind.into(),
                    text: "helper".into(),
                },
                ..Step::default()
            }),
            judgement: Judgement {
                decision,
                reason: String::new(),
                rules: Vec::new(),
                mode: "ask".into(),
                by: DecidedBy::Rules,
            },
        }
    }

    #[test]
    fn only_allowed_spawns_count() {
        let events = [
            judged("agent", Decision::Allow),
            judged("agent", Decision::Refuse),
            judged("command", Decision::Allow),
            judged("agent", Decision::Allow),
        ];
        assert_eq!(SoFar::of(&events).spawns, 2);
        assert!(!SoFar::of(&events).started);
    }

    #[test]
    fn the_last_mode_recorded_is_kept() {
        let events = [
            Event::Started {
                session: "s".into(),
                cwd: None,
                mode: Some("ask".into()),
                provider: None,
                record: None,
            },
            Event::ModeChanged {
                from: Some("ask".into()),
                to: "full".into(),
            },
            Event::Ended {},
        ];
        let so_far = SoFar::of(&events);
        assert!(so_far.started);
        assert_eq!(so_far.mode.as_deref(), Some("full"));
    }

    /// Every event that changes the fold passes the quick look at its line.
    #[test]
    fn the_quick_look_passes_every_line_that_matters() {
        let started = Event::Started {
            session: "s".into(),
            cwd: None,
            mode: None,
            provider: None,
            record: None,
        };
        let changed = Event::ModeChanged {
            from: None,
            to: "x".into(),
        };
        for event in [started, changed, judged("agent", Decision::Allow)] {
            let line = serde_json::to_string(&event).unwrap();
            assert!(SoFar::may_change(line.as_bytes()), "{line}");
        }
        let ended = serde_json::to_string(&Event::Ended {}).unwrap();
        assert!(!SoFar::may_change(ended.as_bytes()));
    }
}
