//! Speed of judgement: the shipped data-only modes, one Rhai rule, the curve over the number of
//! data rules, path resolution, and loading the shipped bundle.
//!
//! Run with `cargo bench -p sixfold-core --bench judge`; `docs/performance.md` has the figures
//! and the targets. Speed is measured here, never asserted.

// Benches are test-like code: a setup that fails should stop the run loudly, so `expect` is
// allowed here as it is in tests.
#![allow(clippy::expect_used, clippy::unwrap_used)]
// `criterion_group!` makes a public function it cannot document.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sixfold_core::bundle::{Bundle, BundleSource, Needs, Origin};
use sixfold_core::decision::Decision;
use sixfold_core::effects::{EffectProfile, Effects};
use sixfold_core::judge::Context;
use sixfold_core::scope::Workspace;
use sixfold_core::script::ScriptHost;
use sixfold_core::shipped;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;

mod mixed;

/// Short runs: the machine has two cores and the figures are medians of many iterations anyway.
fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

/// Loads sources and stops on any diagnostic: a bench over a broken bundle measures nothing.
fn load(sources: &[BundleSource]) -> Bundle {
    let (bundle, diagnostics) = Bundle::load(sources);
    assert!(
        diagnostics.is_empty(),
        "the bench bundle has problems: {}",
        diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
    );
    bundle
}

fn effects(json: &str, context: &Context) -> Effects {
    let profile: EffectProfile = serde_json::from_str(json).expect("effects JSON");
    profile.resolve(&context.workspace)
}

