//! The one path's own decisions: the approved-ask fallback, the spawn limit, planned edits,
//! the untrusted project's narrowing, "not contained: why", and the sandbox rewrite.

use super::*;
use crate::bundle::BundleSource;
use crate::scope::Workspace;
use serde_json::json;
use std::cell::Cell;

/// A sandbox layer whose answer is fixed, counting how often it is asked.
struct Fake {
    proven: bool,
    asked: Cell<usize>,
}

impl Fake {
    fn new(proven: bool) -> Fake {
        Fake {
            proven,
            asked: Cell::new(0),
        }
    }
}

impl Sandboxes for Fake {
    fn proven(&self, _: &str, _: &EnvironmentSpec, roots: &[PathBuf]) -> Result<Option<String>, String> {
        self.asked.set(self.asked.get() + 1);
        assert_eq!(roots, [PathBuf::from("/w")]);
        if self.proven {
            Ok(None)
        } else {
            Err("no user namespaces".into())
        }
    }
    fn program(&self) -> Option<PathBuf> {
        Some(PathBuf::from("/opt/six fold/sixfold"))
    }
}

/// An agent CLI as data, for these tests: a shell tool, file tools, a spawn meta-tool and a
/// patch tool whose provider file says only that it writes the workspace.
const AGENT: &str = "id = \"agent\"\n[binary]\nnames = [\"agent\"]\n\
[tools.Bash]\ncommand = \"command\"\n[tools.Read]\nreads = [\"{file_path}\"]\n\
[tools.Write]\nwrites = [\"{file_path}\"]\n[tools.Task]\nspawn = \"subagent_type\"\n\
[tools.patch]\nwrites = [\"workspace\"]\n";

fn shipped() -> Bundle {
    with_project(&[])
}

fn with_project(files: &[(&str, &str)]) -> Bundle {
    let mut all = vec![("providers/agent.toml", AGENT)];
    all.extend(files.iter().copied());
    let (bundle, diags) = Bundle::load(&[crate::shipped::source(), BundleSource::from_files("project", all)]);
    assert!(diags.is_empty(), "{diags:?}");
    bundle
}

fn context() -> Context {
    Context::new(Workspace::new("/w").with_tmp("/tmp").with_home("/home/u"))
}

struct Case<'a> {
    provider: &'a str,
    tool: &'a str,
    input: Value,
    planned: Option<Vec<String>>,
    spawns: u32,
}

fn case<'a>(tool: &'a str, input: Value) -> Case<'a> {
    Case {
        provider: "agent",
        tool,
        input,
        planned: None,
        spawns: 0,
    }
}

fn run(c: &Case<'_>, layers: Layers<'_>, sandboxes: Option<&dyn Sandboxes>) -> Judged {
    let context = context();
    let call = Call {
        called: Called::Tool {
            provider: c.provider,
            name: c.tool,
            input: &c.input,
        },
        id: "t1",
        cwd: Path::new("/w"),
        context: &context,
        planned_writes: c.planned.clone(),
        spawns: c.spawns,
        leasing: None,
    };
    judge(&call, layers, Sandboxing { sandboxes })
}

fn only<'a>(bundle: &'a Bundle, mode: &'a str, pattern: &'a str) -> Layers<'a> {
    Layers {
        layered: Under { bundle, mode, pattern },
        without: None,
    }
}

#[test]
fn a_command_in_a_proven_sandbox_is_contained_and_rewritten() {
    let bundle = shipped();
    let fake = Fake::new(true);
    let judged = run(
        &case("Bash", json!({"command": "cargo build; echo 'it''s'", "timeout": 5})),
        only(&bundle, "workspace-write", "single"),
        Some(&fake),
    );
    assert_eq!(fake.asked.get(), 1);
    assert_eq!(
        judged.judgement.decision,
        Decision::Allow,
        "{}",
        judged.judgement.reason
    );
    assert!(judged.step.effects.contained && !judged.step.effects.reaches);
    let input = judged.updated_input.unwrap();
    assert_eq!(input["timeout"], 5, "the rest of the input is kept");
    let command = input["command"].as_str().unwrap();
    assert!(
        command.starts_with("'/opt/six fold/sixfold' sandbox run --mode workspace-write --root /w -- bash -c "),
        "{command}"
    );
    let line = crate::shell::parse(command);
    assert_eq!(line.commands.len(), 1, "{command}");
    assert_eq!(line.commands[0].words.last().unwrap(), "cargo build; echo 'it''s'");
}

