//! `sixfold`: the command line. It wires the core and the layers; it holds no policy.

mod approvals;
mod bundles;
mod check;
mod ci;
mod completions;
mod doctor;
mod examples;
mod explain;
mod hook_deadline;
mod judge;
mod launch;
mod lease;
mod live;
mod log;
mod mcp_install;
mod modes;
mod modes_diff;
mod names;
mod opencode_ask;
#[cfg(feature = "otel")]
mod otel;
mod output;
mod progress;
mod proofs;
mod providers;
mod proxy;
mod replay;
mod sandbox;
mod schema;
mod serve_tools;
mod trust;
mod whatif;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Policy-as-data for AI coding agents: every step judged by its effects (allow, ask, refuse),
/// every run checked into verdicts (ok, gap, unk).
#[derive(Debug, Parser)]
#[command(name = "sixfold", version, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    Check(check::Args),
    Judge(judge::Args),
    Modes(modes::Args),
    Replay(replay::Args),
    Schema(schema::Args),
    Hook(live::HookArgs),
    Mode(live::ModeArgs),
    Pattern(live::PatternArgs),
    Lease(lease::Args),
    Rules(live::RulesArgs),
    Install(live::InstallArgs),
    Uninstall(live::UninstallArgs),
    Doctor(doctor::Args),
    Trust(trust::Args),
    Launch(Box<launch::Args>),
    Providers(providers::Args),
    Sandbox(sandbox::Args),
    ServeTools(serve_tools::Args),
    Approvals(approvals::Args),
    McpProxy(proxy::Args),
    Whatif(whatif::Args),
    Log(log::Args),
    Examples(examples::Args),
    Completions(completions::CompletionsArgs),
    Man(completions::ManArgs),
}

/// What `sixfold` alone prints: the commands a person uses first. Each works from any
/// directory, outside a clone too (a test runs them in an empty one).
/// `sixfold sandbox …` with the whole parser's `sandbox` arguments, without building every other
/// subcommand's parser first (most of a bare start-up).
#[derive(Debug, Parser)]
#[command(name = "sixfold")]
struct SandboxCli {
    #[command(subcommand)]
    command: SandboxOnly,
}

#[derive(Debug, Subcommand)]
enum SandboxOnly {
    Sandbox(sandbox::Args),
}

const GETTING_STARTED: &str = "\
sixfold judges each step an AI coding agent takes by its effects (allow, ask, refuse) and checks
recorded runs against rows (verdicts ok, gap, unk). Start with:

  sixfold replay --example all --mode workspace-write
      recorded Claude Code and Codex runs, embedded in this binary: each step judged by a mode,
      each row's verdict (`sixfold examples` lists them)
  sixfold judge --mode workspace-write --effects '{\"writes\":[\"/etc/hosts\"]}'
      judge one step's effects
  sixfold modes
      the modes in the loaded bundle
  sixfold install claude-code
      govern a live Claude Code in this project: every tool call judged before it runs
  sixfold completions bash
      tab completion for bash (also zsh, fish); `sixfold man` prints the man page

`sixfold --help` lists every command; `sixfold <command> --help` explains one.
";

fn main() -> ExitCode {
    if let Some(code) = fast_path() {
        return ExitCode::from(output::finish(code));
    }
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        // No command is a usage error, as clap makes it for a missing subcommand: exit 2, on
        // stderr, so a script that lost its arguments never reads as a success.
        output::err!("{GETTING_STARTED}");
        return ExitCode::from(2);
    };
    // Only the commands that write event logs export them.
    #[cfg(feature = "otel")]
    let export = match &command {
        Command::Hook(_) | Command::ServeTools(_) | Command::McpProxy(_) => otel::start(),
        _ => None,
    };
    let code = match command {
        Command::Check(args) => check::run(args),
        Command::Judge(args) => judge::run(args),
        Command::Modes(args) => modes::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Hook(args) => live::hook(args),
        Command::Mode(args) => live::mode(args),
        Command::Pattern(args) => live::pattern(args),
        Command::Lease(args) => lease::run(args),
        Command::Rules(args) => live::rules(args),
        Command::Install(args) => live::install_hooks(args),
        Command::Uninstall(args) => live::uninstall_hooks(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Trust(args) => trust::run(args),
        Command::Launch(args) => launch::run(*args),
        Command::Providers(args) => providers::run(args),
        Command::Sandbox(args) => sandbox::run(args),
        Command::ServeTools(args) => serve_tools::run(args),
        Command::Approvals(args) => approvals::run(args),
        Command::McpProxy(args) => proxy::run(args),
        Command::Whatif(args) => whatif::run(args),
        Command::Log(args) => log::run(args),
        Command::Examples(args) => examples::run(args),
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
    };
    #[cfg(feature = "otel")]
    if let Some(export) = export {
        export.finish();
    }
    ExitCode::from(output::finish(code))
}

