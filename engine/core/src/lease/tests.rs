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

#[test]
fn a_price_table_is_read_from_a_policys_settings_and_a_broken_one_prices_nothing() {
    let table = |text: &str| {
        let (bundle, diags) = crate::Bundle::load(&[crate::bundle::BundleSource::from_files(
            "t",
            [("policies/prices.toml", text)],
        )]);
        assert!(diags.is_empty(), "{diags:?}");
        Prices::of(&bundle)
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

#[test]
fn the_shipped_price_table_prices_the_models_the_tests_use() {
    let (bundle, _) = crate::Bundle::load(&[crate::shipped::source()]);
    let prices = Prices::of(&bundle);
    assert!(prices.broken.is_none(), "{:?}", prices.broken);
    assert!(!prices.dates.is_empty());
    for model in ["claude-sonnet-4-5", "gpt-5"] {
        assert!(prices.cents(model, &Tokens::default()).is_ok(), "{model}");
    }
}

/// Both shipped providers' `[usage]` read their records: Claude Code's transcript (one message
/// on several lines, counted once) and Codex's rollout (totals so far, cached input priced apart).
#[test]
fn the_shipped_usage_maps_read_each_agent_clis_record_incrementally() {
    let (bundle, _) = crate::Bundle::load(&[crate::shipped::source()]);
    let spec = |id: &str| bundle.provider(id).unwrap().spec.usage.clone().unwrap();
    let claude = spec("claude-code");
    let line = |id: &str, output: u64| {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"claude-sonnet-4-5\",\"usage\":{{\"input_tokens\":100,\"output_tokens\":{output},\"cache_read_input_tokens\":7,\"cache_creation_input_tokens\":3}}}}}}\n"
        )
    };
    let mut cursor = usage::Cursor::default();
    let first = format!("{}{}", line("a", 1), line("a", 20));
    let read = claude.read(&mut cursor, first.as_bytes());
    let t = read.tokens["claude-sonnet-4-5"];
    assert_eq!((t.input, t.output, t.cache_read, t.cache_write), (100, 20, 7, 3));
    // The next chunk starts where the last stopped; the same message again adds nothing.
    let next = format!("{}{}", line("a", 20), line("b", 5));
    let read = claude.read(&mut cursor, next.as_bytes());
    let t = read.tokens["claude-sonnet-4-5"];
    assert_eq!((t.input, t.output), (100, 5));
    assert_eq!(cursor.offset as usize, first.len() + next.len());

    let codex = spec("codex");
    let mut cursor = usage::Cursor::default();
    let rollout = concat!(
        "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5\"}}\n",
        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":1000,\"cached_input_tokens\":400,\"output_tokens\":50}}}}\n",
        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":1500,\"cached_input_tokens\":600,\"output_tokens\":80}}}}\n",
    );
    let read = codex.read(&mut cursor, rollout.as_bytes());
    let t = read.tokens["gpt-5"];
    // Totals: the last one counts, its cached input apart from the rest.
    assert_eq!((t.input, t.cache_read, t.output), (900, 600, 80));
    // A usage line before any model is named leaves the cents unknown.
    let mut cursor = usage::Cursor::default();
    let read = codex.read(
        &mut cursor,
        rollout.lines().nth(1).map(|l| format!("{l}\n")).unwrap().as_bytes(),
    );
    assert!(read.unread.is_some());
    assert!(read.tokens.is_empty());
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
    let in_force = crate::call::in_force;
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