#[test]
fn not_contained_says_why_and_a_plain_allow_says_nothing() {
    let bundle = shipped();
    let fake = Fake::new(false);
    let layers = only(&bundle, "workspace-write", "single");
    let judged = run(&case("Bash", json!({"command": "cargo build"})), layers, Some(&fake));
    assert_eq!(judged.judgement.decision, Decision::Ask);
    assert!(
        judged.judgement.reason.contains("not contained") && judged.judgement.reason.contains("no user namespaces"),
        "{}",
        judged.judgement.reason
    );
    assert!(judged.updated_input.is_none() && !judged.step.effects.contained);
    let off = run(&case("Bash", json!({"command": "cargo build"})), layers, None);
    assert!(
        off.judgement.reason.contains("not contained: no sandbox"),
        "{}",
        off.judgement.reason
    );
    // What is allowed as it is needs no sandbox and says nothing of one.
    let ls = run(&case("Bash", json!({"command": "ls"})), layers, Some(&fake));
    assert_eq!(ls.judgement.decision, Decision::Allow);
    assert!(!ls.judgement.reason.contains("not contained"));
}

#[test]
fn only_a_command_asks_for_a_proof() {
    let bundle = shipped();
    let fake = Fake::new(true);
    let layers = only(&bundle, "workspace-write", "single");
    let read = run(&case("Read", json!({"file_path": "src/a.rs"})), layers, Some(&fake));
    assert_eq!(read.judgement.decision, Decision::Allow);
    assert_eq!(fake.asked.get(), 0);
    // `full` confines nothing: no proof, no rewrite.
    let full = run(
        &case("Bash", json!({"command": "make"})),
        only(&bundle, "full", "single"),
        Some(&fake),
    );
    assert_eq!(fake.asked.get(), 0);
    assert!(full.updated_input.is_none());
    assert_eq!(full.judgement.decision, Decision::Allow);
}

#[test]
fn an_ask_that_reaches_runs_as_approved_outside_the_sandbox() {
    let bundle = shipped();
    let fake = Fake::new(true);
    // In `ask`, a fetch asks contained or not: a person approves the fetch, so it runs as it is.
    let fetch = run(
        &case("Bash", json!({"command": "curl -s https://example.com"})),
        only(&bundle, "ask", "single"),
        Some(&fake),
    );
    assert_eq!(fetch.judgement.decision, Decision::Ask, "{}", fetch.judgement.reason);
    assert!(fetch.updated_input.is_none() && !fetch.step.effects.contained);
    // An ask that does not reach runs contained once approved.
    let build = run(
        &case("Bash", json!({"command": "./build.sh"})),
        only(&bundle, "ask", "single"),
        Some(&fake),
    );
    assert_eq!(build.judgement.decision, Decision::Ask, "{}", build.judgement.reason);
    assert!(build.updated_input.is_some() && build.step.effects.contained);
}

#[test]
fn the_pattern_limits_spawns() {
    let bundle = shipped();
    let spawn = |pattern: &str, helper: &str, spawns: u32| {
        let c = Case {
            spawns,
            ..case("Task", json!({"subagent_type": helper}))
        };
        run(&c, only(&bundle, "workspace-write", pattern), None).judgement
    };
    assert_eq!(spawn("plan-and-execute", "executor", 0).decision, Decision::Allow);
    let second = spawn("plan-and-execute", "executor", 1);
    assert_eq!(second.decision, Decision::Refuse);
    assert!(second.reason.contains("sub-agents per session"), "{}", second.reason);
    assert_eq!(second.mode, "workspace-write", "the mode judged stays on the record");
    assert_eq!(spawn("single", "executor", 0).decision, Decision::Refuse);
    // A pattern the bundle does not have cannot judge a spawn.
    let gone = spawn("vanished", "executor", 0);
    assert_eq!((gone.decision, gone.by), (Decision::Refuse, DecidedBy::Unjudgeable));
}

#[test]
fn planned_edits_replace_the_providers_broad_scope() {
    let bundle = shipped();
    let patch = json!({"command": "*** Begin Patch\n*** Add File: src/a.rs\n+x\n*** End Patch\n"});
    let layers = only(&bundle, "workspace-write", "single");
    let broad = run(
        &Case {
            provider: "agent",
            ..case("patch", patch.clone())
        },
        layers,
        None,
    );
    assert_ne!(broad.judgement.decision, Decision::Allow, "{}", broad.judgement.reason);
    let planned = run(
        &Case {
            provider: "agent",
            planned: Some(vec!["/w/src/a.rs".into()]),
            ..case("patch", patch.clone())
        },
        layers,
        None,
    );
    assert_eq!(
        planned.judgement.decision,
        Decision::Allow,
        "{}",
        planned.judgement.reason
    );
    assert_eq!(planned.step.effects.writes, vec!["/w/src/a.rs".to_string()]);
    assert_eq!(
        (planned.step.act.kind.as_str(), planned.step.act.text.as_str()),
        ("path", "/w/src/a.rs")
    );
    // A planned write of a protected place is still refused; an empty plan changes nothing.
    let hooks = run(
        &Case {
            provider: "agent",
            planned: Some(vec!["/w/.git/hooks/pre-commit".into()]),
            ..case("patch", patch.clone())
        },
        layers,
        None,
    );
    assert_eq!(hooks.judgement.decision, Decision::Refuse);
    let empty = run(
        &Case {
            provider: "agent",
            planned: Some(Vec::new()),
            ..case("patch", patch)
        },
        layers,
        None,
    );
    assert_eq!(empty.judgement.decision, broad.judgement.decision);
}

