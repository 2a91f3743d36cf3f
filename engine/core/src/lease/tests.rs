#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::prices::Price;
use super::*;

fn prices() -> Prices {
    let mut p = Prices::default();
    p.models.insert(
        "m".into(),
        Price {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        },
    );
    p
}

fn spent(steps: u64, since: Option<u64>, model: &str, input: u64) -> Spending {
    let mut s = Spending::default();
    let tokens = BTreeMap::from([(
        model.to_string(),
        Tokens {
            input,
            ..Tokens::default()
        },
    )]);
    s.charge(steps, since.unwrap_or(0), &tokens, None);
    s.since = since;
    s
}

fn account(lease: Lease, spent: &Spending) -> Account<'_> {
    Account {
        lease,
        spent,
        carved: Lease::default(),
    }
}

#[test]
fn steps_run_out_at_the_lease_and_not_before() {
    let lease = Lease {
        steps: Some(3),
        ..Lease::default()
    };
    let two = spent(2, Some(100), "m", 0);
    assert_eq!(
        account(lease, &two).check(&prices(), 100),
        None,
        "the third step may run"
    );
    let three = spent(3, Some(100), "m", 0);
    let held = account(lease, &three).check(&prices(), 100).unwrap();
    assert_eq!(held.what, "steps");
    assert!(held.reason.contains("steps ran out (3 of 3"), "{}", held.reason);
}

#[test]
fn time_runs_from_the_first_step() {
    let lease = Lease {
        seconds: Some(60),
        ..Lease::default()
    };
    let s = spent(1, Some(1000), "m", 0);
    assert_eq!(account(lease, &s).check(&prices(), 1059), None);
    assert_eq!(account(lease, &s).check(&prices(), 1060).unwrap().what, "seconds");
    // Before any step, the clock has not started.
    assert_eq!(account(lease, &Spending::default()).check(&prices(), u64::MAX), None);
}

#[test]
fn cents_are_priced_and_unknown_cents_refuse_rather_than_guess() {
    let lease = Lease {
        cents: Some(3),
        ..Lease::default()
    };
    // 0.9 million input tokens at $3/M: 270 cents... too much; 9000 tokens: 2.7 cents.
    let under = spent(1, Some(0), "m", 9000);
    assert_eq!(account(lease, &under).check(&prices(), 0), None);
    let over = spent(1, Some(0), "m", 10_000);
    assert_eq!(account(lease, &over).check(&prices(), 0).unwrap().what, "cents");
    // A model the table does not price: unknown, so refused.
    let unpriced = spent(1, Some(0), "other", 1);
    let held = account(lease, &unpriced).check(&prices(), 0).unwrap();
    assert!(held.reason.contains("no price"), "{}", held.reason);
    // Usage that could not be read: unknown, so refused, whatever the tokens say.
    let mut unread = spent(1, Some(0), "m", 0);
    unread.charge(0, 0, &BTreeMap::new(), Some("no transcript"));
    assert!(account(lease, &unread).check(&prices(), 0).is_some());
    // Without a cents bound, neither matters.
    let steps_only = Lease {
        steps: Some(10),
        ..Lease::default()
    };
    assert_eq!(account(steps_only, &unread).check(&prices(), 0), None);
    assert_eq!(account(steps_only, &unpriced).check(&prices(), 0), None);
}

#[test]
fn a_carve_is_a_share_or_a_fixed_amount_of_what_is_left_and_is_taken_from_the_parent() {
    let lease = Lease {
        steps: Some(100),
        seconds: None,
        cents: Some(50),
    };
    let s = spent(50, Some(0), "m", 0);
    let parent = account(lease, &s);
    let share = Carve {
        share: Some(0.2),
        ..Carve::default()
    };
    let given = parent.carve(&share, &prices(), 0);
    assert_eq!(given.steps, Some(10));
    assert_eq!(given.cents, Some(10));
    assert_eq!(given.seconds, None);
    let fixed = Carve {
        steps: Some(500),
        cents: Some(5),
        ..Carve::default()
    };
    // Never more than is left.
    assert_eq!(parent.carve(&fixed, &prices(), 0).steps, Some(50));
    assert_eq!(parent.carve(&fixed, &prices(), 0).cents, Some(5));
    // What was carved is gone from the parent.
    let after = Account {
        carved: Lease {
            steps: Some(50),
            ..Lease::default()
        },
        ..parent
    };
    assert_eq!(after.check(&prices(), 0).unwrap().what, "steps");
    assert_eq!(parent.check(&prices(), 0), None);
}
