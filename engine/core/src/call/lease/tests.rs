#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::lease::{Lease, Tokens};

#[test]
fn a_price_table_is_read_from_a_policys_settings_and_a_broken_one_prices_nothing() {
    let table = |text: &str| {
        let (bundle, diags) = crate::Bundle::load(&[crate::bundle::BundleSource::from_files(
            "t",
            [("policies/prices.toml", text)],
        )]);
        assert!(diags.is_empty(), "{diags:?}");
        super::prices(&bundle)
    };
    let ok = table("id = \"prices\"\n[settings.prices]\ndate = \"2026-12-01\"\n[settings.prices.models.m]\ninput = 3\noutput = 15\ncache_read = 0.3\ncache_write = 3.75\n");
    assert_eq!(
        ok.cents(
            "m",
            &Tokens {
                input: 1_000_000,
                ..Tokens::default()
            }
        ),
        Ok(300.0)
    );
    let broken =
        table("id = \"prices\"\n[settings.prices]\ndate = \"2026-12-01\"\n[settings.prices.models.m]\ninput = 3\n");
    assert!(broken.cents("m", &Tokens::default()).is_err());
}

/// The lease in force is the least of the mode's (and every mode it extends), the pattern's and
/// what was set: a mode that extends another, or a set lease, only narrows.
#[test]
fn a_lease_is_declared_by_modes_and_patterns_and_only_narrowed() {
    let overlay = crate::bundle::BundleSource::from_files(
        "t",
        [
            (
                "modes/tight.toml",
                "id = \"tight\"\nextends = \"workspace-write\"\n[lease]\nsteps = 10\ncents = 5\n",
            ),
            (
                "modes/looser.toml",
                "id = \"looser\"\nextends = \"tight\"\n[lease]\nsteps = 50\nseconds = 600\n",
            ),
            (
                "patterns/budgeted.toml",
                "id = \"budgeted\"\nmeta_tools = [\"spawn\", \"done\"]\n[lease]\nseconds = 300\n[carve]\nshare = 0.5\n",
            ),
        ],
    );
    let (bundle, diags) = crate::Bundle::load(&[crate::shipped::source(), overlay]);
    assert!(diags.is_empty(), "{diags:?}");
    let in_force = super::in_force;
    assert_eq!(
        in_force(&bundle, "tight", "single"),
        Lease {
            steps: Some(10),
            seconds: None,
            cents: Some(5)
        }
    );
    // `looser` cannot widen what it extends: its 50 steps stay 10.
    assert_eq!(
        in_force(&bundle, "looser", "budgeted"),
        Lease {
            steps: Some(10),
            seconds: Some(300),
            cents: Some(5)
        }
    );
    // The shipped modes declare none: nothing is bounded unless someone says so.
    assert!(in_force(&bundle, "workspace-write", "single").is_open());
    let set = Lease {
        steps: Some(3),
        seconds: Some(9999),
        cents: None,
    };
    assert_eq!(
        in_force(&bundle, "tight", "single").narrowed(&set),
        Lease {
            steps: Some(3),
            seconds: Some(9999),
            cents: Some(5)
        }
    );
}

/// A judgement's load leaves the price table out when asked to (no lease with cents applies), and
/// reads it by default; whether a call's account counts cents follows the lease in force.
#[test]
fn the_price_table_is_loaded_only_when_asked_and_cents_are_counted_only_under_a_cents_lease() {
    let sources = [crate::shipped::source()];
    let needs = crate::bundle::Needs::mode("workspace-write").with_pattern("single");
    let (with, diags) = crate::Bundle::load_for(&sources, &needs);
    assert!(diags.is_empty(), "{diags:?}");
    assert!(!super::prices(&with).dates.is_empty());
    let (without, diags) = crate::Bundle::load_for(&sources, &needs.with_prices(false));
    assert!(diags.is_empty(), "{diags:?}");
    assert!(super::prices(&without).dates.is_empty());
    // Everything else a judgement needs is there all the same.
    assert!(without.mode("workspace-write").is_some() && without.pattern("single").is_some());

    let so_far = crate::trace::SoFar::default();
    let under = super::Under {
        bundle: &without,
        mode: "workspace-write",
        pattern: "single",
    };
    let leasing = |set: Lease| super::Leasing {
        so_far: &so_far,
        set,
        now: 0,
        agent: None,
    };
    let steps = Lease {
        steps: Some(3),
        ..Lease::default()
    };
    assert!(!super::counts_cents(under, &leasing(Lease::default())));
    assert!(!super::counts_cents(under, &leasing(steps)));
    let cents = Lease {
        cents: Some(5),
        ..steps
    };
    assert!(super::counts_cents(under, &leasing(cents)));
    // A steps lease is checked without prices, and notes no cents.
    let leased = super::leased(under, &leasing(steps), false);
    assert_eq!((leased.held, leased.cents), (None, None));
}