/// The calls made most often, answered before clap builds the parser of every subcommand (about
/// half of a bare start-up): `sixfold --version`, `sixfold hook AGENT`, which runs before every
/// tool call of an agent, and the hook's `sixfold sandbox run … --proof …`, which runs every
/// contained command (a person's `sixfold sandbox …` is read by the sandbox's parser alone). Any
/// other spelling goes through clap as usual.
fn fast_path() -> Option<u8> {
    let mut args = std::env::args_os().skip(1);
    let first = args.next()?;
    if first == "sandbox" {
        // The line the hook writes before every contained command.
        if let Some(code) = sandbox::hook_line(&args.collect::<Vec<_>>()) {
            return Some(code);
        }
        // A person's `sixfold sandbox …`: read by the sandbox's parser alone. What it does not
        // take (help, `--version`, a mistake) goes to the whole parser, which answers as ever.
        let SandboxOnly::Sandbox(args) = SandboxCli::try_parse().ok()?.command;
        return Some(sandbox::run(args));
    }
    let (second, rest) = (args.next(), args.next());
    match (first.to_str()?, second, rest) {
        ("--version" | "-V", None, None) => {
            // As clap prints it (`#[command(version)]`).
            output::outln!("sixfold {}", env!("CARGO_PKG_VERSION"));
            Some(0)
        }
        ("hook", Some(agent), None) => {
            let agent = live::Agent::named(agent.to_str()?)?;
            // The hook writes event logs: they are exported as on the slow path.
            #[cfg(feature = "otel")]
            let export = otel::start();
            let code = live::hook(live::HookArgs { agent });
            #[cfg(feature = "otel")]
            if let Some(export) = export {
                export.finish();
            }
            Some(code)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sandbox's parser alone takes only what the whole parser takes, and reads it the same;
    /// help, the version and mistakes are left to the whole parser.
    #[test]
    fn the_sandbox_parser_reads_as_the_whole_parser() {
        let lines: &[&[&str]] = &[
            &["sandbox", "run", "--", "true"],
            &["sandbox", "run", "--mode", "workspace-write", "--", "true"],
            &[
                "sandbox",
                "run",
                "--mode=read-only",
                "--root",
                "a=/tmp",
                "--",
                "ls",
                "-l",
                "--version",
            ],
            &["sandbox", "run", "--bundle", "b", "--", "sh", "-c", "echo --help"],
            &["sandbox", "check", "--mode", "workspace-write"],
            &["sandbox", "check", "--json"],
            &["sandbox", "run", "--help"],
            &["sandbox", "--version"],
            &["sandbox", "run", "--version", "--", "true"],
            &["sandbox", "run", "--mode"],
            &["sandbox", "nope"],
            &["sandbox"],
            &["sandbox", "help", "run"],
        ];
        let mut taken = 0;
        for line in lines {
            let argv = std::iter::once("sixfold").chain(line.iter().copied());
            let alone = SandboxCli::try_parse_from(argv.clone());
            let whole = Cli::try_parse_from(argv);
            match (alone, whole) {
                (
                    Ok(alone),
                    Ok(Cli {
                        command: Some(Command::Sandbox(whole)),
                    }),
                ) => {
                    let SandboxOnly::Sandbox(alone) = alone.command;
                    assert_eq!(format!("{alone:?}"), format!("{whole:?}"), "{line:?}");
                    taken += 1;
                }
                (Ok(alone), whole) => panic!("{line:?}: taken alone as {alone:?}, by the whole parser as {whole:?}"),
                (Err(_), _) => {}
            }
        }
        assert_eq!(taken, 6, "the lines a person writes are taken alone");
    }
}
