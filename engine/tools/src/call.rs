//! One governed call, start to end: mapped to its effects through the bundle's
//! `sixfold-tools` provider file, judged under the mode in force (narrowed while the project's
//! `.sixfold/` is untrusted), parked for a person when it asks, run when allowed, and put on the
//! session's record (judged, answered, observed with its outcome and edits).

use crate::approvals::{Answer, Pending};
use crate::beneath::Roots;
use crate::files::{self, Done};
use crate::shell::{self, Proofs};
use crate::{Config, Governor, InForce, DEFAULT_ASK_TIMEOUT, PROVIDER};
use serde_json::Value;
use sixfold_core::call::{Called, Layers, Sandboxes, Sandboxing, Under};
use sixfold_core::decision::{Decision, Judgement};
use sixfold_core::environment::EnvironmentSpec;
use sixfold_core::judge::Context;
use sixfold_core::trace::{Event, Outcome, Output, Status, Step};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The bundle's path set of secrets, which listings and searches leave out.
const SECRETS: &str = "secrets";
/// The most output of a command kept on the record.
const MAX_RECORDED_OUTPUT: usize = 16 * 1024;
/// How often a parked call looks for its answer.
const POLL: Duration = Duration::from_millis(200);

/// What the agent receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reply {
    pub(crate) text: String,
    pub(crate) is_error: bool,
}

impl Reply {
    fn error(text: impl Into<String>) -> Reply {
        Reply {
            text: text.into(),
            is_error: true,
        }
    }
}

/// The server's state: how it runs and what it asks of the CLI.
pub(crate) struct Governed {
    pub(crate) config: Config,
    pub(crate) governor: Box<dyn Governor>,
    proofs: Proofs,
    calls: AtomicU64,
    /// The mode the record last names, for its end.
    last_mode: Mutex<Option<String>>,
}

fn unjudgeable(mode: &str, why: &str) -> Judgement {
    sixfold_core::call::unjudgeable(mode, why)
}

impl Governed {
    pub(crate) fn new(config: Config, governor: Box<dyn Governor>) -> Governed {
        Governed {
            config,
            governor,
            proofs: Proofs::default(),
            calls: AtomicU64::new(0),
            last_mode: Mutex::new(None),
        }
    }

    /// The mode the sandbox confines a command under: the pinned one, else the mode in force,
    /// except that an untrusted project's state never picks it.
    fn sandbox_mode(&self, in_force: &InForce) -> String {
        // INVARIANT (fail closed): an untrusted project cannot choose a wider sandbox (its state
        // saying `full`); the mode of the layers without it confines the command.
        let mode = match &in_force.without_project {
            Some((_, base)) => base,
            None => &in_force.mode,
        };
        self.config.pinned_mode.clone().unwrap_or_else(|| mode.clone())
    }

