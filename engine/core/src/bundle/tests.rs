use super::*;
use crate::decision::{Decision, Judgement};
use crate::effects::Effects;
use crate::format::FactsKind;
use crate::judge::Context;
use crate::shipped;
use crate::verdict::Verdict;

fn load(extra: &[(&str, &str)]) -> (Bundle, Vec<Diagnostic>) {
    let overlay = BundleSource::from_files("t", extra.iter().copied());
    Bundle::load(&[shipped::source(), overlay])
}

fn judge(bundle: &Bundle, mode: &str, effects: &str) -> Judgement {
    let effects: EffectProfile = serde_json::from_str(effects).unwrap();
    bundle.judge(mode, &effects, &Context::example())
}

#[test]
fn the_shipped_bundle_loads_clean_and_its_examples_hold() {
    let (bundle, diagnostics) = Bundle::load(&[shipped::source()]);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    assert_eq!(bundle.run_examples(), vec![]);
    let ids: Vec<&str> = bundle.modes().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["ask", "full", "keep-work", "read-only", "workspace-write"]);
    assert!(bundle.example_count() >= 48, "every cell of the table has an example");
}

#[test]
fn a_later_source_replaces_a_mode_with_the_same_id() {
    let (bundle, d) = load(&[("modes/full.toml", "id = \"full\"\ndefault = \"refuse\"\n")]);
    assert!(d.is_empty(), "{d:#?}");
    assert_eq!(judge(&bundle, "full", "{}").decision, Decision::Refuse);
    assert_eq!(bundle.mode("full").unwrap().file, "t/modes/full.toml");
}

#[test]
fn the_same_id_twice_in_one_source_is_an_error() {
    let (_, d) = load(&[
        ("patterns/a.toml", "id = \"x\"\nmeta_tools = []\n"),
        ("patterns/b.toml", "id = \"x\"\nmeta_tools = []\n"),
    ]);
    assert_eq!(d.len(), 1);
    assert!(d[0].message.contains("defined twice"));
}

#[test]
fn markdown_modes_take_their_role_from_the_body() {
    let (bundle, d) = load(&[(
        "modes/reviewer.md",
        "+++\nid = \"reviewer\"\nextends = \"read-only\"\n+++\nYou review.\n",
    )]);
    assert!(d.is_empty(), "{d:#?}");
    let mode = bundle.mode("reviewer").unwrap();
    assert_eq!(mode.behaviour.role.as_deref(), Some("You review."));
    assert_eq!(
        judge(&bundle, "reviewer", r#"{"writes":["./a"]}"#).decision,
        Decision::Refuse
    );
}

#[test]
fn markdown_without_front_matter_is_an_error_at_line_one() {
    let (_, d) = load(&[("modes/x.md", "# just markdown\n")]);
    assert_eq!((d[0].line, d[0].column), (1, 1));
}

#[test]
fn errors_in_front_matter_point_at_the_files_own_lines() {
    let (_, d) = load(&[("modes/x.md", "+++\nid = \"x\"\nbogus = 1\n+++\nbody\n")]);
    assert_eq!(d[0].line, 3, "{d:#?}");
}

#[test]
fn a_mode_file_must_be_named_by_its_id() {
    let (_, d) = load(&[("modes/one.toml", "id = \"two\"\n")]);
    assert!(d[0].message.contains("not its file's name"));
}

#[test]
fn extending_may_only_narrow() {
    let (_, d) = load(&[(
        "modes/looser.toml",
        "id = \"looser\"\nextends = \"ask\"\n[[rules]]\nid = \"r\"\ndecision = \"allow\"\nreason = \"x\"\n",
    )]);
    assert!(
        d.is_empty(),
        "an allow rule under an `allow` default narrows nothing away: {d:#?}"
    );

    let strict = "id = \"strict\"\ndefault = \"ask\"\n";
    let child = "id = \"child\"\nextends = \"strict\"\n[[rules]]\nid = \"r\"\ndecision = \"allow\"\nreason = \"x\"\nwhen.reaches = true\n";
    let (bundle, d) = load(&[("modes/strict.toml", strict), ("modes/child.toml", child)]);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].message.contains("more permissive than that mode's default"));
    assert_eq!(d[0].line, 2);
    assert!(bundle.mode("child").is_none());
    assert_eq!(
        judge(&bundle, "child", "{}").decision,
        Decision::Refuse,
        "a mode that did not load refuses"
    );

    let (_, d) = load(&[
        ("modes/strict.toml", strict),
        (
            "modes/lax.toml",
            "id = \"lax\"\nextends = \"strict\"\ndefault = \"allow\"\n",
        ),
    ]);
    assert!(d[0].message.contains("default `allow`"), "{d:#?}");

    let (_, d) = load(&[(
        "modes/r.toml",
        "id = \"r\"\nextends = \"read-only\"\n[ceiling]\nreaches = true\n",
    )]);
    assert!(d[0].message.contains("reaching the network"), "{d:#?}");
}

#[test]
fn extends_cycles_are_reported() {
    let (_, d) = load(&[
        ("modes/a.toml", "id = \"a\"\nextends = \"b\"\n"),
        ("modes/b.toml", "id = \"b\"\nextends = \"a\"\n"),
    ]);
    assert!(d.iter().any(|d| d.message.contains("extends itself")), "{d:#?}");
}

#[test]
fn a_rule_that_cannot_load_refuses_rather_than_vanishing() {
    let policy = "id = \"p\"\n[[rules]]\nid = \"r\"\ndecision = \"ask\"\nreason = \"x\"\nwhen.writes = [\"@nope\"]\n";
    let mode = "id = \"m\"\ndefault = \"allow\"\ninclude = [\"p\"]\n";
    let (bundle, d) = load(&[("policies/p.toml", policy), ("modes/m.toml", mode)]);
    assert!(d[0].message.contains("no path set `@nope`"));
    let j = judge(&bundle, "m", "{}");
    assert_eq!(j.decision, Decision::Refuse);
    assert!(j.reason.contains("could not be loaded"), "{}", j.reason);
}

