//! `sixfold lease`: the lease set for the project or one session, and what a session spent of it
//! and has left.

use crate::output::{errln, outln};
use serde_json::json;
use sixfold_core::lease::{Account, Lease};
use sixfold_hook::log::Log;
use sixfold_hook::state::State;
use std::path::PathBuf;

/// Set, show or reset the lease: the budget (steps, seconds, cents) a run may spend. The lease in
/// force is the least of the active mode's, the active pattern's, the project's and the
/// session's; what is set here can only narrow the others. See docs/leases.md.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: LeaseCommand,
}

#[derive(Debug, clap::Subcommand)]
enum LeaseCommand {
    /// Set the lease for the project (or one session); a field left out stays as it was.
    Set {
        /// Tool calls that may run.
        #[arg(long)]
        steps: Option<u64>,
        /// Seconds from the first step.
        #[arg(long)]
        seconds: Option<u64>,
        /// Cents the model's tokens may cost.
        #[arg(long)]
        cents: Option<u64>,
        /// Only for this session.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
    },
    /// Show the lease in force and, for a session, what it spent and has left.
    Show {
        /// For this session (its record `.sixfold/runs/ID.jsonl`).
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove the lease set for the project (or one session); the mode's and pattern's stay.
    Reset {
        /// Only for this session.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
    },
}

fn fail(message: &str, hint: &str) -> u8 {
    errln!("error: {message}\n  = help: {hint}");
    1
}

fn project_state() -> Result<(PathBuf, State), u8> {
    let cwd = std::env::current_dir().map_err(|e| {
        fail(
            &format!("cannot read the current directory: {e}"),
            "run it inside the project",
        )
    })?;
    let project = sixfold_hook::project_of(&cwd).map_err(|e| fail(&e, "run it inside the project"))?;
    let state = State::load(&project).map_err(|e| fail(&e, "fix or remove the state file"))?;
    Ok((project, state))
}

/// `sixfold lease`.
pub(crate) fn run(args: Args) -> u8 {
    let (project, mut state) = match project_state() {
        Ok(found) => found,
        Err(code) => return code,
    };
    match args.command {
        LeaseCommand::Set {
            steps,
            seconds,
            cents,
            session,
        } => {
            if steps.is_none() && seconds.is_none() && cents.is_none() {
                return fail("nothing to set", "give --steps, --seconds or --cents");
            }
            let slot = match &session {
                Some(s) => &mut state.sessions.entry(s.clone()).or_default().lease,
                None => &mut state.lease,
            };
            let mut lease = slot.unwrap_or_default();
            lease.steps = steps.or(lease.steps);
            lease.seconds = seconds.or(lease.seconds);
            lease.cents = cents.or(lease.cents);
            *slot = Some(lease);
            save(&project, &state)
        }
        LeaseCommand::Reset { session } => {
            match &session {
                Some(s) => {
                    if let Some(own) = state.sessions.get_mut(s) {
                        own.lease = None;
                    }
                }
                None => state.lease = None,
            }
            save(&project, &state)
        }
        LeaseCommand::Show { session, json } => show(&project, &state, session.as_deref(), json),
    }
}

fn save(project: &std::path::Path, state: &State) -> u8 {
    crate::trust::keeping_trust(project, || match state.save(project) {
        Ok(()) => 0,
        Err(e) => fail(&e, "check the permissions of .sixfold/"),
    })
}

fn show(project: &std::path::Path, state: &State, session: Option<&str>, json: bool) -> u8 {
    let (bundle, diagnostics) = sixfold_hook::load_bundle(project);
    if !diagnostics.is_empty() {
        crate::bundles::report(&diagnostics);
        return fail("the bundle has errors", "run `sixfold check`");
    }
    let mode = state.mode_for(session);
    let pattern = state.pattern();
    let set = session.map_or(state.lease.unwrap_or_default(), |s| state.lease_for(s));
    let lease = sixfold_core::call::in_force(&bundle, &mode, &pattern).narrowed(&set);
    let mut out = json!({
        "project": project, "mode": mode, "pattern": pattern,
        "set": set, "lease": lease,
    });
    let mut lines = vec![format!(
        "lease {} (mode {mode}, pattern {pattern}; set here: {})",
        words(&lease),
        words(&set)
    )];
    if let Some(id) = session {
        // Read, not held: showing a session that has no record yet makes none.
        let so_far = sixfold_core::trace::SoFar::of(&Log::new(project, id).events());
        let prices = sixfold_core::call::prices(&bundle);
        let now = sixfold_hook::lease::now();
        let account = Account {
            lease,
            spent: &so_far.spent,
            carved: so_far.carved(),
        };
        let left = account.left(&prices, now);
        let cents = so_far.spent.cents(&prices);
        let carves: Vec<serde_json::Value> = so_far
            .carves
            .iter()
            .map(|c| {
                json!({"id": c.id, "helper": c.helper, "agent": c.agent, "lease": c.lease,
                    "steps": c.spent.steps, "cents": c.spent.cents(&prices).ok()})
            })
            .collect();
        if let Some(obj) = out.as_object_mut() {
            obj.insert("session".into(), id.into());
            obj.insert(
                "spent".into(),
                json!({"steps": so_far.spent.steps, "since": so_far.spent.since,
                    "cents": cents.as_ref().ok(), "cents_unknown": cents.as_ref().err(),
                    "tokens": so_far.spent.tokens}),
            );
            obj.insert(
                "left".into(),
                json!({"steps": left.steps, "seconds": left.seconds,
                    "cents": left.cents.as_ref().and_then(|c| c.as_ref().ok())}),
            );
            obj.insert("carves".into(), carves.into());
        }
        let cents_words = match &cents {
            Ok(c) => format!("{c:.2} cents"),
            Err(why) => format!("cents unknown ({why})"),
        };
        lines.push(format!(
            "session {id}: spent {} steps, {cents_words}; left: steps {}, seconds {}, cents {}",
            so_far.spent.steps,
            opt(left.steps),
            opt(left.seconds),
            match &left.cents {
                None => "unbounded".to_string(),
                Some(Ok(c)) => format!("{c:.2}"),
                Some(Err(_)) => "unknown".to_string(),
            }
        ));
        for c in &so_far.carves {
            lines.push(format!(
                "  helper {} (spawned by {}): carve {}, spent {} steps",
                c.helper,
                c.id,
                words(&c.lease),
                c.spent.steps
            ));
        }
    }
    if json {
        crate::output::json(&out);
    } else {
        for line in lines {
            outln!("{line}");
        }
    }
    0
}

fn opt(v: Option<u64>) -> String {
    v.map_or("unbounded".to_string(), |v| v.to_string())
}

fn words(lease: &Lease) -> String {
    if lease.is_open() {
        return "none".into();
    }
    let mut parts = Vec::new();
    if let Some(s) = lease.steps {
        parts.push(format!("{s} steps"));
    }
    if let Some(s) = lease.seconds {
        parts.push(format!("{s} seconds"));
    }
    if let Some(c) = lease.cents {
        parts.push(format!("{c} cents"));
    }
    parts.join(", ")
}