    /// The judgement that stands and the step, under the bundles in force: the core's one path
    /// (`sixfold_core::call`), with this server's facts.
    fn judge(&self, in_force: &InForce, tool: &str, args: &Value, id: &str) -> (Judgement, Step, Vec<Event>) {
        let mut lease = match self.governor.lease() {
            Ok(lease) => lease,
            // INVARIANT (fail closed): a lease that cannot be read is not taken as none.
            Err(why) => {
                let step = Step {
                    id: id.to_string(),
                    tool: tool.into(),
                    ..Step::default()
                };
                return (unjudgeable(&in_force.mode, &why), step, Vec::new());
            }
        };
        let unread = lease
            .as_mut()
            .and_then(|(so_far, _)| sixfold_core::call::unread_by(so_far, "the governed tools"));
        let now = crate::approvals::now();
        let leasing = lease.as_ref().map(|(so_far, set)| sixfold_core::call::Leasing {
            so_far,
            set: *set,
            now,
            agent: None,
        });
        let ws = &self.config.workspace;
        let context = Context::new(ws.clone());
        let call = sixfold_core::call::Call {
            called: Called::Tool {
                provider: PROVIDER,
                name: tool,
                input: args,
            },
            id,
            cwd: ws.primary(),
            context: &context,
            planned_writes: None,
            // The governed tools offer no spawn meta-tool.
            spawns: 0,
            leasing,
        };
        let layers = Layers {
            layered: Under {
                bundle: &in_force.bundle,
                mode: &in_force.mode,
                pattern: &in_force.pattern,
            },
            without: in_force.without_project.as_ref().map(|(bundle, mode)| Under {
                bundle,
                mode,
                pattern: &in_force.pattern,
            }),
        };
        let proofs = ServerProofs {
            proofs: &self.proofs,
            sixfold: &self.config.sixfold,
            workspace: ws,
        };
        // `SIXFOLD_SANDBOX=off`: nothing is contained, so a step is judged as it is (only stricter).
        let sandboxes: Option<&dyn Sandboxes> = if self.config.contain { Some(&proofs) } else { None };
        let judged = sixfold_core::call::judge(&call, layers, Sandboxing { sandboxes });
        let events = sixfold_core::call::lease_events(&judged, now, unread.as_deref());
        (judged.judgement, judged.step, events)
    }

    /// How long an ask waits: `--ask-timeout`, else the mode's, else the default.
    fn ask_timeout(&self, in_force: &InForce) -> Duration {
        self.config
            .ask_timeout
            .or_else(|| {
                in_force
                    .bundle
                    .mode(&in_force.mode)
                    .and_then(|m| m.behaviour.ask_timeout_secs)
                    .map(Duration::from_secs)
            })
            .unwrap_or(DEFAULT_ASK_TIMEOUT)
    }

    /// Puts the end of the session on the record: the agent closed the connection, so no call
    /// comes after, and replay can tell the record is whole. Where the mode cannot be read, the
    /// end is left off (the record then reads as cut short, never as whole by mistake).
    pub(crate) fn end(&self) {
        let known = self.last_mode.lock().ok().and_then(|m| m.clone());
        let mode = match known {
            Some(mode) => mode,
            None => match self.governor.in_force() {
                Ok(in_force) => in_force.mode,
                Err(_) => return,
            },
        };
        let _ = self.record(&mode, vec![Event::Ended {}]);
    }

    /// Handles one call of a working tool.
    pub(crate) fn call(&self, tool: &str, args: &Value) -> Reply {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let id = format!("sixfold-{}-{n}", std::process::id());
        let in_force = match self.governor.in_force() {
            Ok(f) => f,
            Err(why) => {
                return self.refused(
                    &unjudgeable("", &why),
                    Step {
                        id,
                        tool: tool.into(),
                        ..Step::default()
                    },
                )
            }
        };
        // The path is resolved once, here: what is judged is what runs (see `files::pinned`).
        let args = &match files::pinned(self.config.workspace.primary(), tool, args) {
            Ok(args) => args,
            Err(why) => {
                let step = Step {
                    id,
                    tool: tool.into(),
                    ..Step::default()
                };
                return self.refused(&unjudgeable(&in_force.mode, &why), step);
            }
        };
        let (judgement, step, charged) = self.judge(&in_force, tool, args, &id);
        if !charged.is_empty() {
            if let Err(why) = self.record(&in_force.mode, charged) {
                return Reply::error(format!("sixfold refused this call: {why}"));
            }
        }
        match judgement.decision {
            Decision::Refuse => self.refused(&judgement, step),
            Decision::Allow => {
                if let Err(why) = self.record(&in_force.mode, vec![judged(&step, &judgement)]) {
                    return Reply::error(format!("sixfold refused this call: {why}"));
                }
                self.run(tool, args, &step, &in_force)
            }
            Decision::Ask => self.ask(tool, args, step, judgement, &in_force),
        }
    }

