//! Speed of the sandbox: one confined `true` against a plain spawn of `/bin/true`, and the
//! proof.
//!
//! Run with `cargo bench -p sixfold-sandbox --bench sandbox`; `docs/sandbox.md` ("Speed") has
//! the figures. Speed is measured here, never asserted.

// Benches are test-like code: a setup that fails should stop the run loudly.
#![allow(clippy::expect_used, clippy::unwrap_used)]
// criterion's macros declare undocumented functions.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use sixfold_sandbox::{prove, run, Environment, Network};
use std::ffi::OsString;
use std::hint::black_box;
use std::time::Duration;

/// Short runs: the machine has two cores and the figures are medians of many iterations anyway.
fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
}

/// A workspace-write-like environment over a small workspace with its protected paths present
/// and one `.env` secret, the temp dir writable and the network cut.
fn workspace_write(root: &std::path::Path, tmp: &std::path::Path) -> Environment {
    for dir in [".git/hooks", ".sixfold", ".claude", ".codex", "src"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    std::fs::write(root.join(".git/config"), "").unwrap();
    std::fs::write(root.join(".mcp.json"), "{}").unwrap();
    std::fs::write(root.join(".env"), "K=v").unwrap();
    Environment {
        roots: vec![root.to_path_buf()],
        read_only_roots: Vec::new(),
        tmp: Some(tmp.to_path_buf()),
        protected: [
            ".git",
            ".git/hooks/**",
            ".git/config",
            ".sixfold/**",
            ".claude/**",
            ".codex/**",
            ".mcp.json",
        ]
        .map(String::from)
        .to_vec(),
        secrets: ["~/.ssh", "~/.aws", "~/.gnupg", "**/.env*"].map(String::from).to_vec(),
        network: Network::Cut,
        home: std::env::var_os("HOME")
            .map(Into::into)
            .unwrap_or_else(|| "/root".into()),
        variables: sixfold_sandbox::Variables {
            pass: vec!["PATH".into(), "HOME".into()],
            never: Vec::new(),
        },
        ..Environment::default()
    }
}

fn bench(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let environment = workspace_write(root.path(), tmp.path());
    let argv: Vec<OsString> = vec!["true".into()];
    assert_eq!(run(&environment, &argv, root.path()).unwrap(), 0);
    assert!(prove(&environment).proven);

    let mut group = c.benchmark_group("sandbox");
    group.bench_function("spawn /bin/true", |b| {
        b.iter(|| black_box(std::process::Command::new("/bin/true").status().unwrap()))
    });
    group.bench_function("run workspace-write true", |b| {
        b.iter(|| black_box(run(&environment, &argv, root.path()).unwrap()))
    });
    // A fresh workspace: its protected paths missing, so each run makes and removes placeholders.
    let fresh = tempfile::tempdir().unwrap();
    let mut fresh_environment = environment.clone();
    fresh_environment.roots = vec![fresh.path().to_path_buf()];
    assert_eq!(run(&fresh_environment, &argv, fresh.path()).unwrap(), 0);
    group.bench_function("run workspace-write true, fresh workspace", |b| {
        b.iter(|| black_box(run(&fresh_environment, &argv, fresh.path()).unwrap()))
    });
    group.bench_function("prove workspace-write", |b| {
        b.iter(|| black_box(prove(&environment).proven))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}
criterion_main!(benches);
