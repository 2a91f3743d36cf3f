//! Ten mixed `workspace-write` steps (reads and writes inside and outside, secrets, protected
//! paths, the network, spending, unknown places), shared by the judgement bench and the peer
//! bench so both time the same cases.

use sixfold_core::decision::Decision;

/// (name, effects as written, the decision `workspace-write` gives).
pub(crate) const STEPS: [(&str, &str, Decision); 10] = [
    (
        "build",
        r#"{"reads":["./src/main.rs","./Cargo.toml"],"writes":["./src/lib.rs","/tmp/build.log"],"reversible":false}"#,
        Decision::Allow,
    ),
    (
        "secret-key",
        r#"{"reads":["./src/lib.rs","~/.ssh/id_rsa"],"writes":["./notes.md"]}"#,
        Decision::Refuse,
    ),
    (
        "write-outside",
        r#"{"reads":["./README.md"],"writes":["./src/x.rs","/etc/hosts"]}"#,
        Decision::Refuse,
    ),
    (
        "read-outside",
        r#"{"reads":["/usr/include/stdio.h","./src/main.rs"],"writes":["./target/debug/app"]}"#,
        Decision::Ask,
    ),
    (
        "git-hook",
        r#"{"reads":["./Cargo.toml"],"writes":["./.git/hooks/pre-commit"]}"#,
        Decision::Refuse,
    ),
    (
        "network",
        r#"{"writes":["./src/a.rs","./src/b.rs"],"reaches":true}"#,
        Decision::Refuse,
    ),
    (
        "dotenv",
        r#"{"reads":["./.env.local","./src/config.rs"]}"#,
        Decision::Refuse,
    ),
    (
        "costs",
        r#"{"reads":["./docs/guide.md"],"writes":["/tmp/out/report.html","./docs/guide.md"],"costs":true}"#,
        Decision::Ask,
    ),
    (
        "unknown-write",
        r#"{"reads":["./src/main.rs"],"writes":["*"]}"#,
        Decision::Ask,
    ),
    (
        "contained",
        r#"{"reads":["./tests/a.rs","./tests/b.rs"],"writes":["./tests/snapshots/a.snap"],"contained":true}"#,
        Decision::Allow,
    ),
];