    /// Appends to the record; a failure is the caller's refusal.
    fn record(&self, mode: &str, events: Vec<Event>) -> Result<(), String> {
        if let Ok(mut last) = self.last_mode.lock() {
            *last = Some(mode.to_string());
        }
        // INVARIANT (fail closed): a call that cannot be put on the record does not run.
        self.governor.append(mode, &events)
    }

    fn refused(&self, judgement: &Judgement, step: Step) -> Reply {
        let id = step.id.clone();
        let mut events = vec![judged(&step, judgement)];
        events.push(observed(&id, Status::Refused, None, Vec::new(), None));
        let _ = self.record(&judgement.mode, events);
        Reply::error(format!("sixfold refused this call: {}", judgement.reason))
    }

    /// Parks an ask until a person answers or the timeout refuses it.
    fn ask(&self, tool: &str, args: &Value, step: Step, judgement: Judgement, in_force: &InForce) -> Reply {
        let timeout = self.ask_timeout(in_force);
        let asked_at = crate::approvals::now();
        let pending = Pending {
            id: Pending::new_id(),
            session: self.config.session.clone(),
            tool: tool.to_string(),
            arguments: args.clone(),
            act: step.act.text.clone(),
            effects: step.effects.clone(),
            rules: judgement.rules.clone(),
            reason: judgement.reason.clone(),
            mode: judgement.mode.clone(),
            asked_at,
            expires_at: asked_at + timeout.as_secs(),
        };
        if let Err(why) = self.record(&in_force.mode, vec![judged(&step, &judgement)]) {
            return Reply::error(format!("sixfold refused this call: {why}"));
        }
        // INVARIANT (fail closed): an ask that cannot be parked is refused, never run.
        if let Err(why) = pending.park(&self.config.project) {
            let _ = self.record(
                &in_force.mode,
                vec![observed(&step.id, Status::Refused, None, Vec::new(), None)],
            );
            return Reply::error(format!(
                "sixfold refused this call: it asks ({}) and cannot wait for a person: {why}",
                judgement.reason
            ));
        }
        let answered = pending.wait(&self.config.project, timeout, POLL);
        let (word, user) = match &answered {
            Some(a) => (a.answer.word().to_string(), a.user.clone()),
            None => ("timeout".to_string(), String::new()),
        };
        let allowed = matches!(
            answered.as_ref().map(|a| a.answer),
            Some(Answer::Allow | Answer::AllowAndKeep)
        );
        // `allow-and-keep` kept its rule in the person's own process (`sixfold approvals
        // answer`, as `sixfold rules add` would): the record names it.
        let kept = answered.as_ref().and_then(|a| a.kept.clone());
        let mut events = vec![Event::Answered {
            id: step.id.clone(),
            approval: pending.id,
            answer: word,
            by: user.clone(),
            kept,
        }];
        if !allowed {
            events.push(observed(&step.id, Status::Refused, None, Vec::new(), None));
            let _ = self.record(&in_force.mode, events);
            return Reply::error(match answered {
                Some(_) => format!("sixfold refused this call: {user} answered deny ({})", judgement.reason),
                None => format!(
                    "sixfold refused this call: it asks ({}) and nobody answered within {} s (`sixfold approvals answer`)",
                    judgement.reason,
                    timeout.as_secs()
                ),
            });
        }
        if let Err(why) = self.record(&in_force.mode, events) {
            return Reply::error(format!("sixfold refused this call: {why}"));
        }
        self.run(tool, args, &step, in_force)
    }

