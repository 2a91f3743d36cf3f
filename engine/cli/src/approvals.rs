//! `sixfold approvals list|answer`: the asks a governed run parked, and a person's answer to
//! one, from any terminal in the project while the agent waits.

use crate::output::{errln, outln};
use sixfold_core::decision::Decision;
use sixfold_hook::rules;
use sixfold_tools::approvals::{self, Answer};
use std::path::{Path, PathBuf};

/// See and answer the calls of a governed run that wait for a person (`sixfold serve-tools`).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: ApprovalsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ApprovalsCommand {
    /// The asks pending in this project, oldest first.
    List {
        /// Print a JSON array of `{id, session, tool, arguments, act, effects, rules, reason,
        /// mode, asked_at, expires_at}`.
        #[arg(long)]
        json: bool,
    },
    /// Answer one: `allow` runs it once, `deny` refuses it, `allow-and-keep` runs it and keeps
    /// a rule allowing the same act in that mode (never above the mode's ceiling). The answer
    /// and the OS user who gave it go on the session's record.
    #[command(after_help = "Example:\n  sixfold approvals answer 18c2f0a91b2 allow")]
    Answer {
        /// The ask's id (from `sixfold approvals list`).
        id: String,
        /// `allow`, `deny` or `allow-and-keep`.
        #[arg(value_parser = parse_answer)]
        answer: Answer,
    },
}

fn parse_answer(text: &str) -> Result<Answer, String> {
    Answer::parse(text).ok_or_else(|| format!("`{text}` is not an answer; use allow, deny or allow-and-keep"))
}

fn project() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    sixfold_core::project::place(&cwd)
}

/// `sixfold approvals`.
pub(crate) fn run(args: Args) -> u8 {
    let project = match project() {
        Ok(p) => p,
        Err(message) => {
            errln!("error: {message}\n  = help: run it inside the project");
            return 1;
        }
    };
    match args.command {
        ApprovalsCommand::List { json } => match approvals::list(&project) {
            Ok(pending) if json => {
                crate::output::json_pretty(&serde_json::json!({ "asks": pending }));
                0
            }
            Ok(pending) => {
                if pending.is_empty() {
                    outln!("nothing is pending");
                }
                let now = approvals::now();
                for p in pending {
                    outln!(
                        "{}  {} `{}` ({}; mode `{}`, rules {}; {} s left)",
                        p.id,
                        p.tool,
                        p.act,
                        p.reason,
                        p.mode,
                        p.rules.join(", "),
                        p.expires_at.saturating_sub(now)
                    );
                }
                0
            }
            Err(message) => {
                errln!("error: {message}");
                1
            }
        },
        ApprovalsCommand::Answer { id, answer } => answer_one(&project, &id, answer),
    }
}

/// Answers one ask; for `allow-and-keep`, first keeps the rule as `sixfold rules add` does (this
/// is the person's own command, so a trusted `.sixfold/` stays trusted).
fn answer_one(project: &Path, id: &str, answer: Answer) -> u8 {
    let fail = |message: &str| {
        errln!("error: {message}\n  = help: `sixfold approvals list` shows what is pending");
        1
    };
    let pending = match approvals::pending(project, id) {
        Ok(p) => p,
        Err(message) => return fail(&message),
    };
    let mut kept = None;
    if answer == Answer::AllowAndKeep {
        let code = crate::trust::keeping_trust(project, || {
            match rules::add(project, Decision::Allow, &pending.act, Some(&pending.mode)) {
                Ok(rule) => {
                    kept = Some(rule);
                    0
                }
                Err(message) => {
                    errln!("error: the rule could not be kept: {message}\n  = help: answer `allow` to run it once");
                    1
                }
            }
        });
        if code != 0 {
            return code;
        }
    }
    match approvals::answer(project, id, answer, kept.clone()) {
        Ok(pending) => {
            outln!("{} `{}`: {}", pending.tool, pending.act, answer.word());
            if let Some(rule) = kept {
                outln!("kept {rule}: allow `{}` in mode `{}`", pending.act, pending.mode);
            }
            0
        }
        Err(message) => fail(&message),
    }
}