#[test]
fn an_untrusted_project_only_narrows_and_never_picks_the_sandbox() {
    let shipped = shipped();
    // The project widens `ask` to allow every write, and narrows reads of `docs/`.
    let project = with_project(&[(
        "modes/ask.toml",
        "id = \"ask\"\ndefault = \"allow\"\nenvironment = \"full\"\n",
    )]);
    let fake = Fake::new(true);
    let write = case("Write", json!({"file_path": "a.txt", "content": "x"}));
    let trusted = run(&write, only(&project, "ask", "single"), Some(&fake));
    assert_eq!(
        trusted.judgement.decision,
        Decision::Allow,
        "{}",
        trusted.judgement.reason
    );
    let layers = Layers {
        layered: Under {
            bundle: &project,
            mode: "ask",
            pattern: "single",
        },
        without: Some(Under {
            bundle: &shipped,
            mode: "ask",
            pattern: "single",
        }),
    };
    let untrusted = run(&write, layers, Some(&fake));
    assert_eq!(
        untrusted.judgement.decision,
        Decision::Ask,
        "{}",
        untrusted.judgement.reason
    );
    assert!(untrusted.ignored.as_deref().is_some_and(|i| i.contains("allow")));
    // The command runs in the sandbox of the layers without the project (`--no-project`), and
    // both judgements assume that one sandbox (it is proven once).
    let build = run(&case("Bash", json!({"command": "./build.sh"})), layers, Some(&fake));
    assert_eq!(fake.asked.get(), 1);
    let command = build.updated_input.unwrap()["command"].as_str().unwrap().to_string();
    assert!(command.contains("--mode ask --root /w --no-project --"), "{command}");
    // What the project narrows stands.
    let narrowing = with_project(&[(
        "modes/ask.toml",
        "id = \"ask\"\ndefault = \"refuse\"\nenvironment = \"workspace-write\"\n",
    )]);
    let layers = Layers {
        layered: Under {
            bundle: &narrowing,
            mode: "ask",
            pattern: "single",
        },
        without: Some(Under {
            bundle: &shipped,
            mode: "ask",
            pattern: "single",
        }),
    };
    let docs = run(&case("Read", json!({"file_path": "docs/a.md"})), layers, None);
    assert_eq!(docs.judgement.decision, Decision::Refuse, "{}", docs.judgement.reason);
    assert!(docs.ignored.is_none());
}

#[test]
fn unreadable_input_unknown_modes_and_providers_refuse() {
    let bundle = shipped();
    let layers = only(&bundle, "full", "single");
    for (provider, tool, input) in [
        ("agent", "Bash", json!({"command": ["rm", "-rf", "/"]})),
        ("agent", "Write", json!({"content": "x"})),
        ("nobody", "Bash", json!({"command": "ls"})),
    ] {
        let judged = run(
            &Case {
                provider,
                ..case(tool, input)
            },
            layers,
            None,
        );
        assert_eq!(judged.judgement.by, DecidedBy::Unjudgeable, "{provider} {tool}");
        assert_eq!(judged.step.tool, tool);
    }
    let gone = run(
        &case("Read", json!({"file_path": "a"})),
        only(&bundle, "vanished", "single"),
        None,
    );
    assert_eq!(gone.judgement.decision, Decision::Refuse);
    // A well-formed call in `full` is allowed: the refusals above are the input's.
    let fine = run(&case("Bash", json!({"command": "ls"})), layers, None);
    assert_eq!(fine.judgement.decision, Decision::Allow);
}