/// Representative steps: (name, effects JSON, the decision `workspace-write` gives).
const STEPS: [(&str, &str, Decision); 4] = [
    ("write-inside", r#"{"writes":["./src/lib.rs"]}"#, Decision::Allow),
    ("write-outside", r#"{"writes":["/etc/hosts"]}"#, Decision::Refuse),
    ("read-secret", r#"{"reads":["~/.ssh/id_rsa"]}"#, Decision::Refuse),
    (
        "mixed",
        r#"{"reads":["./src/main.rs","./Cargo.toml"],"writes":["./src/lib.rs","/tmp/build.log"],"reversible":false}"#,
        Decision::Allow,
    ),
];

/// `judge_effects` against the shipped `workspace-write` mode (data rules only), effects resolved
/// once outside the loop; and the same through the ceiling of `read-only`.
fn data_only(c: &mut Criterion) {
    let bundle = load(&[shipped::source()]);
    let ctx = Context::example();
    let mut group = c.benchmark_group("judge/data-only");
    for (name, json, expected) in STEPS {
        let e = effects(json, &ctx);
        assert_eq!(
            bundle.judge_effects("workspace-write", &e, &ctx).decision,
            expected,
            "{name}"
        );
        group.bench_function(BenchmarkId::new("workspace-write", name), |b| {
            b.iter(|| bundle.judge_effects(black_box("workspace-write"), black_box(&e), black_box(&ctx)))
        });
    }
    // A step refused by a ceiling (`read-only` writes nothing) before any rule runs.
    let e = effects(STEPS[0].1, &ctx);
    assert_eq!(bundle.judge_effects("read-only", &e, &ctx).decision, Decision::Refuse);
    group.bench_function(BenchmarkId::new("read-only", "write-inside-ceiling"), |b| {
        b.iter(|| bundle.judge_effects(black_box("read-only"), black_box(&e), black_box(&ctx)))
    });
    // `Bundle::judge`: resolution of the effects as written plus judgement, what one CLI call does.
    let profile: EffectProfile = serde_json::from_str(STEPS[0].1).expect("effects JSON");
    group.bench_function(BenchmarkId::new("workspace-write", "write-inside-with-resolve"), |b| {
        b.iter(|| bundle.judge(black_box("workspace-write"), black_box(&profile), black_box(&ctx)))
    });
    group.finish();
}

const SCRIPTED_MODE: &str = r#"
id = "scripted"
description = "One policy with one scripted rule, for the benchmark."
default = "allow"
include = ["bench"]
"#;

const SCRIPTED_POLICY: &str = r#"
id = "bench"
description = "One rule whose condition is a Rhai function."

[settings]
forbidden = ["/etc", "/var"]

[[rules]]
id = "scripted"
decision = "refuse"
reason = "writes under a forbidden directory"
script = "bench.rhai"
function = "f"
"#;

/// Looks at every written place and the policy's settings: a small but not trivial script.
const SCRIPTED_RHAI: &str = r#"
fn f(effects, context) {
    for w in effects.writes {
        if w.place == "outside" {
            for dir in context.settings.forbidden {
                if w.path.starts_with(dir) {
                    return true;
                }
            }
        }
    }
    false
}
"#;

/// A mode with one policy holding one Rhai rule (the script runs on every step: the rule has no
/// data condition to rule it out first).
fn one_script(c: &mut Criterion) {
    let bench = BundleSource::from_files(
        "bench",
        [
            ("modes/scripted.toml", SCRIPTED_MODE),
            ("policies/bench.toml", SCRIPTED_POLICY),
            ("policies/bench.rhai", SCRIPTED_RHAI),
        ],
    );
    let bundle = load(&[shipped::source(), bench]);
    let ctx = Context::example();
    let mut group = c.benchmark_group("judge/one-script");
    for (name, json, expected) in [
        ("write-inside", STEPS[0].1, Decision::Allow),
        ("write-outside", STEPS[1].1, Decision::Refuse),
    ] {
        let e = effects(json, &ctx);
        assert_eq!(bundle.judge_effects("scripted", &e, &ctx).decision, expected, "{name}");
        group.bench_function(BenchmarkId::new("scripted", name), |b| {
            b.iter(|| bundle.judge_effects(black_box("scripted"), black_box(&e), black_box(&ctx)))
        });
    }
    group.finish();
}

const CEILINGED_MODE: &str = r#"
id = "ceilinged"
description = "A ceiling that names paths: they are resolved against the workspace on every judgement."
default = "allow"

[ceiling]
writes = ["./src", "./tests", "tmp"]
reads = ["workspace", "tmp"]
"#;

/// A ceiling written with paths. `Ceiling::exceeded` resolves the limit against the workspace on
/// every judgement, so this costs what resolving those paths costs: next to nothing in the example
/// workspace (its root does not exist), an `lstat` per existing component in a real one.
fn ceiling_paths(c: &mut Criterion) {
    let bench = BundleSource::from_files("bench", [("modes/ceilinged.toml", CEILINGED_MODE)]);
    let bundle = load(&[shipped::source(), bench]);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("src")).expect("create src");
    std::fs::create_dir_all(dir.path().join("tests")).expect("create tests");
    let real = Context::new(Workspace::new(dir.path()).with_tmp("/tmp"));
    let mut group = c.benchmark_group("judge/ceiling-paths");
    for (name, ctx) in [("example-workspace", Context::example()), ("real-dir-workspace", real)] {
        let e = effects(STEPS[0].1, &ctx);
        assert_eq!(
            bundle.judge_effects("ceilinged", &e, &ctx).decision,
            Decision::Allow,
            "{name}"
        );
        group.bench_function(BenchmarkId::new("write-inside", name), |b| {
            b.iter(|| bundle.judge_effects(black_box("ceilinged"), black_box(&e), black_box(&ctx)))
        });
    }
    group.finish();
}

/// A mode with `n` generated data rules, a mix of the condition kinds. None of them matches the
/// benchmarked step, so every rule is tried: this is the worst case for a scan.
fn generated_mode(n: usize) -> String {
    let mut toml = format!("id = \"scale-{n}\"\ndefault = \"allow\"\n");
    for i in 0..n {
        let (decision, when) = match i % 5 {
            0 => ("refuse", format!("when.writes = [\"/some/glob/{i}/**\"]")),
            1 => (
                "ask",
                format!("when.reads = [\"generated/{i}/*.rs\", \"~/cache/{i}/**\"]"),
            ),
            2 => ("refuse", "when.reaches = true\nwhen.writes = [\"outside\"]".to_string()),
            3 => (
                "ask",
                format!("when.writes = [\"**/gen-{i}.lock\"]\nwhen.reversible = false"),
            ),
            _ => ("ask", "when.costs = true".to_string()),
        };
        let _ = write!(
            toml,
            "\n[[rules]]\nid = \"r{i}\"\ndecision = \"{decision}\"\nreason = \"rule {i}\"\n{when}\n"
        );
    }
    toml
}

fn scaling(c: &mut Criterion) {
    let sizes = [10usize, 100, 1_000];
    let files: Vec<(String, String)> = sizes
        .iter()
        .map(|n| (format!("modes/scale-{n}.toml"), generated_mode(*n)))
        .collect();
    let bundle = load(&[shipped::source(), BundleSource::from_files("bench", files)]);
    let ctx = Context::example();
    let e = effects(STEPS[3].1, &ctx);
    let mut group = c.benchmark_group("judge/scaling");
    for n in sizes {
        let mode = format!("scale-{n}");
        assert_eq!(
            bundle.judge_effects(&mode, &e, &ctx).decision,
            Decision::Allow,
            "{mode}"
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("rules", n), &mode, |b, mode| {
            b.iter(|| bundle.judge_effects(black_box(mode), black_box(&e), black_box(&ctx)))
        });
    }
    group.finish();
}

/// `Workspace::resolve`, which judgement does not do (it works on resolved effects) but every
/// caller with effects as written does once per step.
fn resolution(c: &mut Criterion) {
    let mut group = c.benchmark_group("resolve");
    // The example workspace does not exist on disk: the first missing component stops the syscalls.
    let example = Context::example().workspace;
    let dotdot = vec!["./src/../../etc/./passwd".to_string()];
    group.bench_function("dotdot-nonexistent-root", |b| {
        b.iter(|| example.resolve(black_box(&dotdot)))
    });
    let named = vec!["workspace".to_string(), "tmp".to_string()];
    group.bench_function("named-scopes", |b| b.iter(|| example.resolve(black_box(&named))));

    // A real directory: every existing component is one `lstat`.
    let dir = tempfile::tempdir().expect("temp dir");
    let deep = dir.path().join("a/b/c");
    std::fs::create_dir_all(&deep).expect("create dirs");
    std::fs::write(deep.join("file.rs"), "").expect("write file");
    std::os::unix::fs::symlink(&deep, dir.path().join("link")).expect("symlink");
    let real = Workspace::new(dir.path()).with_tmp("/tmp");
    let existing = vec!["a/b/c/file.rs".to_string()];
    group.bench_function("real-dir-existing-file", |b| {
        b.iter(|| real.resolve(black_box(&existing)))
    });
    let through_link = vec!["link/../c/file.rs".to_string()];
    group.bench_function("real-dir-symlink-and-dotdot", |b| {
        b.iter(|| real.resolve(black_box(&through_link)))
    });
    let missing = vec!["a/b/new/deeper/file.rs".to_string()];
    group.bench_function("real-dir-new-file", |b| b.iter(|| real.resolve(black_box(&missing))));

    // A whole profile as written, resolved and classified.
    let profile: EffectProfile = serde_json::from_str(STEPS[3].1).expect("effects JSON");
    group.bench_function("profile-mixed-example-ws", |b| {
        b.iter(|| black_box(&profile).resolve(&example))
    });
    group.finish();
}

/// Loading the shipped bundle: parsing, compiling globs, scripts and the command classifier.
/// Every `sixfold judge` process pays this once; the parts are measured beside the whole to show
/// where that time goes.
fn loading(c: &mut Criterion) {
    let mut group = c.benchmark_group("load");
    group.bench_function("shipped-bundle", |b| {
        b.iter(|| Bundle::load(black_box(&[shipped::source()])))
    });
    // The same without dropping the result (a process that exits need not free it).
    group.bench_function("shipped-bundle-without-drop", |b| {
        b.iter_with_large_drop(|| Bundle::load(black_box(&[shipped::source()])))
    });
    // Only what the modes judge with: the modes, the policies they include (read from the modes
    // themselves, so a policy a shipped mode comes to include is in the subset) and the
    // environments they name.
    let shipped_files = shipped::source().files;
    let mut needed = vec!["policies/environments.toml".to_string()];
    for (path, text) in &shipped_files {
        if !path.starts_with("modes/") {
            continue;
        }
        // A mode in Markdown keeps its TOML between `+++` lines, above its behaviour.
        let toml_text = match text.strip_prefix("+++\n") {
            Some(rest) => rest.split("\n+++").next().unwrap_or_default(),
            None => text.as_ref(),
        };
        let mode: toml::Table = toml::from_str(toml_text).expect("a shipped mode parses");
        let includes = mode
            .get("include")
            .and_then(|i| i.as_array())
            .cloned()
            .unwrap_or_default();
        needed.extend(
            includes
                .iter()
                .filter_map(|p| p.as_str())
                .map(|p| format!("policies/{p}.toml")),
        );
    }
    let subset = BundleSource::new(
        Origin::Shipped,
        shipped_files
            .into_iter()
            .filter(|(path, _)| path.starts_with("modes/") || needed.contains(path)),
    );
    load(std::slice::from_ref(&subset));
    group.bench_function("modes-and-their-policies", |b| {
        b.iter(|| Bundle::load(black_box(std::slice::from_ref(&subset))))
    });
    // What a hook loads to judge one step: `Bundle::load_for` the mode, the provider, the pattern
    // and the tool called.
    let needs = Needs::mode("workspace-write")
        .with_provider("claude-code")
        .with_pattern("single")
        .with_tool("Bash");
    let (lean, diagnostics) = Bundle::load_for(&[shipped::source()], &needs);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(lean.mode("workspace-write").is_some() && lean.provider("claude-code").is_some());
    group.bench_function("load-for-one-judgement", |b| {
        b.iter(|| Bundle::load_for(black_box(&[shipped::source()]), black_box(&needs)))
    });
    group.bench_function("shipped-source-copy", |b| b.iter(shipped::source));
    group.bench_function("script-host-new", |b| b.iter(ScriptHost::default));
    group.finish();
}

/// The shell reader (tree-sitter-bash, walked by an allow-list) and the command classifier on
/// lines agents write: `shell::parse` alone, and `Bundle::classify` (parse, rules, directories).
fn classifying(c: &mut Criterion) {
    const LINES: [(&str, &str); 5] = [
        ("simple", "git status"),
        ("chain", "cd src && cargo test 2>&1 | tail -20; echo done"),
        (
            "substitution",
            "echo \"head: $(git rev-parse --short HEAD)\" > notes.txt",
        ),
        ("loop", "for f in src/*.rs; do wc -l \"$f\"; done"),
        (
            "heredoc",
            "cat > notes.md <<'EOF'\n# Notes\n\nA few lines of text that an agent writes.\nEOF\ngit add notes.md",
        ),
    ];
    let bundle = load(&[shipped::source()]);
    let cwd = std::path::Path::new("/workspace");
    let mut group = c.benchmark_group("shell");
    for (name, line) in LINES {
        assert!(sixfold_core::shell::parse(line).opaque.is_none(), "{name}");
        group.bench_function(BenchmarkId::new("parse", name), |b| {
            b.iter(|| sixfold_core::shell::parse(black_box(line)))
        });
        group.bench_function(BenchmarkId::new("classify", name), |b| {
            b.iter(|| bundle.classify(black_box(line), black_box(cwd)))
        });
    }
    group.finish();
}

/// The ten mixed `workspace-write` steps of `mixed::STEPS`, one iteration judging all ten (so a
/// step costs a tenth): on effects resolved once, and with resolution of the effects as written
/// included (what a caller holding a step's effects does). The peer bench times Cedar and
/// regorus on the same steps.
fn mixed_ten(c: &mut Criterion) {
    let bundle = load(&[shipped::source()]);
    let ctx = Context::example();
    let profiles: Vec<EffectProfile> = mixed::STEPS
        .iter()
        .map(|(_, json, _)| serde_json::from_str(json).expect("effects JSON"))
        .collect();
    let resolved: Vec<Effects> = profiles.iter().map(|p| p.resolve(&ctx.workspace)).collect();
    for ((name, _, expected), e) in mixed::STEPS.iter().zip(&resolved) {
        assert_eq!(
            bundle.judge_effects("workspace-write", e, &ctx).decision,
            *expected,
            "{name}"
        );
    }
    let mut group = c.benchmark_group("judge/mixed-ten");
    group.throughput(Throughput::Elements(mixed::STEPS.len() as u64));
    group.bench_function("resolved", |b| {
        b.iter(|| {
            for e in &resolved {
                black_box(bundle.judge_effects(black_box("workspace-write"), black_box(e), black_box(&ctx)));
            }
        })
    });
    group.bench_function("with-resolution", |b| {
        b.iter(|| {
            for p in &profiles {
                black_box(bundle.judge(black_box("workspace-write"), black_box(p), black_box(&ctx)));
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = data_only, mixed_ten, one_script, ceiling_paths, scaling, resolution, classifying, loading
}
criterion_main!(benches);
