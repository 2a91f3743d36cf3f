//! Decisions and judgements: `Allow < Ask < Refuse`, combined by taking the strictest.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What a mode says of a step. The order is the strictness: combining is taking the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The step runs.
    Allow,
    /// A person is asked first.
    Ask,
    /// The step does not run.
    Refuse,
}

impl Decision {
    /// The lowercase name used in files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Refuse => "refuse",
        }
    }

    /// Parses the lowercase name.
    pub fn parse(text: &str) -> Option<Decision> {
        match text {
            "allow" => Some(Decision::Allow),
            "ask" => Some(Decision::Ask),
            "refuse" => Some(Decision::Refuse),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Decision {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Decision, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Decision;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a decision: `allow`, `ask` or `refuse`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Decision, E> {
                Decision::parse(v)
                    .ok_or_else(|| E::custom(format!("`{v}` is not a decision: expected `allow`, `ask` or `refuse`")))
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What decided a judgement: the mode's ceiling, its rules, its default, or nothing at all
/// because the judgement could not be made (a fail-closed refusal). It lets a person tell a
/// policy's refusal from a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecidedBy {
    /// The step is beyond the mode's ceiling.
    Ceiling,
    /// Matching rules decided (their ids are the judgement's `rules`).
    Rules,
    /// No rule matched: the mode's default applied.
    Default,
    /// The judgement could not be made (a rule that failed, a mode that is not there, input that
    /// cannot be read), so the step is refused.
    Unjudgeable,
    /// The run's lease is spent (or cannot be counted): the step is refused before the mode's
    /// judgement counts.
    Lease,
}

impl DecidedBy {
    /// The lowercase name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::Ceiling => "ceiling",
            DecidedBy::Rules => "rules",
            DecidedBy::Default => "default",
            DecidedBy::Unjudgeable => "unjudgeable",
            DecidedBy::Lease => "lease",
        }
    }
}

impl fmt::Display for DecidedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A decision with the reason a person can read, the ids of the rules that decided it and what
/// kind of thing decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    /// The decision.
    pub decision: Decision,
    /// Why, in words.
    pub reason: String,
    /// The ids of the rules that decided it (empty when the mode's default applied).
    pub rules: Vec<String>,
    /// The mode that judged.
    pub mode: String,
    /// What decided it.
    pub by: DecidedBy,
}

impl Judgement {
    /// A refusal made because a judgement could not be made at all.
    ///
    /// ```
    /// use sixfold_core::decision::{DecidedBy, Decision, Judgement};
    /// let j = Judgement::refuse_unjudgeable("ask", "the rule's script failed");
    /// assert_eq!((j.decision, j.by), (Decision::Refuse, DecidedBy::Unjudgeable));
    /// ```
    pub fn refuse_unjudgeable(mode: &str, why: impl Into<String>) -> Judgement {
        // INVARIANT (fail closed): a judgement that cannot be made is a refusal, never an allow.
        Judgement {
            decision: Decision::Refuse,
            reason: format!(
                "mode `{mode}` could not judge this step, so it is refused: {}",
                why.into()
            ),
            rules: Vec::new(),
            mode: mode.to_string(),
            by: DecidedBy::Unjudgeable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_strictness() {
        assert!(Decision::Allow < Decision::Ask);
        assert!(Decision::Ask < Decision::Refuse);
        assert_eq!(Decision::Allow.max(Decision::Refuse), Decision::Refuse);
    }

    #[test]
    fn names_round_trip() {
        for d in [Decision::Allow, Decision::Ask, Decision::Refuse] {
            assert_eq!(Decision::parse(d.as_str()), Some(d));
        }
        assert_eq!(Decision::parse("deny"), None);
    }

    #[test]
    fn what_decided_is_written_lowercase() {
        let j = Judgement::refuse_unjudgeable("m", "x");
        let v = serde_json::to_value(&j).unwrap();
        assert_eq!(v["by"], "unjudgeable");
        assert_eq!(v["decision"], "refuse");
        let back: Judgement = serde_json::from_value(v).unwrap();
        assert_eq!(back, j);
        assert_eq!(DecidedBy::Ceiling.to_string(), "ceiling");
    }
}
