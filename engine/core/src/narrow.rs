//! A repository's own bundle narrows, and widens only once trusted.
//!
//! A project bundle (the `.sixfold/` a repository ships) is written by whoever wrote the
//! repository, not by the user. Until the user trusts its exact content, a step is judged twice:
//! by the layered bundle without the project layer (the shipped bundle, the default mode and
//! pattern) and with it (the project's modes, policies, providers, kept rules and state). The
//! stricter judgement stands, so the project layer can make any judgement stricter and none
//! more permissive, whatever it redefines: a mode replaced by a wider one, an emptied path set, a
//! kept `allow`, a provider that maps a tool to nothing, a state that selects `full`. Where the
//! project layer would have been more permissive, the judgement says what was ignored.
//!
//! This is the partial order of judgements (`Allow < Ask < Refuse`) applied to the two layered
//! results, so it holds for every item a bundle can hold, including ones added later.

use crate::decision::Judgement;

/// The judgement of a step under an untrusted project layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrowed {
    /// The judgement that stands: the stricter of the two.
    pub judgement: Judgement,
    /// What the project layer would have decided, when it was more permissive and so ignored.
    pub ignored: Option<String>,
}

/// The stricter of a step's judgement without the project layer and with it. On a tie the
/// project's judgement stands (it says which of the project's rules decided).
///
/// ```
/// use sixfold_core::decision::{DecidedBy, Decision, Judgement};
/// use sixfold_core::narrow::narrowed;
/// let judged = |decision, mode: &str| Judgement {
///     decision, reason: format!("mode `{mode}` decides"), rules: vec![], mode: mode.into(), by: DecidedBy::Default,
/// };
/// // The project narrows: its refusal stands.
/// let n = narrowed(judged(Decision::Allow, "ask"), judged(Decision::Refuse, "ask"));
/// assert_eq!((n.judgement.decision, n.ignored), (Decision::Refuse, None));
/// // The project would widen (its state says `full`): ignored, and the reason says so.
/// let n = narrowed(judged(Decision::Ask, "ask"), judged(Decision::Allow, "full"));
/// assert_eq!(n.judgement.decision, Decision::Ask);
/// assert!(n.judgement.reason.contains("not trusted"));
/// assert!(n.ignored.unwrap().contains("`full`"));
/// ```
pub fn narrowed(without_project: Judgement, with_project: Judgement) -> Narrowed {
    // INVARIANT (fail closed): the project layer never makes a judgement more permissive until
    // its content is trusted.
    if with_project.decision >= without_project.decision {
        return Narrowed {
            judgement: with_project,
            ignored: None,
        };
    }
    let ignored = format!(
        "the project's `.sixfold/` would have decided `{}` under mode `{}` ({})",
        with_project.decision, with_project.mode, with_project.reason
    );
    let mut judgement = without_project;
    judgement.reason = format!(
        "{}; {ignored}, but its content is not trusted on this machine, so only what narrows counts (`sixfold trust` after reviewing it)",
        judgement.reason
    );
    Narrowed {
        judgement,
        ignored: Some(ignored),
    }
}
