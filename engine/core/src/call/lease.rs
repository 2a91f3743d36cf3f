//! The lease of one call: which account it is charged to (the session, or the carve of the
//! helper it comes from), whether that account has anything left, and what a helper it spawns
//! gets. Checked before the mode's judgement counts: a spent lease refuses whatever the mode says.

use super::{Leasing, Under};
use crate::bundle::Bundle;
use crate::decision::{DecidedBy, Decision, Judgement};
use crate::lease::{Account, Held, Lease, Prices};

/// What the lease says of one call under one bundle.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Leased {
    /// Why it is held back, where its account is spent.
    pub held: Option<Held>,
    /// The carve it is charged to (the spawning call's id); `None`: the session.
    pub carve: Option<String>,
    /// The lease its account runs under.
    pub lease: Lease,
    /// The cents its account spent so far; `None` where they cannot be counted.
    pub cents: Option<f64>,
    /// What a helper it spawns gets, where the pattern carves and a lease is in force.
    pub gives: Option<Lease>,
}

impl Leased {
    /// The stricter of two bundles' answers (the untrusted project's layer only narrows).
    pub(super) fn narrowed(self, other: Leased) -> Leased {
        Leased {
            held: self.held.or(other.held),
            carve: self.carve.or(other.carve),
            lease: self.lease.narrowed(&other.lease),
            cents: self.cents.or(other.cents),
            gives: match (self.gives, other.gives) {
                (Some(a), Some(b)) => Some(a.narrowed(&b)),
                (a, b) => a.or(b),
            },
        }
    }

    /// The refusal a held step gets.
    pub(super) fn refusal(&self, mode: &str) -> Option<Judgement> {
        let held = self.held.as_ref()?;
        let whose = match &self.carve {
            Some(id) => format!(" (the carve of the helper spawned by `{id}`)"),
            None => String::new(),
        };
        Some(Judgement {
            decision: Decision::Refuse,
            reason: format!("{}{whose}; see `sixfold lease show`", held.reason),
            rules: vec![format!("lease/{}", held.what)],
            mode: mode.to_string(),
            by: DecidedBy::Lease,
        })
    }
}

/// The prices a bundle's policies hold (`[settings.prices]`).
pub fn prices(bundle: &Bundle) -> Prices {
    Prices::of(bundle.policies().map(|p| (p.id.as_str(), &p.settings)))
}

/// The lease in force under a mode (and every mode it extends) and a pattern.
pub fn in_force(bundle: &Bundle, mode: &str, pattern: &str) -> Lease {
    let mut lease = bundle.pattern(pattern).and_then(|p| p.spec.lease).unwrap_or_default();
    let mut next = Some(mode.to_string());
    let mut seen = Vec::new();
    while let Some(id) = next.take() {
        if seen.contains(&id) {
            break;
        }
        if let Some(m) = bundle.mode(&id) {
            lease = lease.narrowed(&m.lease);
            next = m.extends.clone();
        }
        seen.push(id);
    }
    lease
}

/// Whether the account a call is charged to (a helper's carve, else the session) runs under a
/// lease that bounds `cents`: only then is the model's usage read from the agent CLI's record and
/// priced, which a layer would otherwise pay for on every call. Usage left unread meanwhile is not
/// lost: the record's read offset stays where it was, and the first call that needs the cents
/// reads on from there.
pub fn counts_cents(under: Under<'_>, leasing: &Leasing<'_>) -> bool {
    match leasing
        .agent
        .and_then(|(agent, helper)| leasing.so_far.carve_of(agent, helper))
    {
        Some(carve) => carve.lease.cents.is_some(),
        None => in_force(under.bundle, under.mode, under.pattern)
            .narrowed(&leasing.set)
            .cents
            .is_some(),
    }
}

/// The lease of a call under one bundle; `spawns`: the call starts a helper.
pub(super) fn leased(under: Under<'_>, leasing: &Leasing<'_>, spawns: bool) -> Leased {
    let so_far = leasing.so_far;
    let session = in_force(under.bundle, under.mode, under.pattern).narrowed(&leasing.set);
    let carved = leasing.agent.and_then(|(agent, helper)| so_far.carve_of(agent, helper));
    let account = match carved {
        Some(c) => Account {
            lease: c.lease,
            spent: &c.spent,
            carved: Lease::default(),
        },
        None => Account {
            lease: session,
            spent: &so_far.spent,
            carved: so_far.carved(),
        },
    };
    // Only a lease with `cents` turns tokens into cents: without one the price table is not read.
    let prices = match account.lease.cents {
        Some(_) => prices(under.bundle),
        None => Prices::default(),
    };
    let held = match account.lease.is_open() {
        true => None,
        false => account.check(&prices, leasing.now),
    };
    // A helper's own helpers are not carved again: its calls are charged to its carve.
    let gives = match (
        spawns,
        carved,
        under.bundle.pattern(under.pattern).and_then(|p| p.spec.carve),
    ) {
        (true, None, Some(carve)) if !session.is_open() => Some(account.carve(&carve, &prices, leasing.now)),
        _ => None,
    };
    Leased {
        held,
        carve: carved.map(|c| c.id.clone()),
        lease: account.lease,
        cents: account.lease.cents.and_then(|_| account.spent.cents(&prices).ok()),
        gives,
    }
}

/// The record's lease events for a call judged by an entry point that reads no usage of its own
/// (the MCP proxy, the governed tools): the step charged when it runs, `held` when the lease
/// refused it. `unread` says why the model's usage is not known, where nothing in the session
/// ever read it (a cents lease then refuses rather than guess).
pub fn events(judged: &super::Judged, at: u64, unread: Option<&str>) -> Vec<crate::trace::Event> {
    use crate::trace::Event;
    let Some(leased) = &judged.leased else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let runs = judged.judgement.decision != Decision::Refuse;
    if runs {
        out.push(Event::Charged {
            carve: leased.carve.clone(),
            agent: None,
            at,
            steps: 1,
            tokens: Default::default(),
            unread: unread.map(str::to_string),
            read: None,
            lease: (!leased.lease.is_open()).then_some(leased.lease),
            cents: leased.cents,
        });
    }
    if let (Some(held), DecidedBy::Lease) = (&leased.held, judged.judgement.by) {
        out.push(Event::Held {
            id: judged.step.id.clone(),
            what: held.what.clone(),
            reason: held.reason.clone(),
            carve: leased.carve.clone(),
        });
    }
    out
}

/// What an entry point that reads no usage of its own (the MCP proxy, the governed tools) says
/// of the model's usage: unknown, where nothing in the session ever read any; folded into
/// `so_far` so the call's own check already counts it.
pub fn unread_by(so_far: &mut crate::trace::SoFar, who: &str) -> Option<String> {
    if !so_far.read.is_empty() {
        return None;
    }
    let why = format!("{who} cannot read the model's usage, and nothing else in this session did");
    so_far.spent.charge(0, 0, &Default::default(), Some(&why));
    Some(why)
}

#[cfg(test)]
mod tests;
