//! Leases: the budget a run may spend — steps, seconds, cents — checked before a step is
//! judged and charged when it runs, and carved from a parent for the helpers it spawns.
//!
//! A lease is data: a mode or a pattern declares one (`[lease]`), a project or a session sets a
//! narrower one (`sixfold lease set`), and the lease in force is the field-wise least of them,
//! so nothing but the shipped files can widen it. What was spent is folded from the session's
//! record (`charged` events, folded into the session's `SoFar`); tokens are kept per model and turned
//! into cents only here, with the bundle's price table ([`prices`]), so a project that is not
//! trusted cannot make a run cheaper by pricing it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub mod prices;
pub mod usage;

pub use prices::Prices;

/// A budget: each field optional (absent: no bound on it).
///
/// ```
/// use sixfold_core::lease::Lease;
/// let mode = Lease { steps: Some(300), seconds: Some(3600), cents: None };
/// let project = Lease { steps: Some(500), seconds: None, cents: Some(500) };
/// // A project narrows only: the least of each field stands.
/// assert_eq!(mode.narrowed(&project), Lease { steps: Some(300), seconds: Some(3600), cents: Some(500) });
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Lease {
    /// Tool calls that may run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// Seconds from the first step after which no step runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
    /// Cents the model's tokens may cost (priced by `policies/prices.toml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cents: Option<u64>,
}

impl Lease {
    /// The least of each field: `other` can only narrow this lease.
    pub fn narrowed(&self, other: &Lease) -> Lease {
        let least = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Lease {
            steps: least(self.steps, other.steps),
            seconds: least(self.seconds, other.seconds),
            cents: least(self.cents, other.cents),
        }
    }

    /// Whether it bounds nothing.
    pub fn is_open(&self) -> bool {
        self.steps.is_none() && self.seconds.is_none() && self.cents.is_none()
    }
}

/// What a pattern gives a helper it spawns, taken from what its parent has left: a share of it,
/// or fixed amounts (each no more than what is left).
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Carve {
    /// The share of what is left, between 0 and 1 (`0.2`: a fifth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Steps given outright.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<u64>,
    /// Seconds given outright.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u64>,
    /// Cents given outright.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cents: Option<u64>,
}

/// Tokens one model was billed for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    /// Input tokens (not read from the cache).
    #[serde(default)]
    pub input: u64,
    /// Output tokens.
    #[serde(default)]
    pub output: u64,
    /// Input tokens read from the cache.
    #[serde(default)]
    pub cache_read: u64,
    /// Input tokens written to the cache.
    #[serde(default)]
    pub cache_write: u64,
}

impl Tokens {
    /// Both added (saturating: a record cannot overflow a count into a small one).
    pub fn plus(&self, other: &Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            cache_write: self.cache_write.saturating_add(other.cache_write),
        }
    }

    /// What `self` has beyond `before` (a count that went down adds nothing).
    pub fn beyond(&self, before: &Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_sub(before.input),
            output: self.output.saturating_sub(before.output),
            cache_read: self.cache_read.saturating_sub(before.cache_read),
            cache_write: self.cache_write.saturating_sub(before.cache_write),
        }
    }

    /// Whether it counts nothing.
    pub fn is_zero(&self) -> bool {
        *self == Tokens::default()
    }
}

/// What one account (the session, or one helper's carve) spent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spending {
    /// Steps charged.
    #[serde(default)]
    pub steps: u64,
    /// When the first step was charged (seconds since the Unix epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    /// Tokens, per model id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tokens: BTreeMap<String, Tokens>,
    /// Why the model's usage could not be read, where it once could not: from then on the cents
    /// spent are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
}

impl Spending {
    /// One charge folded in.
    pub fn charge(&mut self, steps: u64, at: u64, tokens: &BTreeMap<String, Tokens>, unread: Option<&str>) {
        self.steps = self.steps.saturating_add(steps);
        if steps > 0 && self.since.is_none() {
            self.since = Some(at);
        }
        for (model, t) in tokens {
            let slot = self.tokens.entry(model.clone()).or_default();
            *slot = slot.plus(t);
        }
        if let (None, Some(why)) = (&self.unread, unread) {
            self.unread = Some(why.to_string());
        }
    }

    /// The cents spent, or why they are unknown (usage unread, a model with no price).
    pub fn cents(&self, prices: &Prices) -> Result<f64, String> {
        // INVARIANT (fail closed): usage that could not be read is never taken as nothing spent.
        if let Some(why) = &self.unread {
            return Err(why.clone());
        }
        let mut cents = 0.0;
        for (model, tokens) in &self.tokens {
            cents += prices.cents(model, tokens)?;
        }
        Ok(cents)
    }
}

/// What is left of a lease: per field, `None` where the lease does not bound it; cents as
/// `Err` where what was spent is unknown.
#[derive(Debug, Clone, PartialEq)]
pub struct Left {
    /// Steps left.
    pub steps: Option<u64>,
    /// Seconds left.
    pub seconds: Option<u64>,
    /// Cents left, or why that is unknown.
    pub cents: Option<Result<f64, String>>,
}

/// The lease one account runs under, what it spent and what was carved from it for helpers.
#[derive(Debug, Clone, Copy)]
pub struct Account<'a> {
    /// Its lease.
    pub lease: Lease,
    /// What it spent itself.
    pub spent: &'a Spending,
    /// What it gave its helpers (their carves, taken from it whether they spend it or not).
    pub carved: Lease,
}

