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

/// A decision with the reason a person can read and the ids of the rules that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgement {
    /// The decision.
    pub decision: Decision,
    /// Why, in words.
    pub reason: String,
    /// The ids of the rules that decided it (empty when the mode's default applied).
    pub rules: Vec<String>,
    /// The mode that judged.
    pub mode: String,
}

impl Judgement {
    /// A refusal made because a judgement could not be made at all (fail closed).
    pub fn refuse_unjudgeable(mode: &str, why: impl Into<String>) -> Judgement {
        Judgement {
            decision: Decision::Refuse,
            reason: format!(
                "mode `{mode}` could not judge this step, so it is refused: {}",
                why.into()
            ),
            rules: Vec::new(),
            mode: mode.to_string(),
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
}
