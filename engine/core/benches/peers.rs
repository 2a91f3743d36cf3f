//! sixfold's judgement beside two peer policy engines, Cedar (`cedar-policy`) and OPA's Rego
//! (`regorus`), in one process, on the same ten mixed `workspace-write` steps (`mixed::STEPS`).
//!
//! The peers cannot resolve paths or tell a workspace from the temp dir, so each is handed the
//! places sixfold resolved (class, absolute path, path below the root, path below home, last
//! name) and judges them with a hand-written equivalent of `workspace-write` and the three
//! policies it includes. Before anything is timed every engine's decision on every step is
//! checked against sixfold's: the cases are the same, and so are the answers.
//!
//! Cedar has no "ask": its policies are `forbid`s whose id says `ask-` or `refuse-`, and a step
//! is one request per place it touches plus one for its yes/no fields; the strictest answer wins.
//! Rego judges a step in one evaluation of `data.sixfold.decision`.
//!
//! Run with `cargo bench -p sixfold-core --features peers --bench peers`. The peers are behind
//! the `peers` feature so that nothing else builds them; `docs/performance.md` has the figures.

// Benches are test-like code: a setup that fails should stop the run loudly.
#![allow(clippy::expect_used, clippy::unwrap_used)]
#![allow(missing_docs)]

use cedar_policy::{
    Authorizer, Context as CedarContext, Entities, EntityUid, Policy, PolicyId, PolicySet, Request,
    RestrictedExpression,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use sixfold_core::bundle::Bundle;
use sixfold_core::decision::Decision;
use sixfold_core::effects::{EffectProfile, Effects, Touch};
use sixfold_core::judge::Context;
use sixfold_core::scope::Place;
use sixfold_core::shipped;
use std::hint::black_box;
use std::str::FromStr;
use std::time::Duration;

mod mixed;

/// What a peer is told about one place a step touches.
struct PlaceFacts {
    class: &'static str,
    path: String,
    rel: String,
    in_home: bool,
    home_rel: String,
    name: String,
}

fn facts(touch: &Touch, ctx: &Context) -> PlaceFacts {
    let path = touch.path.as_ref();
    let home_rel = path.and_then(|p| ctx.workspace.home().and_then(|h| p.strip_prefix(h).ok()));
    PlaceFacts {
        class: touch.place.class(),
        path: path
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "*".into()),
        rel: match &touch.place {
            Place::Root { relative, .. } => relative.clone(),
            _ => String::new(),
        },
        in_home: home_rel.is_some(),
        home_rel: home_rel.map(|r| r.to_string_lossy().into_owned()).unwrap_or_default(),
        name: path
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

// ---- Cedar ----

/// (id, text): `refuse-…` and `ask-…` forbids over one place (`read`/`write`) or the step's
/// yes/no fields (`step`), and a permit for everything else (the mode's default).
const CEDAR: [(&str, &str); 9] = [
    ("allow-default", "permit (principal, action, resource);"),
    (
        "refuse-reads-secret",
        r#"forbid (principal, action == Action::"read", resource) when {
  (context.in_home && ([".ssh", ".aws", ".gnupg", ".kube/config", ".docker/config.json", ".netrc",
    ".git-credentials", ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml",
    ".config/gh/hosts.yml", ".claude/.credentials.json", ".codex/auth.json"].contains(context.home_rel)
    || context.home_rel like ".ssh/*" || context.home_rel like ".aws/*" || context.home_rel like ".gnupg/*"
    || context.home_rel like ".config/gcloud/*" || context.home_rel like ".azure/*"))
  || context.name like ".env*" || [".netrc", ".git-credentials", "credentials.json"].contains(context.name)
  || context.name like "*.pem" || context.name like "*.p12" || context.name like "id_rsa*"
  || context.name like "id_ecdsa*" || context.name like "id_ed25519*"
};"#,
    ),
    (
        "refuse-writes-protected",
        r#"forbid (principal, action == Action::"write", resource) when {
  context.class == "workspace" && (
    [".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir", ".git/info",
     ".git/objects/info/alternates", ".git/worktrees", ".sixfold", ".claude", ".codex", ".opencode",
     "opencode.json", ".mcp.json"].contains(context.rel)
    || context.rel like ".git/hooks/*" || context.rel like ".git/info/*" || context.rel like ".git/modules/*/config"
    || context.rel like ".git/modules/*/hooks" || context.rel like ".git/modules/*/hooks/*"
    || context.rel like ".git/worktrees/*" || context.rel like ".sixfold/*" || context.rel like "*/.sixfold"
    || context.rel like "*/.sixfold/*" || context.rel like ".claude/*" || context.rel like ".codex/*"
    || context.rel like ".opencode/*")
};"#,
    ),
    (
        "ask-reads-outside",
        r#"forbid (principal, action == Action::"read", resource) when { context.class == "outside" || context.class == "unknown" };"#,
    ),
    (
        "refuse-writes-outside",
        r#"forbid (principal, action == Action::"write", resource) when { context.class == "outside" };"#,
    ),
    (
        "ask-writes-unknown-uncontained",
        r#"forbid (principal, action == Action::"write", resource) when { context.class == "unknown" && !context.contained };"#,
    ),
    (
        "ask-writes-covering-protected-uncontained",
        r#"forbid (principal, action == Action::"write", resource) when {
  !context.contained && context.class == "workspace"
  && ["", ".git", ".git/modules", ".git/objects", ".git/objects/info"].contains(context.rel)
};"#,
    ),
    (
        "refuse-reaches",
        r#"forbid (principal, action == Action::"step", resource) when { context.reaches };"#,
    ),
    (
        "ask-costs",
        r#"forbid (principal, action == Action::"step", resource) when { context.costs };"#,
    ),
];