impl Account<'_> {
    /// What is left at `now` (seconds since the Unix epoch).
    pub fn left(&self, prices: &Prices, now: u64) -> Left {
        let carved = |c: Option<u64>| c.unwrap_or(0);
        Left {
            steps: self.lease.steps.map(|s| {
                s.saturating_sub(self.spent.steps)
                    .saturating_sub(carved(self.carved.steps))
            }),
            seconds: self.lease.seconds.map(|s| {
                let used = self.spent.since.map_or(0, |since| now.saturating_sub(since));
                s.saturating_sub(used)
            }),
            cents: self.lease.cents.map(|c| {
                self.spent
                    .cents(prices)
                    .map(|spent| c as f64 - spent - carved(self.carved.cents) as f64)
            }),
        }
    }

    /// Why the next step may not run: what ran out, named; `None` while the lease holds.
    pub fn check(&self, prices: &Prices, now: u64) -> Option<Held> {
        let left = self.left(prices, now);
        if let (Some(0), Some(lease)) = (left.steps, self.lease.steps) {
            return Some(Held {
                what: "steps".into(),
                reason: format!(
                    "the lease is spent: steps ran out ({} of {lease} taken{})",
                    self.spent.steps,
                    carved_note(self.carved.steps)
                ),
            });
        }
        if let (Some(0), Some(lease)) = (left.seconds, self.lease.seconds) {
            return Some(Held {
                what: "seconds".into(),
                reason: format!("the lease is spent: time ran out ({lease} seconds since the first step)"),
            });
        }
        match (left.cents, self.lease.cents) {
            (Some(Err(why)), Some(lease)) => Some(Held {
                what: "cents".into(),
                reason: format!(
                    "the lease's cents cannot be counted, so the step is refused rather than guessed: {why} (lease {lease} cents)"
                ),
            }),
            (Some(Ok(left)), Some(lease)) if left <= 0.0 => Some(Held {
                what: "cents".into(),
                reason: format!(
                    "the lease is spent: cents ran out ({:.2} of {lease} spent{})",
                    lease as f64 - left - self.carved.cents.unwrap_or(0) as f64,
                    carved_note(self.carved.cents)
                ),
            }),
            _ => None,
        }
    }

    /// What a helper gets under `carve`: a share or fixed amounts of what is left, never more
    /// than is left; a field the parent's lease does not bound is not bounded for the helper
    /// unless the carve fixes it. Cents unknown give the helper none.
    pub fn carve(&self, carve: &Carve, prices: &Prices, now: u64) -> Lease {
        let left = self.left(prices, now);
        let cents_left = left
            .cents
            .map(|c| c.map_or(0, |c| if c > 0.0 { c.floor() as u64 } else { 0 }));
        let one = |left: Option<u64>, fixed: Option<u64>| -> Option<u64> {
            let shared = match (carve.share, left) {
                (Some(share), Some(left)) => Some((left as f64 * share.clamp(0.0, 1.0)).floor() as u64),
                _ => None,
            };
            let given = match (shared, fixed) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            match (given, left) {
                (Some(g), Some(l)) => Some(g.min(l)),
                (Some(g), None) => Some(g),
                (None, l) => l,
            }
        };
        Lease {
            steps: one(left.steps, carve.steps),
            seconds: one(left.seconds, carve.seconds),
            cents: one(cents_left, carve.cents),
        }
    }
}

fn carved_note(carved: Option<u64>) -> String {
    match carved {
        Some(c) if c > 0 => format!(", {c} carved for helpers"),
        _ => String::new(),
    }
}

/// A step held back by its lease: what ran out (`steps`, `seconds`, `cents`) and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// What ran out.
    pub what: String,
    /// The reason the agent is given.
    pub reason: String,
}

/// A helper's carve, as the record keeps it: what it got, which spawn made it, which agent
/// claimed it and what that agent spent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Carved {
    /// The spawning call's id.
    pub id: String,
    /// The helper asked for (the sub-agent's type).
    #[serde(default)]
    pub helper: String,
    /// What it got.
    pub lease: Lease,
    /// The agent id the agent CLI gave the helper's calls, once one claimed the carve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// What it spent.
    #[serde(default)]
    pub spent: Spending,
}

/// What a recorded run charged, per account (`session`, or a helper's carve by the spawning
/// call's id), as the `within-lease` row reads it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The accounts charged.
    pub accounts: BTreeMap<String, RunAccount>,
    /// Steps held back by a spent lease.
    pub held: u64,
}

/// One account of a recorded run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunAccount {
    /// The lease it was last charged under.
    pub lease: Option<Lease>,
    /// Steps charged.
    pub steps: u64,
    /// Seconds from its first step to its last.
    pub span: u64,
    /// The most cents it had spent when a step of it was charged (what the check saw).
    pub cents_at_step: Option<f64>,
    /// Whether a step was charged while its cents could not be counted.
    pub cents_unknown: bool,
    /// Cents spent at its last charge.
    pub cents: Option<f64>,
    #[serde(skip)]
    first: Option<u64>,
}

impl Run {
    /// One `charged` event folded in.
    pub fn charge(&mut self, carve: Option<&str>, at: u64, steps: u64, lease: Option<Lease>, cents: Option<f64>) {
        let account = self.accounts.entry(carve.unwrap_or("session").to_string()).or_default();
        if lease.is_some() {
            account.lease = lease;
        }
        account.cents = cents;
        if steps == 0 {
            return;
        }
        account.steps = account.steps.saturating_add(steps);
        let first = *account.first.get_or_insert(at);
        account.span = account.span.max(at.saturating_sub(first));
        match cents {
            Some(c) => account.cents_at_step = Some(account.cents_at_step.map_or(c, |m| m.max(c))),
            None => account.cents_unknown = true,
        }
    }
}

#[cfg(test)]
mod tests;