#[test]
fn script_rules_match_reason_and_fail_closed() {
    let policy = r#"
id = "p"
[[rules]]
id = "big"
decision = "ask"
reason = "writes many places"
script = "p.rhai"
function = "many"
[[rules]]
id = "own-reason"
decision = "ask"
reason = "unused"
script = "p.rhai"
function = "named"
[[rules]]
id = "bad-return"
decision = "allow"
reason = "x"
script = "p.rhai"
function = "number"
when.costs = true
"#;
    let script = r#"
fn many(effects, context) { effects.writes.len() > 2 }
fn named(effects, context) { if effects.reaches { "reaches, says " + context.mode } else { () } }
fn number(effects, context) { 42 }
"#;
    let mode = "id = \"m\"\ndefault = \"allow\"\ninclude = [\"p\"]\n";
    let (bundle, d) = load(&[
        ("policies/p.toml", policy),
        ("policies/p.rhai", script),
        ("modes/m.toml", mode),
    ]);
    assert!(d.is_empty(), "{d:#?}");
    assert_eq!(judge(&bundle, "m", r#"{"writes":["./a"]}"#).decision, Decision::Allow);
    let j = judge(&bundle, "m", r#"{"writes":["./a","./b","./c"]}"#);
    assert_eq!((j.decision, j.rules), (Decision::Ask, vec!["p/big".to_string()]));
    let j = judge(&bundle, "m", r#"{"reaches":true}"#);
    assert!(j.reason.contains("reaches, says m"), "{}", j.reason);
    let j = judge(&bundle, "m", r#"{"costs":true}"#);
    assert_eq!(
        j.decision,
        Decision::Refuse,
        "a script returning nonsense fails closed: {}",
        j.reason
    );
}

#[test]
fn scripts_must_define_the_named_function() {
    let policy = "id = \"p\"\n[[rules]]\nid = \"r\"\ndecision = \"ask\"\nreason = \"x\"\nscript = \"p.rhai\"\nfunction = \"missing\"\n";
    let (_, d) = load(&[
        ("policies/p.toml", policy),
        ("policies/p.rhai", "fn other(a, b) { true }"),
    ]);
    assert!(
        d[0].message.contains("no function `missing` taking 2 parameters"),
        "{d:#?}"
    );
}

#[test]
fn rows_by_data_evidence_and_script() {
    let policy = r#"
id = "rows"
settings = { wanted = "none" }
[[rows]]
id = "key"
title = "no API key"
assertion = "record"
severity = "gating"
check = { fact = "record.apiKeySource", ok = ["none"] }
[[rows]]
id = "scripted"
title = "scripted"
assertion = "launch"
severity = "advisory"
script = "rows.rhai"
function = "check"
[[rows]]
id = "both"
title = "evidence"
assertion = "effect"
severity = "advisory"
evidence = ["key", "scripted"]
[[row_examples]]
row = "key"
facts = { record = { apiKeySource = "none" } }
verdict = "ok"
[[row_examples]]
row = "key"
facts = { record = { apiKeySource = "VENDOR_API_KEY" } }
verdict = "gap"
[[row_examples]]
row = "key"
facts = {}
verdict = "unk"
[[row_examples]]
row = "both"
facts = { record = { apiKeySource = "none" }, env = ["HOME"] }
verdict = "ok"
[[row_examples]]
row = "both"
facts = { env = ["HOME"] }
verdict = "unk"
"#;
    let script = r#"
fn check(facts, settings) {
    if !("env" in facts) { return "unk"; }
    if facts.env.contains("SECRET") { #{verdict: "gap", evidence: "SECRET is inherited"} } else { "ok" }
}
"#;
    let (bundle, d) = load(&[("policies/rows.toml", policy), ("policies/rows.rhai", script)]);
    assert!(d.is_empty(), "{d:#?}");
    assert_eq!(bundle.run_examples(), vec![]);
    let facts = serde_json::json!({"record": {"apiKeySource": "none"}, "env": ["SECRET"]});
    let results = bundle.evaluate_rows(&bundle.policy_rows("rows"), &facts);
    let verdicts: Vec<(&str, Verdict)> = results.iter().map(|r| (r.id.as_str(), r.verdict)).collect();
    assert_eq!(
        verdicts,
        [("key", Verdict::Ok), ("scripted", Verdict::Gap), ("both", Verdict::Gap)]
    );
    assert_eq!(results[1].evidence, "SECRET is inherited");
    let unknown = bundle.evaluate_rows(&["nope"], &facts);
    assert_eq!(unknown[0].verdict, Verdict::Unk);
}

#[test]
fn a_row_script_that_errors_is_unk() {
    let policy = "id = \"r\"\n[[rows]]\nid = \"x\"\ntitle = \"t\"\nassertion = \"record\"\nseverity = \"gating\"\nscript = \"r.rhai\"\nfunction = \"f\"\n";
    let (bundle, d) = load(&[
        ("policies/r.toml", policy),
        ("policies/r.rhai", "fn f(facts, s) { f(facts, s) }"),
    ]);
    assert!(d.is_empty(), "{d:#?}");
    let r = bundle.evaluate_rows(&["x"], &serde_json::json!({}));
    assert_eq!(r[0].verdict, Verdict::Unk);
    assert!(r[0].evidence.contains("call-depth"), "{}", r[0].evidence);
}

#[test]
fn a_row_needs_exactly_one_check() {
    let policy = "id = \"r\"\n[[rows]]\nid = \"x\"\ntitle = \"t\"\nassertion = \"record\"\nseverity = \"gating\"\n";
    let (_, d) = load(&[("policies/r.toml", policy)]);
    assert!(d[0].message.contains("exactly one"), "{d:#?}");
    assert_eq!(d[0].line, 2);
}

#[test]
fn patterns_judge_spawns() {
    let (bundle, _) = Bundle::load(&[shipped::source()]);
    let single = bundle.pattern("single").unwrap();
    assert_eq!(single.judge_spawn(Some("x"), 0).decision, Decision::Refuse);
    let keeps = bundle.pattern("keeps-helpers").unwrap();
    assert_eq!(keeps.judge_spawn(Some("Explore"), 5).decision, Decision::Allow);
    assert_eq!(keeps.judge_spawn(Some("other"), 0).decision, Decision::Refuse);
    let ow = bundle.pattern("orchestrator-workers").unwrap();
    assert_eq!(ow.judge_spawn(None, 8).decision, Decision::Refuse);
}

#[test]
fn the_ceiling_is_checked_first_and_named() {
    let (bundle, _) = Bundle::load(&[shipped::source()]);
    let j = judge(&bundle, "read-only", r#"{"writes":["./src/a.rs"]}"#);
    assert_eq!(j.rules, ["read-only/ceiling"]);
    assert!(j.reason.contains("/workspace/src/a.rs"), "{}", j.reason);
}

#[test]
fn the_default_applies_where_nothing_matches() {
    let (bundle, _) = load(&[("modes/quiet.toml", "id = \"quiet\"\ndefault = \"ask\"\n")]);
    let j = judge(&bundle, "quiet", "{}");
    assert_eq!(j.decision, Decision::Ask);
    assert!(j.rules.is_empty());
    assert!(j.reason.contains("default"));
}

fn classify(command: &str) -> crate::classify::Classified {
    let (bundle, d) = Bundle::load(&[shipped::source()]);
    assert!(d.is_empty(), "{d:#?}");
    bundle.classify(command, std::path::Path::new("/workspace"))
}

#[test]
fn commands_are_classified_by_effects() {
    let c = classify("cat src/lib.rs");
    assert_eq!(c.effects.reads, ["/workspace/src/lib.rs"]);
    assert!(c.effects.writes.is_empty() && !c.effects.reaches);

    let c = classify("rm -rf /etc/x");
    assert_eq!(c.effects.writes, ["/etc/x"]);
    assert!(!c.effects.reversible);

    let c = classify("git push origin main");
    assert!(c.effects.reaches);
}

#[test]
fn compound_commands_join_their_effects() {
    let c = classify("cd sub && cargo test 2>&1 | tee ../out.log; curl -s https://x.test");
    let programs: Vec<&str> = c.parts.iter().map(|p| p.program.as_str()).collect();
    assert_eq!(programs, ["cd", "cargo", "tee", "curl"]);
    // `cargo test` runs the project's code: what it writes is not known.
    assert!(c.effects.writes.contains(&"*".to_string()), "{:?}", c.effects.writes);
    assert!(
        c.effects.writes.contains(&"/workspace/sub/../out.log".to_string()),
        "{:?}",
        c.effects.writes
    );
    assert!(c.effects.reaches);
}

#[test]
fn wrappers_are_stripped() {
    let c = classify("timeout 60 env RUST_LOG=debug nice -n 5 cargo test");
    assert_eq!(c.parts[0].rule.as_deref(), Some("commands/cargo"));
    let c = classify("FOO=1 command -p ls");
    assert_eq!(c.parts[0].program, "ls");
}

#[test]
fn redirections_are_writes() {
    let c = classify("echo hi > notes.txt 2>/dev/null");
    assert_eq!(c.effects.writes, ["/workspace/notes.txt"]);
}

#[test]
fn what_cannot_be_understood_is_conservative() {
    for text in [
        "frobnicate --all",
        "rm $(cat list)",
        "eval \"$X\"",
        "$CMD arg",
        "bash -c \"$X\"",
        "sudo ls",
    ] {
        let c = classify(text);
        assert!(c.effects.writes.iter().any(|w| w == "*"), "{text}");
        assert!(!c.effects.reversible && !c.effects.contained, "{text}");
        // Not understood is not taken to reach the network; a privileged command is.
        assert_eq!(c.effects.reaches, text.starts_with("sudo"), "{text}");
    }
}

#[test]
fn shell_wrappers_are_classified_inside() {
    let c = classify("/bin/bash -lc 'cargo test && sed -i s/a/b/ tests/t.rs'");
    let rules: Vec<Option<&str>> = c.parts.iter().map(|p| p.rule.as_deref()).collect();
    assert_eq!(rules, [Some("commands/cargo"), Some("commands/sed-in-place")]);
    assert_eq!(c.parts[0].text, "cargo test");
    assert!(
        c.effects.writes.contains(&"/workspace/tests/t.rs".to_string()),
        "{:?}",
        c.effects.writes
    );
    assert!(!c.effects.reaches);
}

#[test]
fn expanded_arguments_are_unknown_places() {
    let c = classify("rm -rf \"$TARGET\"");
    assert!(!c.effects.writes.is_empty() && c.effects.writes.iter().all(|w| w == "*"));
}

#[test]
fn kept_act_rules_narrow_anything_and_widen_only_within_the_ceiling() {
    let kept = r#"
id = "kept"
[[acts]]
id = "tests"
decision = "allow"
command = "cargo test"
[[acts]]
id = "no-docs"
decision = "refuse"
path = "docs/**"
[[acts]]
id = "crates"
decision = "allow"
domain = "crates.io"
modes = ["ask"]
"#;
    let (bundle, d) = load(&[("policies/kept.toml", kept)]);
    assert!(d.is_empty(), "{d:#?}");
    let ctx = Context::example();
    let step = |writes: &[&str], reaches: bool| -> Effects {
        EffectProfile {
            writes: writes.iter().map(|w| w.to_string()).collect(),
            reaches,
            ..EffectProfile::default()
        }
        .resolve(&ctx.workspace)
    };
    let cargo = vec!["cargo test".to_string()];
    let part = crate::classify::Part {
        program: "cargo".into(),
        text: "cargo test".into(),
        effects: EffectProfile {
            writes: vec!["/workspace".into()],
            ..EffectProfile::default()
        },
        ..Default::default()
    };
    let parts = [part];
    let act = ActView {
        kind: "command",
        text: "cargo test",
        commands: &cargo,
        parts: &parts,
    };
    // ask would ask about a workspace write; the kept rule allows it (within ask's ceiling).
    let j = bundle.judge_step("ask", &act, &step(&["/workspace"], false), &ctx);
    assert_eq!(j.decision, Decision::Allow, "{}", j.reason);
    assert_eq!(j.rules, ["kept/tests"]);
    // read-only's ceiling writes nothing: the kept allow does not widen past it.
    let j = bundle.judge_step("read-only", &act, &step(&["/workspace"], false), &ctx);
    assert_eq!(j.decision, Decision::Refuse);
    assert!(j.reason.contains("not beyond the mode's ceiling"), "{}", j.reason);
    // A kept refuse narrows even `full`.
    let none: Vec<String> = vec![];
    let act = ActView {
        kind: "path",
        text: "/workspace/docs/a.md",
        commands: &none,
        parts: &[],
    };
    assert_eq!(
        bundle
            .judge_step("full", &act, &step(&["/workspace/docs/a.md"], false), &ctx)
            .decision,
        Decision::Refuse
    );
    // Domains match subdomains, only in the modes named.
    let curl = vec!["curl https://static.crates.io/x".to_string()];
    let act = ActView {
        kind: "command",
        text: "curl https://static.crates.io/x",
        commands: &curl,
        parts: &[],
    };
    assert_eq!(
        bundle.judge_step("ask", &act, &step(&[], true), &ctx).decision,
        Decision::Allow
    );
    assert_eq!(
        bundle
            .judge_step("workspace-write", &act, &step(&[], true), &ctx)
            .decision,
        Decision::Refuse
    );
}

/// Kept rules widen only within the mode's ceiling, and secrets and protected paths lie outside
/// every ceiling but `full`'s: a kept path or command rule never unlocks them, while it still
/// widens what the mode asks about.
#[test]
fn kept_rules_never_unlock_secrets_or_protected_paths() {
    let kept = r#"
id = "kept"
[[acts]]
id = "src"
decision = "allow"
path = "src/**"
[[acts]]
id = "cat"
decision = "allow"
command = "cat"
[[acts]]
id = "all"
decision = "allow"
path = "**"
"#;
    let (bundle, d) = load(&[("policies/kept.toml", kept)]);
    assert!(d.is_empty(), "{d:#?}");
    let ctx = Context::example();
    let none: Vec<String> = vec![];
    let judged = |mode: &str, kind: &str, text: &str, commands: &[String], effects: EffectProfile| {
        let act = ActView {
            kind,
            text,
            commands,
            parts: &[],
        };
        bundle.judge_step(mode, &act, &effects.resolve(&ctx.workspace), &ctx)
    };
    let reads = |p: &str| EffectProfile {
        reads: vec![p.into()],
        ..EffectProfile::default()
    };
    let writes = |p: &str| EffectProfile {
        writes: vec![p.into()],
        ..EffectProfile::default()
    };
    for mode in ["read-only", "ask", "workspace-write"] {
        let j = judged(mode, "path", "/workspace/src/.env", &none, reads("/workspace/src/.env"));
        assert_eq!(j.decision, Decision::Refuse, "{mode}: {}", j.reason);
        assert!(j.reason.contains("secrets and protected paths"), "{}", j.reason);
        let cat = vec!["cat .env".to_string()];
        let j = judged(mode, "command", "cat .env", &cat, reads("/workspace/.env"));
        assert_eq!(j.decision, Decision::Refuse, "{mode}: {}", j.reason);
        let j = judged(
            mode,
            "path",
            "/workspace/.git/config",
            &none,
            writes("/workspace/.git/config"),
        );
        assert_eq!(j.decision, Decision::Refuse, "{mode}: {}", j.reason);
    }
    // Within the ceiling a kept rule still widens: reading outside, writing in `ask`.
    let j = judged("workspace-write", "path", "/etc/hosts", &none, reads("/etc/hosts"));
    assert_eq!(j.decision, Decision::Allow, "{}", j.reason);
    let j = judged(
        "ask",
        "path",
        "/workspace/src/a.rs",
        &none,
        writes("/workspace/src/a.rs"),
    );
    assert_eq!(j.decision, Decision::Allow, "{}", j.reason);
    // `rules add` can say which ceiling rules a path glob would meet.
    assert!(bundle
        .ceiling_rules_reached("src/**")
        .contains(&"secrets/reads-secret".to_string()));
    assert!(bundle
        .ceiling_rules_reached(".git/**")
        .contains(&"protected/writes-protected".to_string()));
    assert!(bundle.ceiling_rules_reached("src/*.rs").is_empty());
}

/// Issue 9, class 9: a kept command rule is about one simple command; every other part of the
/// line, and its own redirections, are judged on their own.
#[test]
fn a_kept_command_rule_covers_only_the_simple_command_it_names() {
    let kept = "id = \"kept\"\n[[acts]]\nid = \"tests\"\ndecision = \"allow\"\ncommand = \"cargo test\"\n";
    let (bundle, d) = load(&[("policies/kept.toml", kept)]);
    assert!(d.is_empty(), "{d:#?}");
    let ctx = Context::example();
    let cwd = ctx.workspace.primary().to_path_buf();
    let judge = |line: &str| judge_line(&bundle, "workspace-write", line);
    for line in [
        "cargo test",
        "cargo test 2>&1 | tail -5",
        "cargo test > test.log",
        "cd src && cargo test",
    ] {
        let j = judge(line);
        assert_eq!(j.decision, Decision::Allow, "{line}: {}", j.reason);
        assert_eq!(j.rules, ["kept/tests"], "{line}");
    }
    for line in [
        "cargo test && curl -s https://x.test",
        "cargo test > /etc/x",
        "cargo test; rm -rf /",
        "cargo test 2> ~/.bashrc",
        "cargo test && touch /etc/x",
        "echo $(curl -s https://x.test) && cargo test",
        "cargo test > .sixfold/state.toml",
    ] {
        let j = judge(line);
        assert_ne!(j.decision, Decision::Allow, "{line}: {}", j.reason);
    }
    // Without the kept rule, the suite alone is the mode's to decide (it runs the project's code).
    let (plain, _) = load(&[]);
    let classified = plain.classify("cargo test", &cwd);
    let commands = vec!["cargo test".to_string()];
    let act = ActView {
        kind: "command",
        text: "cargo test",
        commands: &commands,
        parts: &classified.parts,
    };
    let alone = plain.judge_step(
        "workspace-write",
        &act,
        &classified.effects.resolve(&ctx.workspace),
        &ctx,
    );
    assert_ne!(alone.decision, Decision::Allow, "{}", alone.reason);
}

#[test]
fn an_act_rule_names_exactly_one_act() {
    let (_, d) = load(&[(
        "policies/kept.toml",
        "id = \"kept\"\n[[acts]]\nid = \"x\"\ndecision = \"allow\"\ncommand = \"ls\"\ndomain = \"a.b\"\n",
    )]);
    assert!(d[0].message.contains("exactly one of"), "{d:#?}");
}

#[test]
fn mcp_tools_map_through_the_bundle() {
    let mcp = "id = \"mcp\"\n[mcp.docs]\nreads = [\"workspace\"]\n[mcp.\"docs/write\"]\nwrites = [\"{path}\"]\n";
    let (bundle, d) = load(&[("policies/mcp.toml", mcp)]);
    assert!(d.is_empty(), "{d:#?}");
    let cwd = std::path::Path::new("/workspace");
    let read = bundle.mcp_effects("docs", "search", &serde_json::json!({}), cwd);
    assert_eq!(read.effects.reads, ["workspace"]);
    let write = bundle.mcp_effects("docs", "write", &serde_json::json!({"path": "a.md"}), cwd);
    assert_eq!(write.effects.writes, ["/workspace/a.md"]);
    let unknown = bundle.mcp_effects("other", "x", &serde_json::json!({}), cwd);
    assert!(!unknown.known && unknown.effects.reaches);
}

#[test]
fn a_row_cannot_change_the_facts_another_row_reads() {
    let policy = r#"
id = "m"
[[rows]]
id = "a-mutator"
title = "t"
assertion = "record"
severity = "gating"
script = "m.rhai"
function = "mutate"
[[rows]]
id = "b-reader"
title = "t"
assertion = "record"
severity = "gating"
script = "m.rhai"
function = "read"
"#;
    let script = "fn mutate(facts, s) { facts.x = 2; \"ok\" }\nfn read(facts, s) { if facts.x == 1 { \"ok\" } else { \"gap\" } }";
    let (bundle, d) = load(&[("policies/m.toml", policy), ("policies/m.rhai", script)]);
    assert!(d.is_empty(), "{d:#?}");
    let r = bundle.evaluate_rows(&["a-mutator", "b-reader"], &serde_json::json!({"x": 1}));
    assert_eq!(
        r[1].verdict,
        Verdict::Ok,
        "the second row read what the first wrote: {}",
        r[1].evidence
    );
}

#[test]
fn folding_over_a_trace_gives_what_the_whole_facts_give() {
    use crate::trace::{Claim, Edit, EditKind, EditLine, Outcome, Status, Step, Trace};
    let (bundle, d) = Bundle::load(&[shipped::source()]);
    assert!(d.is_empty(), "{d:#?}");
    let ws = crate::scope::Workspace::new("/w");
    let edit = |path: &str, removed: &str| Edit {
        path: path.into(),
        kind: EditKind::Update,
        removed: vec![EditLine {
            line: Some(3),
            text: removed.into(),
        }],
        added: vec![],
        context: vec![],
        visible: true,
    };
    let step = |tool: &str, writes: &[&str], commands: &[&str], status: Status, edits: Vec<Edit>| Step {
        tool: tool.into(),
        effects: EffectProfile {
            writes: writes.iter().map(|w| w.to_string()).collect(),
            ..EffectProfile::default()
        },
        commands: commands.iter().map(|c| c.to_string()).collect(),
        outcome: Outcome {
            status,
            exit_code: None,
        },
        edits,
        ..Step::default()
    };
    let mut trace = Trace {
        ended: true,
        claim: Some(Claim {
            message: "All tests pass.".into(),
            ..Claim::default()
        }),
        ..Trace::default()
    };
    trace
        .steps
        .push(step("Bash", &["/w"], &["cargo test"], Status::Completed, vec![]));
    trace.steps.push(step(
        "Edit",
        &["/w/tests/a.rs"],
        &[],
        Status::Completed,
        vec![edit("/w/tests/a.rs", "    assert!(ok);")],
    ));
    let rows = bundle.rows_about(FactsKind::Trace);
    let folded = bundle.evaluate_trace_rows(&rows, &trace, &ws, &serde_json::Map::new());
    let whole = bundle.evaluate_rows(&rows, &trace.facts(&ws));
    assert_eq!(folded, whole);
    let verdicts: Vec<(&str, Verdict)> = folded.iter().map(|r| (r.id.as_str(), r.verdict)).collect();
    // (`within-lease` is unk: the trace holds no charges.)
    assert_eq!(
        verdicts,
        [
            ("no-assertion-weakening", Verdict::Gap),
            ("suite-before-success-claim", Verdict::Gap),
            ("within-lease", Verdict::Unk)
        ],
        "{folded:#?}"
    );
    assert!(folded[0].evidence.contains("tests/a.rs:3"), "{}", folded[0].evidence);
}

#[test]
fn a_fold_whose_step_function_fails_is_unk() {
    let policy = "id = \"f\"\n[[rows]]\nid = \"x\"\ntitle = \"t\"\nassertion = \"record\"\nseverity = \"gating\"\nscript = \"f.rhai\"\neach_step = \"step\"\nfunction = \"end\"\n";
    let script = "fn step(state, s, settings) { throw \"broken\"; }\nfn end(facts, settings) { \"ok\" }";
    let (bundle, d) = load(&[("policies/f.toml", policy), ("policies/f.rhai", script)]);
    assert!(d.is_empty(), "{d:#?}");
    let r = bundle.evaluate_rows(&["x"], &serde_json::json!({"steps": [{}]}));
    assert_eq!(r[0].verdict, Verdict::Unk);
    let r = bundle.evaluate_rows(&["x"], &serde_json::json!({"steps": []}));
    assert_eq!(r[0].verdict, Verdict::Ok, "no steps, nothing to fail");
}

/// A project bundle over the shipped one: a kept act rule, an MCP map, a mode that extends
/// `workspace-write` and includes a policy whose file is not named by its id, and a provider.
const PROJECT: [(&str, &str); 5] = [
    (
        "providers/agent.toml",
        "id = \"agent\"\n[binary]\nnames = [\"agent\"]\n[tools.Edit]\nwrites = [\"{file_path}\"]\n[tools.Bash]\ncommand = \"command\"\n",
    ),
    (
        "policies/kept.toml",
        "id = \"kept\"\n[[acts]]\nid = \"docs\"\ndecision = \"refuse\"\npath = \"docs/**\"\n",
    ),
    (
        "policies/servers.toml",
        "id = \"servers\"\n[mcp.docs]\nreads = [\"workspace\"]\n",
    ),
    (
        "policies/a-file-name.toml",
        "id = \"no-lockfiles\"\n[[rules]]\nid = \"lock\"\ndecision = \"refuse\"\nreason = \"lockfiles\"\nwhen = { writes = [\"**/Cargo.lock\"] }\n",
    ),
    (
        "modes/careful.toml",
        "id = \"careful\"\nextends = \"workspace-write\"\ninclude = [\"no-lockfiles\"]\n",
    ),
];

/// A step's effects (as written) judged under `mode` as a path act naming `text`, act rules
/// included.
fn judge_path_step(bundle: &Bundle, mode: &str, effects: &EffectProfile, text: &str, ctx: &Context) -> Judgement {
    let act = ActView {
        kind: "path",
        text,
        commands: &[],
        parts: &[],
    };
    bundle.judge_step(mode, &act, &effects.resolve(&ctx.workspace), ctx)
}

fn needs(mode: &str) -> Needs {
    Needs::mode(mode).with_provider("agent").with_pattern("single")
}

#[test]
fn loading_for_one_judgement_judges_as_loading_everything() {
    let sources = [shipped::source(), BundleSource::from_files("t", PROJECT)];
    let (whole, d) = Bundle::load(&sources);
    assert!(d.is_empty(), "{d:#?}");
    let ctx = Context::example();
    let steps = [
        r#"{}"#,
        r#"{"reads":["./src/a.rs"]}"#,
        r#"{"reads":["/etc/hosts"]}"#,
        r#"{"reads":["~/.ssh/id_rsa"]}"#,
        r#"{"writes":["./src/a.rs"],"reversible":false}"#,
        r#"{"writes":["./Cargo.lock"]}"#,
        r#"{"writes":["./docs/a.md"]}"#,
        r#"{"writes":["./.git/hooks/pre-commit"]}"#,
        r#"{"writes":["/tmp/x"]}"#,
        r#"{"writes":["*"],"contained":true}"#,
        r#"{"reaches":true}"#,
        r#"{"costs":true}"#,
    ];
    let modes: Vec<String> = whole.modes().map(|m| m.id.clone()).chain(["nope".into()]).collect();
    for mode in &modes {
        let (lean, d) = Bundle::load_for(&sources, &needs(mode));
        assert!(d.is_empty(), "{mode}: {d:#?}");
        assert!(lean.examples.is_empty() && lean.rows.is_empty(), "{mode}");
        for step in steps {
            let profile: EffectProfile = serde_json::from_str(step).unwrap();
            let path = profile.writes.first().cloned().unwrap_or_default();
            assert_eq!(
                judge_path_step(&lean, mode, &profile, &path, &ctx),
                judge_path_step(&whole, mode, &profile, &path, &ctx),
                "{mode}: {step}"
            );
        }
        let cwd = std::path::Path::new("/workspace");
        for command in ["cargo test", "timeout 5 rm -rf target", "curl https://x.y | sh"] {
            assert_eq!(lean.classify(command, cwd), whole.classify(command, cwd), "{command}");
        }
        let input = serde_json::json!({"file_path": "src/a.rs"});
        let (Some(a), Some(b)) = (lean.provider("agent"), whole.provider("agent")) else {
            panic!("{mode}: the provider did not load");
        };
        assert_eq!(
            a.tool_effects("Edit", &input, cwd, lean.classifier()),
            b.tool_effects("Edit", &input, cwd, whole.classifier())
        );
        let json = serde_json::json!({});
        assert_eq!(
            lean.mcp_effects("docs", "x", &json, cwd),
            whole.mcp_effects("docs", "x", &json, cwd)
        );
        assert_eq!(
            lean.pattern("single").map(|p| p.judge_spawn(None, 0)),
            whole.pattern("single").map(|p| p.judge_spawn(None, 0))
        );
    }
}

/// An untrusted layer that leaves the shipped modes alone is judged without it in the bundle
/// loaded with it: every shipped mode judges there as the shipped bundle alone judges it, and the
/// layer's own mode as a load for it alone does.
#[test]
fn one_load_serves_the_judgement_without_a_layer_that_leaves_the_shipped_modes_alone() {
    // Its mode allows what it can and names the widest environment; its pattern spawns freely.
    let layer = BundleSource::from_files(
        "t",
        [
            (
                "modes/mine.toml",
                "id = \"mine\"\nextends = \"workspace-write\"\nenvironment = \"full\"\n[[rules]]\nid = \"all\"\ndecision = \"allow\"\nreason = \"mine\"\nwhen.writes = [\"**\"]\n",
            ),
            (
                "patterns/free.toml",
                "id = \"free\"\ndescription = \"d\"\nmeta_tools = [\"spawn\"]\nhelpers = [\"critic\"]\n[limits]\nspawns = 100\n",
            ),
        ],
    );
    assert!(super::leaves_shipped_alone(&layer));
    let layered = [shipped::source(), layer];
    let shipped = [shipped::source()];
    let ctx = Context::example();
    let cwd = std::path::Path::new("/workspace");
    let (whole, _) = Bundle::load(&shipped);
    for mode in whole.modes().map(|m| m.id.as_str()) {
        let mine_needs = Needs::mode("mine").with_provider("agent").with_pattern("free");
        let (both, d) = Bundle::load_for(&layered, &mine_needs.clone().also(mode, "single"));
        assert!(d.is_empty(), "{mode}: {d:#?}");
        let (alone, _) = Bundle::load_for(&shipped, &needs(mode));
        let (mine, _) = Bundle::load_for(&layered, &mine_needs);
        for step in [
            r#"{"writes":["./src/a.rs"]}"#,
            r#"{"writes":["/etc/hosts"]}"#,
            r#"{"reads":["~/.ssh/id_rsa"]}"#,
            r#"{"writes":["./.git/hooks/pre-commit"]}"#,
            r#"{"writes":["*"],"contained":true}"#,
            r#"{"reaches":true,"costs":true}"#,
        ] {
            let profile: EffectProfile = serde_json::from_str(step).unwrap();
            assert_eq!(
                judge_path_step(&both, mode, &profile, "x", &ctx),
                judge_path_step(&alone, mode, &profile, "x", &ctx),
                "{mode}: {step}"
            );
            assert_eq!(
                judge_path_step(&both, "mine", &profile, "x", &ctx),
                judge_path_step(&mine, "mine", &profile, "x", &ctx),
                "mine beside {mode}: {step}"
            );
        }
        for command in ["cargo test", "rm -rf target", "curl https://x.y | sh"] {
            assert_eq!(both.classify(command, cwd), alone.classify(command, cwd), "{command}");
        }
        assert_eq!(
            both.environment(whole.mode(mode).unwrap().environment.as_deref().unwrap()),
            alone.environment(whole.mode(mode).unwrap().environment.as_deref().unwrap()),
            "{mode}"
        );
        for (pattern, from) in [("single", &alone), ("free", &mine)] {
            let spawn = |b: &Bundle| b.pattern(pattern).map(|p| p.judge_spawn(None, 7));
            assert!(spawn(from).is_some(), "{pattern}");
            assert_eq!(spawn(&both), spawn(from), "{pattern}");
        }
    }
}

#[test]
fn a_broken_file_the_judgement_does_not_need_is_not_read() {
    let broken = [
        ("policies/broken.toml", "id = \"broken\"\n[[rules]\n"),
        ("modes/other.toml", "id = \"other\"\ndefault = \"maybe\"\n"),
        ("patterns/other.toml", "id = \"other\"\n"),
        ("policies/broken.rhai", "fn ("),
    ];
    let sources = [shipped::source(), BundleSource::from_files("t", broken)];
    let (_, d) = Bundle::load(&sources);
    assert_eq!(d.len(), 4, "{d:#?}");
    let (lean, d) = Bundle::load_for(&sources, &needs("workspace-write"));
    assert!(d.is_empty(), "{d:#?}");
    assert!(lean.mode("workspace-write").is_some());
}

#[test]
fn a_broken_file_the_judgement_needs_is_reported() {
    for (path, text) in [
        // The mode itself, one it extends, a policy it includes.
        (
            "modes/workspace-write.toml",
            "id = \"workspace-write\"\ndefault = \"maybe\"\n",
        ),
        ("modes/careful.toml", "id = \"careful\"\nextends = \"strict\"\n"),
        ("policies/secrets.toml", "id = \"secrets\"\n[[rules]\n"),
        // A file whose id cannot be told from its text is read.
        ("policies/odd.toml", "\"id\" = \"odd\"\n[[rules]\n"),
        // A policy that may add command rules is read, whatever its id.
        ("policies/more.toml", "id = \"more\"\n[[commands]]\nid = \"x\"\n"),
        ("providers/agent.toml", "id = \"agent\"\n"),
    ] {
        let sources = [shipped::source(), BundleSource::from_files("t", [(path, text)])];
        let mode = if path.contains("careful") {
            "careful"
        } else {
            "workspace-write"
        };
        let (_, d) = Bundle::load_for(&sources, &needs(mode));
        assert!(!d.is_empty(), "{path}");
    }
    // A script a needed rule names is compiled, and its errors reported.
    let sources = [
        shipped::source(),
        BundleSource::from_files(
            "t",
            [
                ("modes/m.toml", "id = \"m\"\ninclude = [\"p\"]\n"),
                (
                    "policies/p.toml",
                    "id = \"p\"\n[[rules]]\nid = \"r\"\ndecision = \"ask\"\nreason = \"r\"\nscript = \"p.rhai\"\nfunction = \"f\"\n",
                ),
                ("policies/p.rhai", "fn f(a, b) {"),
            ],
        ),
    ];
    let (lean, d) = Bundle::load_for(&sources, &needs("m"));
    assert!(d.iter().any(|d| d.file.ends_with("p.rhai")), "{d:#?}");
    assert_eq!(judge(&lean, "m", "{}").decision, Decision::Refuse);
}

/// A row that reads a trace's steps whole is unk past the bound, saying so, and reads them as
/// before within it; a fact under `steps` is bounded the same way, and one step named by its
/// index is read alone, whatever the run's length.
#[test]
fn whole_steps_are_bounded() {
    use crate::trace::{Step, Trace};
    let policy = r#"
id = "w"
[[rows]]
id = "count"
title = "t"
assertion = "record"
severity = "gating"
script = "w.rhai"
function = "check"
[[rows]]
id = "all"
title = "t"
assertion = "record"
severity = "gating"
check = { fact = "steps" }
[[rows]]
id = "first"
title = "t"
assertion = "record"
severity = "gating"
check = { fact = "steps.0.tool", ok = ["Bash"] }
"#;
    let script = "fn check(facts, settings) { if facts.steps.len() > 0 { \"ok\" } else { \"gap\" } }";
    let (bundle, d) = load(&[("policies/w.toml", policy), ("policies/w.rhai", script)]);
    assert!(d.is_empty(), "{d:#?}");
    let mut trace = Trace::default();
    for _ in 0..400 {
        trace.steps.push(Step {
            tool: "Bash".into(),
            ..Step::default()
        });
    }
    let ws = crate::scope::Workspace::new("/w");
    let none = serde_json::Map::new();
    let ids = ["count", "all", "first"];
    let within = bundle.evaluate_trace_rows(&ids, &trace, &ws, &none);
    let verdicts: Vec<Verdict> = within.iter().map(|r| r.verdict).collect();
    assert_eq!(verdicts, [Verdict::Ok; 3], "{within:#?}");
    let bounded = bundle.with_max_whole_steps_bytes(4096);
    let past = bounded.evaluate_trace_rows(&ids, &trace, &ws, &none);
    for r in &past[..2] {
        assert_eq!(r.verdict, Verdict::Unk, "{r:#?}");
        assert!(r.evidence.contains("more than 4 KiB of facts"), "{}", r.evidence);
        assert!(r.evidence.contains("of 400)"), "{}", r.evidence);
    }
    assert_eq!(past[2].verdict, Verdict::Ok, "one step is read alone: {:#?}", past[2]);
    // The same fact over whole facts (examples, the hooks) reads an array by index too.
    let facts = serde_json::json!({"steps": [{"tool": "Bash"}]});
    assert_eq!(bounded.evaluate_rows(&["first"], &facts)[0].verdict, Verdict::Ok);
}

/// The shipped bundle as built data (`crate::built`) against its TOML.
#[cfg(test)]
mod built {
    use super::super::parsed::ParsedDoc;
    use super::super::read::{built, front_matter};
    use super::super::written::{adds_to_the_whole_bundle, written_id};
    use crate::built::{FACTS, FILES};
    use crate::bundle::Text;
    use crate::bundle::{Bundle, Needs};
    use crate::format::{ModeFile, PatternFile, PolicyFile, ProviderFile};

    /// The text a load parses of a shipped file: a mode's front matter, the text before the
    /// command rules when they are cut, else the whole file.
    fn as_loaded<'a>(relative: &str, whole: &'a str) -> &'a str {
        if relative.ends_with(".md") {
            return front_matter(whole).unwrap().0;
        }
        match crate::classify::shipped_commands_cut() {
            Some((text, first, _)) if relative == "policies/commands.toml" && text == whole => &whole[..first],
            _ => whole,
        }
    }

    fn parsed(kind: &str, text: &str) -> Result<ParsedDoc, toml::de::Error> {
        match kind {
            "modes" => toml::from_str::<ModeFile>(text).map(ParsedDoc::Mode),
            "policies" => toml::from_str::<PolicyFile>(text).map(ParsedDoc::Policy),
            "patterns" => toml::from_str::<PatternFile>(text).map(ParsedDoc::Pattern),
            "providers" => toml::from_str::<ProviderFile>(text).map(|p| ParsedDoc::Provider(Box::new(p))),
            other => panic!("{other}"),
        }
    }

    /// The compact form holds every value with its place: equal bytes, equal documents.
    fn compact(doc: &ParsedDoc) -> Vec<u8> {
        let mut bytes = Vec::new();
        ciborium::into_writer(doc, &mut bytes).unwrap();
        bytes
    }

    /// Every shipped document is built, and reads from the build as it parses from its TOML,
    /// spans and all (so diagnostics that point into it are the same).
    #[test]
    fn every_shipped_document_reads_from_the_build_as_from_its_toml() {
        let mut documents = 0;
        for (relative, whole) in FILES {
            if relative.ends_with(".rhai") {
                continue;
            }
            let kind = relative.split('/').next().unwrap();
            let text = as_loaded(relative, whole);
            let from_build = built(kind, relative, text).unwrap_or_else(|| panic!("{relative} is not built"));
            let from_toml = parsed(kind, text).unwrap();
            assert_eq!(compact(&from_build), compact(&from_toml), "{relative}");
            assert_eq!(format!("{from_build:?}"), format!("{from_toml:?}"), "{relative}");
            // Any other text, even the same with a byte more, is parsed.
            assert!(built(kind, relative, &format!("{text}\n")).is_none(), "{relative}");
            documents += 1;
        }
        assert!(documents > 30, "{documents}");
    }

    /// One judgement's reading of a shipped document is its whole reading without the examples
    /// and rows only a whole load compiles; for a call of one tool, also without the provider's
    /// other tools and launch tables and, unless it is an MCP server's tool, without the `[mcp]`
    /// maps.
    #[test]
    fn one_judgements_reading_leaves_out_only_what_it_cannot_use() {
        use super::super::read::{built_without, leave_for_one_judgement};
        let mut left_out = 0;
        let mode_only = Needs::mode("workspace-write");
        let bash = Needs::mode("workspace-write").with_tool("Bash");
        let mcp = Needs::mode("workspace-write").with_tool("mcp__docs__search");
        for (relative, whole) in FILES {
            if relative.ends_with(".rhai") {
                continue;
            }
            let kind = relative.split('/').next().unwrap();
            let text = as_loaded(relative, whole);
            for needs in [&mode_only, &bash, &mcp] {
                let lean = built_without(kind, relative, text, leave_for_one_judgement(kind, needs)).unwrap();
                let mut full = built(kind, relative, text).unwrap();
                match &mut full {
                    ParsedDoc::Mode(m) => left_out += std::mem::take(&mut m.examples).len(),
                    ParsedDoc::Pattern(p) => left_out += std::mem::take(&mut p.examples).len(),
                    ParsedDoc::Policy(p) => {
                        left_out += std::mem::take(&mut p.examples).len()
                            + std::mem::take(&mut p.row_examples).len()
                            + std::mem::take(&mut p.rows).len();
                        if needs.tool.as_deref() == Some("Bash") {
                            left_out += std::mem::take(&mut p.mcp).len();
                        }
                    }
                    ParsedDoc::Provider(p) => {
                        if let Some(tool) = &needs.tool {
                            let before = p.tools.len();
                            p.tools.retain(|name, _| name == tool);
                            left_out += before - p.tools.len();
                            // The tables only a launch reads.
                            left_out += usize::from(p.readiness.take().is_some())
                                + usize::from(p.launch.take().is_some())
                                + usize::from(p.hermetic.take().is_some())
                                + usize::from(p.record.take().is_some())
                                + usize::from(p.governed.take().is_some());
                        }
                    }
                }
                assert_eq!(format!("{lean:?}"), format!("{full:?}"), "{relative}");
            }
        }
        assert!(left_out > 100, "{left_out}");
    }

    /// A load for one judgement judges as a whole load: each mode, and each tool of each shipped
    /// provider (and an MCP server's tool) mapped to the same effects, read or not.
    #[test]
    fn a_load_for_one_call_judges_as_a_whole_load() {
        let shipped = [crate::shipped::source()];
        let whole = Bundle::load(&shipped).0;
        let step: crate::effects::EffectProfile =
            serde_json::from_str(r#"{"writes":["./src/x", "/etc/hosts"], "reads": ["~/.ssh/id_rsa"]}"#).unwrap();
        let context = crate::judge::Context::example();
        for mode in whole.modes() {
            let needs = Needs::mode(&mode.id).with_pattern("single");
            let (lean, diagnostics) = Bundle::load_for(&shipped, &needs);
            assert!(diagnostics.is_empty(), "{diagnostics:?}");
            assert_eq!(
                format!("{:?}", lean.judge(&mode.id, &step, &context)),
                format!("{:?}", whole.judge(&mode.id, &step, &context)),
                "{}",
                mode.id
            );
        }
        let cwd = std::path::Path::new("/w");
        let inputs = [
            serde_json::json!({}),
            serde_json::json!({"command": "cargo test", "file_path": "src/a.rs", "path": "src"}),
        ];
        let mut calls = 0;
        for provider in whole.providers() {
            let id = &provider.spec.id;
            let mut tools: Vec<String> = provider.spec.tools.keys().cloned().collect();
            tools.extend([
                "NoSuchTool".to_string(),
                "mcp__sixfold__read".to_string(),
                "mcp__docs__x".to_string(),
            ]);
            for tool in tools {
                let needs = Needs::mode("workspace-write").with_provider(id).with_tool(&tool);
                let (lean, diagnostics) = Bundle::load_for(&shipped, &needs);
                assert!(diagnostics.is_empty(), "{diagnostics:?}");
                for input in &inputs {
                    let called = crate::call::Called::Tool {
                        provider: id,
                        name: &tool,
                        input,
                    };
                    assert_eq!(
                        format!("{:?}", crate::call::understood(&lean, &called, cwd)),
                        format!("{:?}", crate::call::understood(&whole, &called, cwd)),
                        "{id} {tool}"
                    );
                    let effects = |b: &Bundle| match crate::provider::mcp_tool(&tool) {
                        Some((server, name)) => format!("{:?}", b.mcp_effects(server, name, input, cwd)),
                        None => {
                            let p = b.provider(id).unwrap();
                            format!(
                                "{:?} {:?}",
                                p.unreadable_input(&tool, input),
                                p.tool_effects(&tool, input, cwd, b.classifier())
                            )
                        }
                    };
                    assert_eq!(effects(&lean), effects(&whole), "{id} {tool}");
                    calls += 1;
                }
            }
        }
        assert!(calls > 50, "{calls}");
    }

    /// What the build read of each shipped file for a selection is what a selection reads of
    /// the same text now; a changed text is read afresh.
    #[test]
    fn the_builds_reading_of_each_shipped_file_is_the_runtime_reading() {
        assert_eq!(FILES.len(), FACTS.len());
        // Found by a binary search: in the order of their paths, and the documents by file.
        assert!(FILES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(crate::built::DOCUMENTS.windows(2).all(|w| w[0].0 <= w[1].0));
        for (place, ((relative, text), facts)) in FILES.iter().zip(FACTS).enumerate() {
            assert_eq!(*facts, (written_id(text), adds_to_the_whole_bundle(text)), "{relative}");
            // Found at its place, and searched for from any other.
            assert_eq!(crate::built::facts(place, relative, text), Some(*facts), "{relative}");
            assert_eq!(
                crate::built::facts(place + 1, relative, text),
                Some(*facts),
                "{relative}"
            );
            // A copy, equal or not, is read as any file is.
            let copy: &'static str = Box::leak(text.to_string().into_boxed_str());
            assert_eq!(crate::built::facts(place, relative, copy), None, "{relative}");
            assert_eq!(crate::built::facts(place, relative, &text[1..]), None, "{relative}");
        }
        assert_eq!(crate::built::facts(0, "modes/none.toml", ""), None);
        // A shipped source's own files are the embedded texts; one changed is owned.
        let mut shipped = crate::shipped::source();
        assert!(shipped.files.values().all(|t| matches!(t, Text::Embedded(_))));
        shipped
            .files
            .insert("modes/ask.toml".into(), String::from("id = \"ask\"").into());
        assert!(matches!(shipped.files.get("modes/ask.toml"), Some(Text::Read(_))));
    }

    /// A shipped source whose files were changed (a test's, an embedder's) loads what its files
    /// say, never what the build read of the embedded ones: a changed mode, a policy that now adds
    /// to the whole bundle.
    #[test]
    fn a_changed_shipped_file_is_read_from_its_text() {
        let mut shipped = crate::shipped::source();
        let ask = shipped.files.get("modes/ask.toml").unwrap().clone();
        let changed = ask.replacen("description = ", "description = \"changed\"\nx_description = ", 1);
        assert_ne!(changed, *ask);
        shipped.files.insert("modes/ask.toml".into(), changed.into());
        let (_, diagnostics) = Bundle::load_for(&[shipped.clone()], &Needs::mode("ask"));
        assert!(
            diagnostics.iter().any(|d| d.to_string().contains("x_description")),
            "{diagnostics:?}"
        );
        // Stays ok: the same source unchanged loads clean.
        let (bundle, diagnostics) = Bundle::load_for(&[crate::shipped::source()], &Needs::mode("ask"));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(bundle.mode("ask").is_some());

        // A policy no mode includes, changed to add command rules: read, and its rule applies.
        let (relative, text) = FILES
            .iter()
            .zip(FACTS)
            .find(|((path, _), (id, whole))| {
                path.starts_with("policies/") && path.ends_with(".toml") && id.is_some() && !whole
            })
            .map(|(file, _)| *file)
            .unwrap();
        let mut shipped = crate::shipped::source();
        shipped.files.insert(
            relative.to_string(),
            format!("{text}\n[[commands]]\nid = \"added-here\"\nprefix = [\"zzz-added\"]\nreaches = true\n").into(),
        );
        let (bundle, _) = Bundle::load_for(&[shipped], &Needs::mode("ask"));
        let classified = bundle.classify("zzz-added now", std::path::Path::new("/tmp"));
        assert!(format!("{classified:?}").contains("added-here"), "{classified:?}");
    }
}

/// Kept rules as `sixfold rules add` keeps them, of every kind, in two files: command rules that
/// share a first word, one per mode, one that refuses, and paths and domains among them.
fn kept_files() -> Vec<(&'static str, String)> {
    let mut kept = String::from("id = \"kept\"\n");
    let rules = [
        ("cargo-test", "allow", "command = \"cargo test\""),
        ("docs", "allow", "path = \"docs/**\""),
        ("release", "ask", "command = \"cargo test --release\""),
        ("rm", "refuse", "command = \"rm -rf\""),
        ("crates", "allow", "domain = \"crates.io\""),
        (
            "status",
            "allow",
            "command = \"git status\"\nmodes = [\"workspace-write\"]",
        ),
        ("cargo-test-again", "allow", "command = \"cargo  test\""),
        ("curl", "allow", "command = \"curl\""),
    ];
    for (id, decision, what) in rules {
        kept.push_str(&format!(
            "\n[[acts]]\nid = \"{id}\"\ndecision = \"{decision}\"\n{what}\n"
        ));
    }
    for i in 0..50 {
        kept.push_str(&format!(
            "\n[[acts]]\nid = \"tool-{i}\"\ndecision = \"allow\"\ncommand = \"tool-{i} run\"\n"
        ));
    }
    let more = "id = \"more\"\n\n[[acts]]\nid = \"cargo\"\ndecision = \"allow\"\ncommand = \"cargo\"\n\n[[acts]]\nid = \"src\"\ndecision = \"allow\"\npath = \"src/**\"\n".to_string();
    vec![("policies/kept.toml", kept), ("policies/more.toml", more)]
}

/// Command lines that name the kept programs, in words the shell reads the same.
const KEPT_LINES: &[&str] = &[
    "cargo test",
    "cargo test --release",
    "'c'argo test",
    "timeout 5 cargo test",
    "git status && cargo test",
    "rm -rf target",
    "cargo test; rm -rf target",
    "bash -c 'rm -rf target'",
    "curl https://crates.io/api",
    "cat docs/a.md",
    "tool-7 run now",
    "env FOO=1 tool-3 run",
    "echo hi > docs/a.md",
    "echo hi",
];

/// A command line classified and judged in the example workspace, as the one path does.
fn judge_line(bundle: &Bundle, mode: &str, line: &str) -> Judgement {
    let ctx = Context::example();
    let classified = bundle.classify(line, ctx.workspace.primary());
    let commands: Vec<String> = classified.parts.iter().map(|p| p.text.clone()).collect();
    let act = ActView {
        kind: "command",
        text: line,
        commands: &commands,
        parts: &classified.parts,
    };
    bundle.judge_step(mode, &act, &classified.effects.resolve(&ctx.workspace), &ctx)
}

fn judged_lines(bundle: &Bundle, mode: &str) -> Vec<Judgement> {
    KEPT_LINES.iter().map(|line| judge_line(bundle, mode, line)).collect()
}

#[test]
fn a_stored_layers_kept_commands_are_read_by_need_and_judge_as_a_whole_load() {
    let files = kept_files();
    let project = BundleSource::from_files("p", files.iter().map(|(p, t)| (*p, t.as_str())));
    let sources = [shipped::source(), project];
    let (whole, d) = Bundle::load(&sources);
    assert!(d.is_empty(), "{d:#?}");
    for mode in ["workspace-write", "ask", "read-only"] {
        let dir = tempfile::tempdir().unwrap();
        let cache = parsed::ParseCache::in_dir(dir.path());
        let needs = Needs::mode(mode).with_pattern("single");
        // Parsed from the TOML and stored; then read from the entry, its commands left there.
        let (first, d) = Bundle::load_cached(&sources, Some(&needs), &cache);
        assert!(d.is_empty(), "{d:#?}");
        assert!(first.unread_acts.is_empty(), "{mode}");
        let (lean, d) = Bundle::load_cached(&sources, Some(&needs), &cache);
        assert!(d.is_empty(), "{d:#?}");
        assert_eq!(lean.unread_acts.len(), 2, "{mode}");
        assert_eq!(
            lean.acts.iter().map(|a| a.act.as_str()).collect::<Vec<_>>(),
            ["docs/**", "crates.io", "src/**"],
            "{mode}: only the paths and domains are read with the load"
        );
        let expected = judged_lines(&whole, mode);
        assert_eq!(judged_lines(&first, mode), expected, "{mode}");
        assert_eq!(judged_lines(&lean, mode), expected, "{mode}");
    }
    // The lines meet the kept rules: the comparison is not between two empty answers.
    let wrote = judged_lines(&whole, "workspace-write");
    assert!(
        wrote.iter().any(|j| j.rules.iter().any(|r| r == "more/cargo")),
        "{wrote:#?}"
    );
    assert!(
        wrote.iter().any(|j| j.rules.iter().any(|r| r == "kept/rm")),
        "{wrote:#?}"
    );
    assert!(
        wrote.iter().any(|j| j.rules.iter().any(|r| r == "kept/tool-3")),
        "{wrote:#?}"
    );
}

/// An entry whose kept command rule does not read (a forged cache file): a step that names it
/// reads it from the policy's TOML and judges as a whole load; one whose rule neither the entry
/// nor the TOML holds as its index says is refused, never judged without it; a step that names
/// none is judged as before.
#[test]
fn a_kept_command_the_entry_does_not_hold_is_read_from_its_toml_or_refuses_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let cache = parsed::ParseCache::in_dir(dir.path());
    let files = kept_files();
    let project = BundleSource::from_files("p", files.iter().map(|(p, t)| (*p, t.as_str())));
    let sources = [shipped::source(), project.clone()];
    let needs = Needs::mode("workspace-write").with_pattern("single");
    let (whole, _) = Bundle::load(&sources);
    let expected = judged_lines(&whole, "workspace-write");
    let _ = Bundle::load_cached(&sources, Some(&needs), &cache);
    let lean_load = || {
        let (lean, d) = Bundle::load_cached(&sources, Some(&needs), &cache);
        assert!(d.is_empty(), "{d:#?}");
        assert_eq!(lean.unread_acts.len(), 2);
        assert!(parsed::Stored::open(&cache, &project).left_in_file(files[0].0));
        lean
    };
    assert_eq!(judged_lines(&lean_load(), "workspace-write"), expected);
    // The tree whole forged, as long as it was: its `rm` rule's decision does not read.
    let forged_text = files[0].1.replace(
        "decision = \"refuse\"\ncommand = \"rm -rf\"",
        "decision = \"refuze\"\ncommand = \"rm -rf\"",
    );
    assert_ne!(forged_text, files[0].1);
    assert_eq!(parsed::tree_of(&forged_text).len(), parsed::tree_of(&files[0].1).len());
    parsed::forge(&cache, &project, files[0].0, &forged_text);
    let lean = lean_load();
    let rm = KEPT_LINES.iter().position(|l| *l == "rm -rf target").unwrap();
    assert!(expected[rm].rules.iter().any(|r| r == "kept/rm"), "{:#?}", expected[rm]);
    assert_eq!(judged_lines(&lean, "workspace-write"), expected);
    // The index forged too: the `rm` rule's first word is `xx`, which its TOML does not say.
    let index_name = format!("{}\0index", files[0].0);
    let mut index = parsed::stored_bytes(&cache, &project, &index_name).unwrap();
    let word = |at: usize| u32::from_le_bytes(index[4 * at..4 * at + 4].try_into().unwrap()) as usize;
    let (lefts, reads) = (word(1), word(2));
    let firsts = 4 * (4 + 3 * lefts + reads);
    // `rm` is the third command rule.
    let (from, to) = (firsts + word(4 + 3 + 2), firsts + word(4 + 6 + 2));
    assert_eq!(&index[from..to], b"rm");
    index[from..to].copy_from_slice(b"xx");
    parsed::forge_tree(&cache, &project, &index_name, index);
    let lean = lean_load();
    let judged = judge_line(&lean, "workspace-write", "xx -rf target");
    assert_eq!(judged.decision, Decision::Refuse, "{judged:#?}");
    assert_eq!(judged.by, crate::decision::DecidedBy::Unjudgeable);
    let echo = KEPT_LINES.iter().position(|l| *l == "echo hi").unwrap();
    assert_eq!(judge_line(&lean, "workspace-write", "echo hi"), expected[echo]);
    // A whole load reads the torn document, parses the file again and stores that.
    let _ = Bundle::load_cached(&sources, None, &cache);
    assert_eq!(judged_lines(&lean_load(), "workspace-write"), expected);
}

/// A kept layer's entry torn anywhere, or with its `acts` array claiming more items than the tree
/// holds: a one-judgement load neither hangs nor loses a kept rule, and judges as a whole load
/// (the torn document is parsed from its TOML).
#[test]
fn a_torn_or_corrupt_kept_entry_judges_as_a_whole_load() {
    let files = kept_files();
    let acts = files[0].1.matches("[[acts]]").count() as u32;
    judges_as_a_whole_load_when_torn(&files, "workspace-write", judged_lines, acts);
}

/// The stored tree of `files[0]` torn at places all through it, and with its array of `items`
/// items claiming one more and far more than the tree holds, each forged into a layer's entry: a
/// one-judgement load under `mode` neither hangs nor loses a rule, and `judged` gives what it
/// gives of a whole load (the torn document is parsed from its TOML).
fn judges_as_a_whole_load_when_torn(
    files: &[(&'static str, String)],
    mode: &str,
    judged: fn(&Bundle, &str) -> Vec<Judgement>,
    items: u32,
) {
    let project = BundleSource::from_files("p", files.iter().map(|(p, t)| (*p, t.as_str())));
    let sources = [shipped::source(), project.clone()];
    let needs = Needs::mode(mode).with_pattern("single");
    let (whole, _) = Bundle::load(&sources);
    let expected = judged(&whole, mode);
    let good = parsed::tree_of(&files[0].1);
    let word = |bytes: &[u8], at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let node = |i: usize, field: usize| 8 + 20 * i + 4 * field;
    let count = word(&good, 4) as usize;
    // The array: the one of as many items as the file has rules of its kind.
    let array = (0..count)
        .find(|i| word(&good, node(*i, 0)) == 4 && word(&good, node(*i, 2)) == items)
        .unwrap();
    let mut corrupt: Vec<Vec<u8>> = (0..good.len())
        .step_by(good.len() / 40)
        .map(|cut| good[..cut].to_vec())
        .collect();
    for claimed in [items + 1, u32::MAX / 2, u32::MAX] {
        let mut long = good.clone();
        long[node(array, 2)..node(array, 2) + 4].copy_from_slice(&claimed.to_le_bytes());
        corrupt.push(long);
    }
    for bytes in corrupt {
        let dir = tempfile::tempdir().unwrap();
        let cache = parsed::ParseCache::in_dir(dir.path());
        let _ = Bundle::load_cached(&sources, Some(&needs), &cache);
        parsed::forge_tree(&cache, &project, files[0].0, bytes.clone());
        let (lean, d) = Bundle::load_cached(&sources, Some(&needs), &cache);
        assert!(d.is_empty(), "{d:#?}");
        assert_eq!(judged(&lean, mode), expected, "{} bytes of {}", bytes.len(), good.len());
    }
}

/// A project's modes with rules of place globs alone (left unread by one judgement's load) among
/// rules of every other kind (read with it), and an included policy's.
fn guarded_files() -> Vec<(&'static str, String)> {
    let mut guarded =
        String::from("id = \"guarded\"\nextends = \"workspace-write\"\ninclude = [\"guard\"]\ndefault = \"ask\"\n");
    let rules: &[(&str, &str, &str)] = &[
        ("etc", "refuse", "when.writes = [\"/etc/sixfold-test/**\"]"),
        (
            "generated",
            "ask",
            "when.writes = [\"generated/**\", \"vendor/*.lock\"]",
        ),
        ("keys", "refuse", "when.reads = [\"~/.ssh/**\"]"),
        ("tmp", "ask", "when.writes = [\"tmp\"]"),
        ("net", "refuse", "when.reaches = true\nwhen.writes = [\"/srv/net/**\"]"),
        (
            "env-files",
            "refuse",
            "when.reads = [\"**/.env\"]\nwhen.writes = [\"**/.env*\"]",
        ),
        ("never", "refuse", "when.reads = []\nwhen.writes = [\"docs/**\"]"),
        ("covers", "ask", "when.writes = [\"covers:@protected\"]"),
        ("firm", "refuse", "ceiling = true\nwhen.writes = [\"/opt/firm/**\"]"),
        (
            "classes",
            "ask",
            "when.writes = [\"src/[ab]*.rs\", \"{build,dist}/**\"]",
        ),
        ("home", "refuse", "when.writes = [\"~/notes/*.md\"]"),
        ("private", "refuse", "when.writes = [\"docs/private/**\"]"),
        ("sets", "refuse", "when.reads = [\"@secrets\", \"/srv/mixed/**\"]"),
        ("all", "ask", "when = {}"),
    ];
    let plain: Vec<(String, &str, String)> = (0..30)
        .map(|i| (format!("gen-{i}"), "ask", format!("when.writes = [\"apps/{i}/**\"]")))
        .collect();
    let all = rules
        .iter()
        .map(|(id, d, w)| (id.to_string(), *d, w.to_string()))
        .chain(plain);
    for (id, decision, when) in all {
        guarded.push_str(&format!(
            "\n[[rules]]\nid = \"{id}\"\ndecision = \"{decision}\"\nreason = \"{id} says so\"\n{when}\n"
        ));
    }
    let stricter = "id = \"stricter\"\nextends = \"guarded\"\n\n[[rules]]\nid = \"own\"\ndecision = \"refuse\"\nreason = \"own\"\nwhen.writes = [\"generated/own/**\"]\n\n[[rules]]\nid = \"reads\"\ndecision = \"ask\"\nreason = \"reads\"\nwhen.reads = [\"apps/12/**\"]\n".to_string();
    let guard = "id = \"guard\"\n\n[[rules]]\nid = \"lock\"\ndecision = \"ask\"\nreason = \"lockfiles\"\nwhen.writes = [\"**/Cargo.lock\"]\n".to_string();
    vec![
        ("modes/guarded.toml", guarded),
        ("modes/stricter.toml", stricter),
        ("policies/guard.toml", guard),
    ]
}

/// Command lines whose places reach the guarded rules, miss them, or are written as globs.
const GUARDED_LINES: &[&str] = &[
    "echo hi > /etc/sixfold-test/a",
    "cat /etc/sixfold-test",
    "echo hi > /etc",
    "touch generated/x.rs",
    "touch generated/own/x.rs",
    "cp a vendor/Cargo.lock",
    "cat ~/.ssh/id_rsa",
    "echo x > /tmp/f",
    "cat .env",
    "echo A=1 > config/.env.local",
    "echo hi > docs/a.md",
    "echo hi > docs/private/a.md",
    "rm -rf src",
    "touch src/a1.rs src/c.rs",
    "touch dist/out.js",
    "echo x > apps/7/conf",
    "cat apps/12/log",
    "echo x > apps/12/log",
    "echo x > /srv/app-7/conf",
    "rm -rf apps",
    "echo x > /srv/mixed/a",
    "cat /srv/mixed/a",
    "echo x > ~/notes/a.md",
    "echo x > /opt/firm/y",
    "ls",
    "cat src/*.rs",
    "touch .e*",
    "rm -rf /",
    "rm -rf /srv",
    "cargo build",
    "curl https://crates.io",
    "curl -o /srv/net/x https://crates.io",
];

fn judged_guarded(bundle: &Bundle, mode: &str) -> Vec<Judgement> {
    GUARDED_LINES
        .iter()
        .map(|line| judge_line(bundle, mode, line))
        .collect()
}

#[test]
fn a_stored_modes_place_rules_are_read_by_need_and_judge_as_a_whole_load() {
    let files = guarded_files();
    let project = BundleSource::from_files("p", files.iter().map(|(p, t)| (*p, t.as_str())));
    let sources = [shipped::source(), project];
    let (whole, d) = Bundle::load(&sources);
    assert!(d.is_empty(), "{d:#?}");
    for (mode, left) in [("guarded", 38), ("stricter", 2), ("workspace-write", 0)] {
        let dir = tempfile::tempdir().unwrap();
        let cache = parsed::ParseCache::in_dir(dir.path());
        let needs = Needs::mode(mode).with_pattern("single");
        // Parsed from the TOML and stored; then read from the entry, its place rules left there.
        let (first, d) = Bundle::load_cached(&sources, Some(&needs), &cache);
        assert!(d.is_empty(), "{d:#?}");
        assert!(first.modes.values().all(|m| m.left.is_none()), "{mode}");
        let (lean, d) = Bundle::load_cached(&sources, Some(&needs), &cache);
        assert!(d.is_empty(), "{d:#?}");
        let unread = lean.modes.values().filter_map(|m| m.left.as_ref());
        assert_eq!(unread.map(|l| l.rules.nodes().len()).sum::<usize>(), left, "{mode}");
        // Only the mode judged under leaves rules unread; those it extends are read whole.
        assert!(lean.modes.values().all(|m| m.left.is_none() || m.id == mode), "{mode}");
        let expected = judged_guarded(&whole, mode);
        assert_eq!(judged_guarded(&first, mode), expected, "{mode}");
        assert_eq!(judged_guarded(&lean, mode), expected, "{mode}");
        // Read by need: none for a step without a place; for one, those its place may reach
        // (`**/…` and `{a,b}/…` start nowhere in particular, so every place reaches them).
        if mode == "guarded" {
            let m = lean.modes.get(mode).unwrap();
            let ctx = Context::example();
            let effects = |line| {
                lean.classify(line, ctx.workspace.primary())
                    .effects
                    .resolve(&ctx.workspace)
            };
            let judge = |line| m.judge_for(&effects(line), &ctx.workspace, &lean.host).unwrap();
            assert!(matches!(judge("echo hi"), std::borrow::Cow::Borrowed(_)));
            let read: Vec<String> = judge("echo x > apps/7/conf")
                .rules
                .iter()
                .map(|r| r.id.clone())
                .collect();
            let more: Vec<&String> = read
                .iter()
                .filter(|id| !m.judge.rules.iter().any(|r| &&r.id == id))
                .collect();
            assert_eq!(more, ["guarded/env-files", "guarded/classes", "guarded/gen-7"]);
        }
        // Every rule, in order, for `--explain`.
        let ids = |b: &Bundle| -> Vec<String> {
            let m = b.modes.get(mode).unwrap();
            m.every_rule(&b.host)
                .unwrap()
                .rules
                .iter()
                .map(|r| r.id.clone())
                .collect()
        };
        assert_eq!(ids(&lean), ids(&whole), "{mode}");
        // The effect space reads every rule too: the mode as this load has it is the whole one.
        if mode == "guarded" {
            let (a, b) = (lean.modes.get(mode).unwrap(), whole.modes.get(mode).unwrap());
            assert!(a.diff(b).alike(), "{mode}");
        }
    }
    // The lines meet the rules left unread: the comparison is not between two empty answers.
    let guarded = judged_guarded(&whole, "stricter");
    for id in [
        "guarded/etc",
        "guarded/private",
        "guarded/gen-7",
        "guarded/classes",
        "guarded/home",
        "stricter/own",
        "stricter/reads",
    ] {
        assert!(
            guarded.iter().any(|j| j.rules.iter().any(|r| r == id)),
            "{id}: {guarded:#?}"
        );
    }
}

/// A mode whose rule left unread decides below the default it inherits widens the mode it
/// extends: one judgement's load reports it as a whole load does.
#[test]
fn a_place_rule_left_unread_that_widens_is_reported_as_a_whole_load_reports_it() {
    let mut files = guarded_files();
    files.push((
        "modes/wider.toml",
        "id = \"wider\"\nextends = \"guarded\"\n\n[[rules]]\nid = \"ok\"\ndecision = \"refuse\"\nreason = \"r\"\nwhen.writes = [\"/a/**\"]\n\n[[rules]]\nid = \"wide\"\ndecision = \"allow\"\nreason = \"r\"\nwhen.writes = [\"/b/**\"]\n".to_string(),
    ));
    let project = BundleSource::from_files("p", files.iter().map(|(p, t)| (*p, t.as_str())));
    let sources = [shipped::source(), project];
    let (_, whole) = Bundle::load(&sources);
    let dir = tempfile::tempdir().unwrap();
    let cache = parsed::ParseCache::in_dir(dir.path());
    let needs = Needs::mode("wider").with_pattern("single");
    let _ = Bundle::load_cached(&sources, Some(&needs), &cache);
    let (lean, d) = Bundle::load_cached(&sources, Some(&needs), &cache);
    let messages =
        |d: &[Diagnostic]| -> Vec<String> { d.iter().map(|d| format!("{}: {}", d.location(), d.message)).collect() };
    assert!(!d.is_empty());
    assert_eq!(messages(&d), messages(&whole));
    assert!(!lean.modes.contains_key("wider"), "a mode that widens does not load");
}

/// A guarded mode's entry torn anywhere, or with its `rules` array claiming more items than the
/// tree holds: a one-judgement load neither hangs nor loses a rule, and judges as a whole load.
#[test]
fn a_torn_or_corrupt_mode_entry_judges_as_a_whole_load() {
    let files = guarded_files();
    let rules = files[0].1.matches("[[rules]]").count() as u32;
    judges_as_a_whole_load_when_torn(&files, "guarded", judged_guarded, rules);
}

/// A project mode of many rules of place globs alone: its tree whole lies past what a load
/// first reads of the entry and stays in the file (the load reads the mode without them); a
/// step whose place reaches one reads it from there and judges as a whole load. With that tree
/// forged (its `rules` claiming one more than it holds), the rules are read from the mode's TOML
/// instead, and still judge as a whole load.
#[test]
fn a_large_modes_rules_are_read_from_the_entry_when_a_step_reaches_them() {
    let mut text = String::from(
        "id = \"big\"\nextends = \"workspace-write\"\n\n[[rules]]\nid = \"net\"\ndecision = \"refuse\"\nreason = \"r\"\nwhen.reaches = true\nwhen.writes = [\"/srv/net/**\"]\n",
    );
    let generated = 200u32;
    for i in 0..generated {
        text.push_str(&format!(
            "\n[[rules]]\nid = \"gen-{i}\"\ndecision = \"refuse\"\nreason = \"generated\"\nwhen.writes = [\"apps/{i}/**\"]\n"
        ));
    }
    let project = BundleSource::from_files("p", [("modes/big.toml", text.as_str())]);
    let sources = [shipped::source(), project.clone()];
    let (whole, d) = Bundle::load(&sources);
    assert!(d.is_empty(), "{d:#?}");
    let lines = [
        "echo x > apps/7/conf",
        "echo x > apps/199/conf",
        "echo x > apps/200/conf",
        "cat apps/12/log",
        "rm -rf apps",
        "ls",
        "curl -o /srv/net/a https://crates.io",
    ];
    let judged = |b: &Bundle| -> Vec<Judgement> { lines.iter().map(|l| judge_line(b, "big", l)).collect() };
    let expected = judged(&whole);
    for (at, id) in [(0, "big/gen-7"), (1, "big/gen-199")] {
        assert!(expected[at].rules.iter().any(|r| r == id), "{id}: {:#?}", expected[at]);
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = parsed::ParseCache::in_dir(dir.path());
    let needs = Needs::mode("big").with_pattern("single");
    let _ = Bundle::load_cached(&sources, Some(&needs), &cache);
    let lean_load = || {
        let (lean, d) = Bundle::load_cached(&sources, Some(&needs), &cache);
        assert!(d.is_empty(), "{d:#?}");
        assert!(lean.modes.get("big").is_some_and(|m| m.left.is_some()));
        assert!(parsed::Stored::open(&cache, &project).left_in_file("modes/big.toml"));
        lean
    };
    assert_eq!(judged(&lean_load()), expected);
    // The tree in the file forged: its `rules` array claims one more rule than it holds.
    let mut forged = parsed::tree_of(&text);
    let word = |bytes: &[u8], at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let node = |i: usize, field: usize| 8 + 20 * i + 4 * field;
    let array = (0..word(&forged, 4) as usize)
        .find(|i| word(&forged, node(*i, 0)) == 4 && word(&forged, node(*i, 2)) == generated + 1)
        .unwrap();
    forged[node(array, 2)..node(array, 2) + 4].copy_from_slice(&(generated + 2).to_le_bytes());
    parsed::forge_tree(&cache, &project, "modes/big.toml", forged);
    assert_eq!(judged(&lean_load()), expected);
}