struct Cedar {
    policies: PolicySet,
    entities: Entities,
    authorizer: Authorizer,
    principal: EntityUid,
    resource: EntityUid,
    read: EntityUid,
    write: EntityUid,
    step: EntityUid,
}

impl Cedar {
    fn new() -> Cedar {
        let mut policies = PolicySet::new();
        for (id, text) in CEDAR {
            policies
                .add(Policy::parse(Some(PolicyId::new(id)), text).expect("cedar policy"))
                .expect("cedar policy set");
        }
        let uid = |s: &str| EntityUid::from_str(s).expect("entity uid");
        Cedar {
            policies,
            entities: Entities::empty(),
            authorizer: Authorizer::new(),
            principal: uid(r#"Agent::"agent""#),
            resource: uid(r#"Step::"step""#),
            read: uid(r#"Action::"read""#),
            write: uid(r#"Action::"write""#),
            step: uid(r#"Action::"step""#),
        }
    }

    /// One step's requests: one per place, one for its yes/no fields.
    fn requests(&self, effects: &Effects, ctx: &Context) -> Vec<Request> {
        let flags = effects.flags;
        let request = |action: &EntityUid, pairs: Vec<(String, RestrictedExpression)>| {
            let context = CedarContext::from_pairs(pairs).expect("cedar context");
            Request::new(
                self.principal.clone(),
                action.clone(),
                self.resource.clone(),
                context,
                None,
            )
            .expect("request")
        };
        let place = |t: &Touch| {
            let f = facts(t, ctx);
            vec![
                (
                    "class".to_string(),
                    RestrictedExpression::new_string(f.class.to_string()),
                ),
                ("path".to_string(), RestrictedExpression::new_string(f.path)),
                ("rel".to_string(), RestrictedExpression::new_string(f.rel)),
                ("in_home".to_string(), RestrictedExpression::new_bool(f.in_home)),
                ("home_rel".to_string(), RestrictedExpression::new_string(f.home_rel)),
                ("name".to_string(), RestrictedExpression::new_string(f.name)),
                ("contained".to_string(), RestrictedExpression::new_bool(flags.contained)),
            ]
        };
        let mut out = vec![request(
            &self.step,
            vec![
                ("reaches".to_string(), RestrictedExpression::new_bool(flags.reaches)),
                ("costs".to_string(), RestrictedExpression::new_bool(flags.costs)),
                (
                    "reversible".to_string(),
                    RestrictedExpression::new_bool(flags.reversible),
                ),
                ("contained".to_string(), RestrictedExpression::new_bool(flags.contained)),
            ],
        )];
        out.extend(effects.read_places.iter().map(|t| request(&self.read, place(t))));
        out.extend(effects.write_places.iter().map(|t| request(&self.write, place(t))));
        out
    }

    /// The strictest answer over a step's requests.
    fn decide(&self, requests: &[Request]) -> Decision {
        let mut decision = Decision::Allow;
        for r in requests {
            let response = self.authorizer.is_authorized(r, &self.policies, &self.entities);
            for id in response.diagnostics().reason() {
                let id = id.to_string();
                if id.starts_with("refuse-") {
                    decision = Decision::Refuse;
                } else if id.starts_with("ask-") {
                    decision = decision.max(Decision::Ask);
                }
            }
        }
        decision
    }
}

// ---- Rego (regorus) ----

const REGO: &str = r#"
package sixfold

import rego.v1

secret_home := [".ssh", ".ssh/**", ".aws", ".aws/**", ".gnupg", ".gnupg/**", ".config/gcloud/**",
  ".azure/**", ".kube/config", ".docker/config.json", ".netrc", ".git-credentials", ".npmrc",
  ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".config/gh/hosts.yml",
  ".claude/.credentials.json", ".codex/auth.json"]

secret_anywhere := ["**/.env*", "**/.netrc", "**/.git-credentials", "**/credentials.json", "**/*.pem",
  "**/*.p12", "**/id_rsa*", "**/id_ecdsa*", "**/id_ed25519*"]

protected := [".git/hooks", ".git/hooks/**", ".git/config", ".git/config.worktree", ".git/commondir",
  ".git/info", ".git/info/**", ".git/objects/info/alternates", ".git/modules/*/config",
  ".git/modules/*/hooks", ".git/modules/*/hooks/**", ".git/worktrees", ".git/worktrees/**",
  ".sixfold", ".sixfold/**", "**/.sixfold", "**/.sixfold/**", ".claude", ".claude/**", ".codex",
  ".codex/**", ".opencode", ".opencode/**", "opencode.json", ".mcp.json"]

covering := {"", ".git", ".git/modules", ".git/objects", ".git/objects/info"}

refuse contains "reads-secret" if {
  some t in input.reads
  t.in_home
  some g in secret_home
  glob.match(g, ["/"], t.home_rel)
}

refuse contains "reads-secret" if {
  some t in input.reads
  t.class != "unknown"
  some g in secret_anywhere
  glob.match(g, ["/"], t.path)
}

refuse contains "writes-protected" if {
  some t in input.writes
  t.class == "workspace"
  some g in protected
  glob.match(g, ["/"], t.rel)
}

ask contains "reads-outside" if {
  some t in input.reads
  t.class in {"outside", "unknown"}
}

refuse contains "writes-outside" if {
  some t in input.writes
  t.class == "outside"
}

ask contains "writes-unknown-uncontained" if {
  not input.contained
  some t in input.writes
  t.class == "unknown"
}

ask contains "writes-covering-protected-uncontained" if {
  not input.contained
  some t in input.writes
  t.class == "workspace"
  t.rel in covering
}

refuse contains "reaches" if input.reaches

ask contains "costs" if input.costs

decision := "refuse" if {
  count(refuse) > 0
} else := "ask" if {
  count(ask) > 0
} else := "allow"
"#;

fn rego_input(effects: &Effects, ctx: &Context) -> regorus::Value {
    let places = |touches: &[Touch]| -> Vec<serde_json::Value> {
        touches
            .iter()
            .map(|t| {
                let f = facts(t, ctx);
                serde_json::json!({
                    "class": f.class, "path": f.path, "rel": f.rel,
                    "in_home": f.in_home, "home_rel": f.home_rel, "name": f.name,
                })
            })
            .collect()
    };
    let flags = effects.flags;
    regorus::Value::from(serde_json::json!({
        "reads": places(&effects.read_places),
        "writes": places(&effects.write_places),
        "reaches": flags.reaches, "costs": flags.costs,
        "reversible": flags.reversible, "contained": flags.contained,
    }))
}

fn rego_engine() -> regorus::Engine {
    let mut engine = regorus::Engine::new();
    engine
        .add_policy("sixfold.rego".to_string(), REGO.to_string())
        .expect("rego policy");
    engine
}

fn rego_decide(engine: &mut regorus::Engine, input: regorus::Value) -> Decision {
    engine.set_input(input);
    let value = engine
        .eval_rule("data.sixfold.decision".to_string())
        .expect("rego eval");
    match value.as_string().map(|s| s.to_string()).as_deref() {
        Ok("allow") => Decision::Allow,
        Ok("ask") => Decision::Ask,
        _ => Decision::Refuse,
    }
}

fn peers(c: &mut Criterion) {
    let (bundle, diagnostics) = Bundle::load(&[shipped::source()]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let ctx = Context::example();
    let profiles: Vec<EffectProfile> = mixed::STEPS
        .iter()
        .map(|(_, json, _)| serde_json::from_str(json).expect("effects JSON"))
        .collect();
    let resolved: Vec<Effects> = profiles.iter().map(|p| p.resolve(&ctx.workspace)).collect();
    let cedar = Cedar::new();
    let mut rego = rego_engine();
    let cedar_requests: Vec<Vec<Request>> = resolved.iter().map(|e| cedar.requests(e, &ctx)).collect();
    let rego_inputs: Vec<regorus::Value> = resolved.iter().map(|e| rego_input(e, &ctx)).collect();
    // The same answers, or the comparison means nothing.
    let cases = mixed::STEPS
        .iter()
        .zip(&resolved)
        .zip(&cedar_requests)
        .zip(&rego_inputs);
    for ((((name, _, expected), e), requests), input) in cases {
        assert_eq!(
            bundle.judge_effects("workspace-write", e, &ctx).decision,
            *expected,
            "sixfold: {name}"
        );
        assert_eq!(cedar.decide(requests), *expected, "cedar: {name}");
        assert_eq!(rego_decide(&mut rego, input.clone()), *expected, "regorus: {name}");
    }

    let mut group = c.benchmark_group("peers/mixed-ten");
    group.throughput(Throughput::Elements(mixed::STEPS.len() as u64));
    // Each engine on input made beforehand: sixfold's resolved effects, Cedar's requests, Rego's
    // input document.
    group.bench_function("sixfold", |b| {
        b.iter(|| {
            for e in &resolved {
                black_box(bundle.judge_effects("workspace-write", black_box(e), &ctx));
            }
        })
    });
    group.bench_function("cedar", |b| {
        b.iter(|| {
            for r in &cedar_requests {
                black_box(cedar.decide(black_box(r)));
            }
        })
    });
    group.bench_function("regorus", |b| {
        b.iter(|| {
            for input in &rego_inputs {
                black_box(rego_decide(&mut rego, black_box(input.clone())));
            }
        })
    });
    // The same with path resolution (and, for the peers, making their input from it) included.
    group.bench_function("sixfold-with-resolution", |b| {
        b.iter(|| {
            for p in &profiles {
                black_box(bundle.judge("workspace-write", black_box(p), &ctx));
            }
        })
    });
    group.bench_function("cedar-with-resolution", |b| {
        b.iter(|| {
            for p in &profiles {
                let e = black_box(p).resolve(&ctx.workspace);
                black_box(cedar.decide(&cedar.requests(&e, &ctx)));
            }
        })
    });
    group.bench_function("regorus-with-resolution", |b| {
        b.iter(|| {
            for p in &profiles {
                let e = black_box(p).resolve(&ctx.workspace);
                black_box(rego_decide(&mut rego, rego_input(&e, &ctx)));
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = peers
}
criterion_main!(benches);