    /// Runs an allowed call and records what it did.
    fn run(&self, tool: &str, args: &Value, step: &Step, in_force: &InForce) -> Reply {
        let ws = &self.config.workspace;
        // A secret of either bundle (an untrusted project cannot empty the set) is never listed.
        let secret = |p: &std::path::Path| {
            in_force.bundle.in_path_set(SECRETS, p, ws)
                || in_force
                    .without_project
                    .as_ref()
                    .is_some_and(|(b, _)| b.in_path_set(SECRETS, p, ws))
        };
        let roots = ws
            .roots()
            .iter()
            .map(|r| r.path.as_path())
            .chain(ws.tmp().iter().map(PathBuf::as_path));
        let access = files::Access {
            roots: Roots::new(roots),
            secret: &secret,
        };
        let done: Result<(Done, Option<i64>), String> = match tool {
            "read_file" => files::read_file(&access, args).map(|d| (d, None)),
            "write_file" => files::write_file(&access, args).map(|d| (d, None)),
            "edit_file" => files::edit_file(&access, args).map(|d| (d, None)),
            "list_dir" => files::list_dir(&access, args).map(|d| (d, None)),
            "glob" => files::glob(&access, args).map(|d| (d, None)),
            "grep" => files::grep(&access, args).map(|d| (d, None)),
            "bash" => {
                let command = files::field(args, "command").unwrap_or_default();
                let timeout = args
                    .get("timeout")
                    .and_then(Value::as_u64)
                    .map(Duration::from_secs)
                    .unwrap_or(shell::DEFAULT_TIMEOUT)
                    .min(shell::MAX_TIMEOUT);
                let mode = self.sandbox_mode(in_force);
                shell::run(&self.config.sixfold, &mode, &self.config.workspace, command, timeout).map(|ran| {
                    let code = if ran.timed_out { None } else { ran.exit_code };
                    (
                        Done {
                            text: ran.text,
                            edits: Vec::new(),
                        },
                        Some(code.unwrap_or(-1)),
                    )
                })
            }
            other => Err(format!("there is no tool `{other}`")),
        };
        match done {
            Ok((done, exit_code)) => {
                let failed = exit_code.is_some_and(|c| c != 0);
                let status = if failed { Status::Failed } else { Status::Completed };
                let output = exit_code.map(|_| recorded_output(&done.text));
                let event = observed(&step.id, status, exit_code, done.edits, output);
                if let Err(why) = self.record(&in_force.mode, vec![event]) {
                    return Reply::error(format!("the call ran, but could not be put on the record: {why}"));
                }
                let text = match exit_code {
                    Some(code) if code != 0 => format!("Exit code {code}\n{}", done.text),
                    _ => done.text,
                };
                Reply { text, is_error: failed }
            }
            Err(why) => {
                let event = observed(&step.id, Status::Failed, None, Vec::new(), None);
                let _ = self.record(&in_force.mode, vec![event]);
                Reply::error(why)
            }
        }
    }

    /// Answers the agent CLI's permission prompt for a call (`{tool_name, input}`): the governed
    /// server's own tools are judged when they run, so they pass here; anything else is refused.
    pub(crate) fn approve(&self, governed_server: &str, args: &Value) -> Reply {
        let tool = args.get("tool_name").and_then(Value::as_str).unwrap_or_default();
        let input = args.get("input").cloned().unwrap_or(Value::Null);
        let ours = tool
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split_once("__"))
            .is_some_and(|(server, name)| {
                server == governed_server && crate::catalog::tools().iter().any(|t| t.name == name)
            });
        let answer = if ours {
            serde_json::json!({"behavior": "allow", "updatedInput": input})
        } else {
            // INVARIANT (fail closed): in a governed run only sixfold's judged tools run.
            serde_json::json!({"behavior": "deny", "message": format!("sixfold governs this run: only its own tools run, not `{tool}`")})
        };
        Reply {
            text: answer.to_string(),
            is_error: false,
        }
    }
}

/// The sandbox layer as this server reaches it: `sixfold sandbox check` run as a child, once per
/// mode, and this binary to run a command inside.
struct ServerProofs<'a> {
    proofs: &'a Proofs,
    sixfold: &'a std::path::Path,
    workspace: &'a sixfold_core::scope::Workspace,
}

