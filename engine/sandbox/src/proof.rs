//! What a probe observed inside an environment: data, for the record and for `contained`.

use serde::{Deserialize, Serialize};

/// The result of proving an environment: every check the probe made, and whether all held.
///
/// A proof is only `proven` when every check held; a check that could not be made (the sandbox
/// could not be built, a mechanism is missing) is a check that did not hold, with a detail that
/// says what is missing.
///
/// ```
/// use sixfold_sandbox::{Check, Proof};
///
/// let proof = Proof::from_checks(vec![
///     Check::new("write-inside-root", true, "`/w`: a new file was written and removed"),
///     Check::new("network-cut", false, "connected to the host's loopback listener on port 4242"),
/// ]);
/// assert!(!proof.proven);
/// assert_eq!(proof.failed().count(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proof {
    /// Whether every check held.
    pub proven: bool,
    /// What the probe tried and observed, in order.
    pub checks: Vec<Check>,
}

/// One observation of the probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// What was checked: `sandbox`, `landlock`, `write-inside-root`, `write-outside-roots`,
    /// `protected-read-only`, `protected-not-creatable`, `secret-hidden`, `network-cut`.
    pub name: String,
    /// Whether the environment held.
    pub held: bool,
    /// What was tried and what happened, for a person.
    pub detail: String,
}

impl Check {
    /// A check.
    pub fn new(name: &str, held: bool, detail: impl Into<String>) -> Check {
        Check {
            name: name.to_string(),
            held,
            detail: detail.into(),
        }
    }
}

impl Proof {
    /// A proof over these checks: proven when there is at least one and all held.
    pub fn from_checks(checks: Vec<Check>) -> Proof {
        // INVARIANT (fail closed): a proof with no observation is not a proof.
        let proven = !checks.is_empty() && checks.iter().all(|c| c.held);
        Proof { proven, checks }
    }

    /// The checks that did not hold.
    pub fn failed(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_checks_is_not_proven() {
        assert!(!Proof::from_checks(Vec::new()).proven);
    }

    #[test]
    fn the_json_shape_is_the_documented_one() {
        let proof = Proof::from_checks(vec![Check::new("sandbox", true, "built")]);
        let json = serde_json::to_value(&proof).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"proven": true, "checks": [{"name": "sandbox", "held": true, "detail": "built"}]})
        );
    }
}
