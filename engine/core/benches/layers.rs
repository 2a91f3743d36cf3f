//! Loading a large project layer as the hook does (`Bundle::load_cached` for one judgement, the
//! layer's parsed form kept): a project mode of 1,000 path rules, and a policy of 1,000 kept
//! act rules, each beside the shipped bundle alone, with one judgement of the process bench's
//! step (`cargo test`) and of a write to a path in the workspace.
//!
//! Run with `cargo bench -p sixfold-core --bench layers`; `docs/performance.md` has the figures.
//! Speed is measured here, never asserted.

// Benches are test-like code: a setup that fails should stop the run loudly.
#![allow(clippy::expect_used, clippy::unwrap_used)]
// `criterion_group!` makes a public function it cannot document.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use sixfold_core::bundle::{Bundle, BundleSource, Needs, ParseCache};
use sixfold_core::effects::EffectProfile;
use sixfold_core::judge::Context;
use sixfold_core::shipped;
use std::hint::black_box;
use std::time::Duration;

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
}

/// The process bench's project mode: `workspace-write` and `n` rules refusing writes below
/// `/some/glob/{i}/`.
fn project_rules(n: usize) -> BundleSource {
    let mut mode = String::from("id = \"bench\"\nextends = \"workspace-write\"\nenvironment = \"workspace-write\"\n");
    for i in 0..n {
        mode.push_str(&format!(
            "\n[[rules]]\nid = \"r{i}\"\ndecision = \"refuse\"\nreason = \"generated\"\nwhen.writes = [\"/some/glob/{i}/**\"]\n"
        ));
    }
    BundleSource::from_files("project", [("modes/bench.toml", mode.as_str())])
}

/// The process bench's kept rules: `n` act rules allowing `tool-{i} run`.
fn kept_rules(n: usize) -> BundleSource {
    let mut kept = String::from("id = \"kept\"\n");
    for i in 0..n {
        kept.push_str(&format!(
            "\n[[acts]]\nid = \"kept-{i}\"\ndecision = \"allow\"\ncommand = \"tool-{i} run\"\n"
        ));
    }
    BundleSource::from_files("project", [("policies/kept.toml", kept.as_str())])
}

fn loading(c: &mut Criterion) {
    let mut group = c.benchmark_group("layers");
    let dir = tempfile::tempdir().expect("a temp dir");
    let cache = ParseCache::in_dir(dir.path());
    let step: EffectProfile = serde_json::from_str(r#"{"reads":["*"],"writes":["*"]}"#).unwrap();
    let write: EffectProfile = serde_json::from_str(r#"{"writes":["./src/lib.rs"]}"#).unwrap();
    let context = Context::example();
    let cases = [
        ("shipped-only", "workspace-write", None),
        ("1k-project-rules", "bench", Some(project_rules(1_000))),
        ("1k-kept-rules", "workspace-write", Some(kept_rules(1_000))),
    ];
    for (name, mode, layer) in cases {
        let mut sources = vec![shipped::source()];
        sources.extend(layer);
        let needs = Needs::mode(mode)
            .with_pattern("single")
            .with_provider("claude-code")
            .with_tool("Bash");
        // The first load keeps the layer's parsed form; the bench reads it as the hook does.
        let (bundle, diagnostics) = Bundle::load_cached(&sources, Some(&needs), &cache);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(bundle.mode(mode).is_some());
        group.bench_function(format!("load-cached/{name}"), |b| {
            b.iter(|| Bundle::load_cached(black_box(&sources), Some(&needs), &cache))
        });
        group.bench_function(format!("load-cached-and-judge/{name}"), |b| {
            b.iter(|| {
                let (bundle, _) = Bundle::load_cached(black_box(&sources), Some(&needs), &cache);
                let one = bundle.judge(mode, &step, &context);
                let two = bundle.judge(mode, &write, &context);
                (one, two)
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = loading
}
criterion_main!(benches);