impl Sandboxes for ServerProofs<'_> {
    fn proven(
        &self,
        mode: &str,
        _spec: &EnvironmentSpec,
        _roots: &[std::path::PathBuf],
    ) -> Result<Option<String>, String> {
        if self.proofs.proven(self.sixfold, mode, self.workspace) {
            Ok(None)
        } else {
            Err("`sixfold sandbox check` did not prove it".into())
        }
    }

    fn program(&self) -> Option<std::path::PathBuf> {
        Some(self.sixfold.to_path_buf())
    }
}

fn judged(step: &Step, judgement: &Judgement) -> Event {
    Event::Judged {
        step: Box::new(step.clone()),
        judgement: judgement.clone(),
    }
}

fn observed(
    id: &str,
    status: Status,
    exit_code: Option<i64>,
    edits: Vec<sixfold_core::trace::Edit>,
    output: Option<Output>,
) -> Event {
    Event::Observed {
        id: id.to_string(),
        outcome: Outcome { status, exit_code },
        edits,
        output,
    }
}

fn recorded_output(text: &str) -> Output {
    if text.len() <= MAX_RECORDED_OUTPUT {
        return Output {
            text: text.to_string(),
            cut: false,
        };
    }
    let mut end = MAX_RECORDED_OUTPUT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Output {
        text: text.get(..end).unwrap_or_default().to_string(),
        cut: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sixfold_core::bundle::Bundle;
    use sixfold_core::scope::Workspace;
    use std::path::PathBuf;

    struct Fixed {
        mode: String,
        /// The mode without the project's layer, as while it is untrusted.
        base: Option<String>,
        log: std::sync::Arc<Mutex<Vec<Event>>>,
        /// The lease set for the session, where one is charged.
        lease: Option<sixfold_core::lease::Lease>,
    }

    impl Governor for Fixed {
        fn in_force(&self) -> Result<InForce, String> {
            let (bundle, _) = Bundle::load(&[sixfold_core::shipped::source()]);
            let without_project = self
                .base
                .clone()
                .map(|m| (Bundle::load(&[sixfold_core::shipped::source()]).0, m));
            Ok(InForce {
                bundle,
                mode: self.mode.clone(),
                pattern: "single".into(),
                without_project,
            })
        }
        fn append(&self, _mode: &str, events: &[Event]) -> Result<(), String> {
            self.log.lock().unwrap().extend(events.iter().cloned());
            Ok(())
        }
        fn lease(&self) -> Result<Option<(sixfold_core::trace::SoFar, sixfold_core::lease::Lease)>, String> {
            Ok(self
                .lease
                .map(|l| (sixfold_core::trace::SoFar::of(self.log.lock().unwrap().iter()), l)))
        }
    }

    fn governed(root: &std::path::Path, mode: &str) -> Governed {
        let config = Config {
            workspace: Workspace::new(root),
            project: root.to_path_buf(),
            session: "s".into(),
            pinned_mode: Some(mode.into()),
            ask_timeout: Some(Duration::from_millis(10)),
            // No sandbox can be proven through a binary that is not there: nothing is contained.
            sixfold: PathBuf::from("/nonexistent/sixfold"),
            contain: true,
        };
        let governor = Fixed {
            mode: mode.into(),
            base: None,
            log: Default::default(),
            lease: None,
        };
        Governed::new(config, Box::new(governor))
    }

    /// The agent cannot answer its own ask: in every shipped mode but `full`, none of its tools
    /// may write under `.sixfold/` (where the answers are), directly or by a shell redirect.
    #[test]
    fn no_mode_but_full_lets_the_agent_write_an_answer() {
        let t = tempfile::tempdir().unwrap();
        let (bundle, _) = Bundle::load(&[sixfold_core::shipped::source()]);
        let answer = ".sixfold/approvals/abc.answer.json";
        let calls = [
            ("write_file", serde_json::json!({"path": answer, "content": "{}"})),
            (
                "edit_file",
                serde_json::json!({"path": answer, "old_string": "a", "new_string": "b"}),
            ),
            (
                "bash",
                serde_json::json!({"command": format!("echo '{{}}' > {answer}")}),
            ),
        ];
        let modes: Vec<String> = bundle.modes().map(|m| m.id.clone()).collect();
        assert!(modes.len() >= 4, "{modes:?}");
        for mode in modes {
            let g = governed(t.path(), &mode);
            let in_force = g.governor.in_force().unwrap();
            for (tool, args) in &calls {
                let (judgement, _, _) = g.judge(&in_force, tool, args, "id");
                if mode == "full" {
                    assert_eq!(judgement.decision, Decision::Allow, "{mode} {tool}");
                } else {
                    assert_eq!(
                        judgement.decision,
                        Decision::Refuse,
                        "{mode} {tool}: {}",
                        judgement.reason
                    );
                }
            }
        }
        assert!(!t.path().join(answer).exists());
    }

    /// The provider file the server judges by and the `[mcp]` map the hooks judge by say the
    /// same of every tool offered.
    #[test]
    fn the_hooks_map_and_the_servers_provider_file_agree() {
        let (bundle, _) = Bundle::load(&[sixfold_core::shipped::source()]);
        let provider = bundle.provider(PROVIDER).unwrap();
        let cwd = std::path::Path::new("/w");
        let input = serde_json::json!({"path": "a/b.rs", "command": "cargo test", "pattern": "x"});
        for tool in crate::catalog::tools() {
            let served = provider.tool_effects(tool.name, &input, cwd, bundle.classifier());
            let hooked = bundle.mcp_effects("sixfold", tool.name, &input, cwd);
            assert!(served.known && hooked.known, "{}", tool.name);
            assert_eq!(served.effects, hooked.effects, "{}", tool.name);
        }
    }

    #[test]
    fn an_unanswered_ask_is_refused_at_its_timeout_and_on_the_record() {
        let t = tempfile::tempdir().unwrap();
        let g = governed(t.path(), "ask");
        let reply = g.call("write_file", &serde_json::json!({"path": "a.txt", "content": "x"}));
        assert!(reply.is_error);
        assert!(reply.text.contains("nobody answered"), "{}", reply.text);
        assert!(!t.path().join("a.txt").exists());
        assert!(
            crate::approvals::list(t.path()).unwrap().is_empty(),
            "nothing is left pending"
        );
    }

    #[test]
    fn input_the_provider_file_cannot_read_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let g = governed(t.path(), "full");
        let reply = g.call("write_file", &serde_json::json!({"path": ["a"], "content": "x"}));
        assert!(
            reply.is_error && reply.text.contains("could not judge"),
            "{}",
            reply.text
        );
        let reply = g.call("no_such_tool", &serde_json::json!({}));
        assert!(reply.is_error, "{}", reply.text);
    }

    #[test]
    fn allow_and_keep_runs_the_call_and_records_the_rule_and_who_answered() {
        let t = tempfile::tempdir().unwrap();
        let mut g = governed(t.path(), "ask");
        g.config.ask_timeout = Some(Duration::from_secs(20));
        let log: std::sync::Arc<Mutex<Vec<Event>>> = Default::default();
        g.governor = Box::new(Fixed {
            mode: "ask".into(),
            base: None,
            log: log.clone(),
            lease: None,
        });
        let root = t.path().to_path_buf();
        let person = std::thread::spawn(move || loop {
            if let Some(p) = crate::approvals::list(&root).unwrap().first() {
                crate::approvals::answer(&root, &p.id, Answer::AllowAndKeep, Some("kept/rule-1".into())).unwrap();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        });
        let reply = g.call("write_file", &serde_json::json!({"path": "k.txt", "content": "kept\n"}));
        person.join().unwrap();
        assert!(!reply.is_error, "{}", reply.text);
        assert_eq!(std::fs::read_to_string(t.path().join("k.txt")).unwrap(), "kept\n");
        let events = log.lock().unwrap();
        let answered = events
            .iter()
            .find_map(|e| match e {
                Event::Answered { answer, by, kept, .. } => Some((answer.clone(), by.clone(), kept.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(answered.0, "allow-and-keep");
        assert!(!answered.1.is_empty());
        assert_eq!(
            answered.2.as_deref(),
            Some("kept/rule-1"),
            "the record names the rule kept"
        );
    }

    #[test]
    fn an_untrusted_project_does_not_pick_the_sandbox() {
        let t = tempfile::tempdir().unwrap();
        let mut g = governed(t.path(), "full");
        g.config.pinned_mode = None;
        g.governor = Box::new(Fixed {
            mode: "full".into(),
            base: Some("ask".into()),
            log: Default::default(),
            lease: None,
        });
        let in_force = g.governor.in_force().unwrap();
        assert_eq!(g.sandbox_mode(&in_force), "ask");
        // Narrowed too: what `ask` asks about is not allowed because the project says `full`.
        let (judgement, _, _) = g.judge(
            &in_force,
            "write_file",
            &serde_json::json!({"path": "a", "content": "x"}),
            "id",
        );
        assert_eq!(judgement.decision, Decision::Ask, "{}", judgement.reason);
    }

    #[test]
    fn the_approval_tool_passes_only_the_governed_servers_tools() {
        let t = tempfile::tempdir().unwrap();
        let g = governed(t.path(), "ask");
        let ours = g.approve(
            "sixfold",
            &serde_json::json!({"tool_name": "mcp__sixfold__bash", "input": {"command": "ls"}}),
        );
        let answer: serde_json::Value = serde_json::from_str(&ours.text).unwrap();
        assert_eq!(answer["behavior"], "allow");
        assert_eq!(answer["updatedInput"]["command"], "ls");
        for other in ["Bash", "mcp__other__bash", "mcp__sixfold__nope"] {
            let r = g.approve("sixfold", &serde_json::json!({"tool_name": other, "input": {}}));
            let answer: serde_json::Value = serde_json::from_str(&r.text).unwrap();
            assert_eq!(answer["behavior"], "deny", "{other}");
        }
    }

    /// The governed tools check and charge the session's lease as the hooks do: a step lease
    /// refuses the call after it is spent, naming it; without a lease the same calls run.
    #[test]
    fn a_spent_lease_refuses_the_next_call_and_none_refuses_nothing() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.txt"), "a\n").unwrap();
        let with = |lease: Option<sixfold_core::lease::Lease>| {
            let mut g = governed(t.path(), "workspace-write");
            g.governor = Box::new(Fixed {
                mode: "workspace-write".into(),
                base: None,
                log: Default::default(),
                lease,
            });
            g
        };
        let read = serde_json::json!({"path": "a.txt"});
        let steps = sixfold_core::lease::Lease {
            steps: Some(2),
            ..Default::default()
        };
        let g = with(Some(steps));
        assert!(!g.call("read_file", &read).is_error);
        assert!(!g.call("read_file", &read).is_error);
        let third = g.call("read_file", &read);
        assert!(third.is_error);
        assert!(third.text.contains("steps ran out (2 of 2"), "{}", third.text);
        let g = with(None);
        for _ in 0..4 {
            assert!(!g.call("read_file", &read).is_error);
        }
        // A cents lease: the governed tools read no model usage, and nothing else in the session
        // did, so the cents are unknown and the call refused rather than guessed.
        let cents = sixfold_core::lease::Lease {
            cents: Some(100),
            ..Default::default()
        };
        let refused = with(Some(cents)).call("read_file", &read);
        assert!(refused.is_error);
        assert!(refused.text.contains("cannot be counted"), "{}", refused.text);
    }
}
