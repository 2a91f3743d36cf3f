//! A name asked for that is not there (a mode, a pattern, a provider, …): the one way it is
//! said, with the closest name that is there ("did you mean") and every name that is, so every
//! command and every judgement says it alike. The CLI turns it into exit status 2.

use crate::bundle::Bundle;
use std::fmt;

/// How alike two names must be (Jaro-Winkler, ignoring case) for one to be offered for the
/// other: close enough to catch a typo or a dropped suffix, far enough that an unrelated word is
/// offered nothing. One edit (a letter added, dropped, changed, or two swapped) is always close:
/// Jaro-Winkler alone misses a swap in a short name (`aks` for `ask`).
const ALIKE: f64 = 0.8;

/// What one edit away scores.
const ONE_EDIT: f64 = 0.9;

/// What kind of name was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A mode's id.
    Mode,
    /// A pattern's id.
    Pattern,
    /// A provider's id.
    Provider,
    /// A kept rule's id.
    Rule,
    /// A row's id.
    Row,
    /// An embedded example run's name.
    Example,
}

impl Kind {
    /// The word for one.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Mode => "mode",
            Kind::Pattern => "pattern",
            Kind::Provider => "provider",
            Kind::Rule => "kept rule",
            Kind::Row => "row",
            Kind::Example => "example run",
        }
    }

    /// The word for several.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Mode => "modes",
            Kind::Pattern => "patterns",
            Kind::Provider => "providers",
            Kind::Rule => "kept rules",
            Kind::Row => "rows",
            Kind::Example => "example runs",
        }
    }
}

/// A name asked for and not found, with the names there are.
///
/// ```
/// use sixfold_core::names::{Kind, Unknown};
/// let u = Unknown::new(Kind::Mode, "workspace-wirte", ["read-only", "ask", "workspace-write", "full"]);
/// assert_eq!(u.to_string(), "there is no mode `workspace-wirte`");
/// assert_eq!(u.closest(), Some("workspace-write"));
/// assert!(u.hint().starts_with("did you mean `workspace-write`?"));
/// // A name far from every other is offered nothing.
/// assert_eq!(Unknown::new(Kind::Mode, "zzzz", ["read-only", "ask"]).closest(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// What kind of name.
    pub kind: Kind,
    /// The name asked for.
    pub name: String,
    /// The names there are, in the order given.
    pub known: Vec<String>,
}

impl Unknown {
    /// `name` of `kind` is not among `known`.
    pub fn new<S: AsRef<str>>(kind: Kind, name: &str, known: impl IntoIterator<Item = S>) -> Unknown {
        Unknown {
            kind,
            name: name.to_string(),
            known: known.into_iter().map(|k| k.as_ref().to_string()).collect(),
        }
    }

    /// The known name closest to the one asked for, where one is close enough.
    pub fn closest(&self) -> Option<&str> {
        closest(&self.name, self.known.iter().map(String::as_str))
    }

    /// What to do instead: the close name, if any, then every name there is.
    pub fn hint(&self) -> String {
        let listed = match self.known.as_slice() {
            [] => format!("there are no {}", self.kind.plural()),
            known => {
                let quoted: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                format!("the {} are {}", self.kind.plural(), quoted.join(", "))
            }
        };
        match self.closest() {
            Some(close) => format!("did you mean `{close}`? {listed}"),
            None => listed,
        }
    }
}

impl Unknown {
    /// The reason a judgement gives when what it was asked to judge under is not in the bundle:
    /// the close name, if any, but not the whole list.
    pub fn reason(&self) -> String {
        match self.closest() {
            Some(close) => format!("{self} in the bundle (did you mean `{close}`?)"),
            None => format!("{self} in the bundle"),
        }
    }
}

impl Bundle {
    /// `id` as a mode this bundle does not hold, with the ones it does.
    pub fn unknown_mode(&self, id: &str) -> Unknown {
        Unknown::new(Kind::Mode, id, self.modes().map(|m| m.id.as_str()))
    }

    /// `id` as a pattern this bundle does not hold, with the ones it does.
    pub fn unknown_pattern(&self, id: &str) -> Unknown {
        Unknown::new(Kind::Pattern, id, self.patterns().map(|p| p.spec.id.as_str()))
    }

    /// `id` as a provider this bundle does not hold, with the ones it does.
    pub fn unknown_provider(&self, id: &str) -> Unknown {
        Unknown::new(Kind::Provider, id, self.providers().map(|p| p.spec.id.as_str()))
    }
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "there is no {} `{}`", self.kind.word(), self.name)
    }
}

/// The name among `known` closest to `name`, if one is close enough to be a likely slip.
///
/// ```
/// assert_eq!(sixfold_core::names::closest("read-olny", ["read-only", "full"]), Some("read-only"));
/// assert_eq!(sixfold_core::names::closest("banana", ["read-only", "full"]), None);
/// ```
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let asked = name.to_lowercase();
    let mut best: Option<(f64, &'a str)> = None;
    for candidate in known {
        let lower = candidate.to_lowercase();
        let mut score = strsim::jaro_winkler(&asked, &lower);
        if strsim::osa_distance(&asked, &lower) <= 1 {
            score = score.max(ONE_EDIT);
        }
        if score >= ALIKE && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODES: [&str; 6] = ["read-only", "ask", "workspace-write", "full", "keep-work", "reviewer"];

    #[test]
    fn slips_find_the_name_meant() {
        for (typed, meant) in [
            ("workspace-wirte", "workspace-write"),
            ("workspace", "workspace-write"),
            ("Workspace-Write", "workspace-write"),
            ("readonly", "read-only"),
            ("read_only", "read-only"),
            ("ful", "full"),
            ("aks", "ask"),
            ("sk", "ask"),
            ("keepwork", "keep-work"),
            ("reveiwer", "reviewer"),
        ] {
            assert_eq!(closest(typed, MODES), Some(meant), "{typed}");
        }
    }

    #[test]
    fn a_far_name_is_offered_nothing() {
        for far in ["zzzz", "banana", "x", "production", "0"] {
            assert_eq!(closest(far, MODES), None, "{far}");
        }
        assert_eq!(closest("anything", std::iter::empty()), None);
    }

    #[test]
    fn the_hint_lists_every_name_and_offers_only_a_close_one() {
        let close = Unknown::new(Kind::Pattern, "solo-agnet", ["solo-agent", "orchestrator"]);
        assert_eq!(close.to_string(), "there is no pattern `solo-agnet`");
        assert_eq!(
            close.hint(),
            "did you mean `solo-agent`? the patterns are `solo-agent`, `orchestrator`"
        );
        let far = Unknown::new(Kind::Provider, "zzz", ["agent-one", "agent-two"]);
        assert_eq!(far.hint(), "the providers are `agent-one`, `agent-two`");
        let none = Unknown::new(Kind::Rule, "r1", Vec::<String>::new());
        assert_eq!(none.hint(), "there are no kept rules");
    }
}