#[test]
fn an_mcp_name_goes_through_the_bundles_mcp_maps() {
    let bundle = with_project(&[(
        "policies/mcp.toml",
        "id = \"mcp\"\n[mcp.\"files/read_text_file\"]\nreads = [\"{path}\"]\n",
    )]);
    let layers = only(&bundle, "workspace-write", "single");
    let read = run(
        &case("mcp__files__read_text_file", json!({"path": "/w/a.txt"})),
        layers,
        None,
    );
    assert_eq!(read.judgement.decision, Decision::Allow, "{}", read.judgement.reason);
    assert_eq!(read.step.tool, "mcp__files__read_text_file");
    let unknown = run(&case("mcp__files__wipe", json!({})), layers, None);
    assert_eq!(unknown.judgement.decision, Decision::Refuse);
    // The proxy's view of the same call is judged the same.
    let context = context();
    let input = json!({"path": "/w/a.txt"});
    let proxied = judge(
        &Call {
            called: Called::Mcp {
                server: "files",
                tool: "read_text_file",
                input: &input,
                annotations: None,
                trust_annotations: false,
                known_as: &[],
            },
            id: "t1",
            cwd: Path::new("/w"),
            context: &context,
            planned_writes: None,
            spawns: 0,
            leasing: None,
        },
        layers,
        Sandboxing::default(),
    );
    assert_eq!(proxied.judgement, read.judgement);
    assert_eq!(proxied.step, read.step);
    // A server under another name is mapped by the names its program is known as, in order;
    // without one that maps it, it is the conservative profile.
    let named = |known_as: &[String]| {
        judge(
            &Call {
                called: Called::Mcp {
                    server: "my-fs",
                    tool: "read_text_file",
                    input: &input,
                    annotations: None,
                    trust_annotations: false,
                    known_as,
                },
                id: "t1",
                cwd: Path::new("/w"),
                context: &context,
                planned_writes: None,
                spawns: 0,
                leasing: None,
            },
            layers,
            Sandboxing::default(),
        )
    };
    assert_eq!(named(&[]).judgement.decision, Decision::Refuse);
    assert_eq!(named(&["nothing".into()]).judgement.decision, Decision::Refuse);
    let known = named(&["nothing".into(), "files".into()]);
    assert_eq!(known.judgement.decision, Decision::Allow, "{}", known.judgement.reason);
    assert_eq!(known.step.effects.reads, vec!["/w/a.txt".to_string()]);
    assert_eq!(known.step.tool, "mcp__my-fs__read_text_file");
}

#[test]
fn a_resource_is_judged_by_what_its_uri_means() {
    let bundle = shipped();
    let context = context();
    let layers = only(&bundle, "workspace-write", "single");
    let read = |uri: &str| {
        let call = Call {
            called: Called::Resource { server: "files", uri },
            id: "t1",
            cwd: Path::new("/w"),
            context: &context,
            planned_writes: None,
            spawns: 0,
            leasing: None,
        };
        judge(&call, layers, Sandboxing::default())
    };
    // An encoded or dotted spelling of a secret is the secret.
    for uri in [
        "file:///w/%2Eenv",
        "FILE:///w/sub/../.env",
        "file://localhost/w/%2e%65nv",
    ] {
        let judged = read(uri);
        assert_eq!(judged.step.effects.reads, vec!["/w/.env".to_string()], "{uri}");
        assert_eq!(judged.judgement.decision, Decision::Refuse, "{uri}");
    }
    // Must stay allowed: a plain file in the workspace.
    let plain = read("file:///w/src/lib.rs");
    assert_eq!(plain.step.effects.reads, vec!["/w/src/lib.rs".to_string()]);
    assert_eq!(plain.judgement.decision, Decision::Allow, "{}", plain.judgement.reason);
    assert!(read("HTTPS://x.invalid/").step.effects.reaches);
    assert_eq!(read("db://x").step.effects.reads, vec!["*".to_string()]);
    assert_eq!(read("file://host/w/a").step.effects, EffectProfile::unknown());
}

#[test]
fn an_explanation_names_each_rule_and_what_decided() {
    let bundle = shipped();
    let context = context();
    let input = json!({"file_path": ".env"});
    let call = Call {
        called: Called::Tool {
            provider: "agent",
            name: "Read",
            input: &input,
        },
        id: "t1",
        cwd: Path::new("/w"),
        context: &context,
        planned_writes: None,
        spawns: 0,
        leasing: None,
    };
    let layers = only(&bundle, "workspace-write", "single");
    let explained = explain(&call, layers, Sandboxing::default());
    assert_eq!(
        explained.judged.judgement,
        judge(&call, layers, Sandboxing::default()).judgement
    );
    let considered = &explained.considered[0];
    assert!(considered.ceiling.is_empty());
    let mode = bundle.mode("workspace-write").unwrap();
    assert_eq!(considered.rules.len(), mode.judge.rules.len(), "every rule, in order");
    let matched: Vec<&RuleTrace> = considered.rules.iter().filter(|r| r.matched).collect();
    assert!(matched.iter().any(|r| r.decision == Decision::Refuse), "{matched:?}");
    assert!(explained
        .judged
        .judgement
        .rules
        .iter()
        .all(|id| matched.iter().any(|r| &r.id == id)));
    let unmatched = considered.rules.iter().find(|r| !r.matched).unwrap();
    assert!(!unmatched.why.is_empty());
}
