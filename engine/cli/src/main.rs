//! `sixfold`: the command line. It wires the core and the layers; it holds no policy.

mod bundles;
mod check;
mod judge;
mod launch;
mod live;
mod modes;
mod providers;
mod replay;
mod schema;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Policy-as-data for AI coding agents: every step judged by its effects (allow, ask, refuse),
/// every run checked into verdicts (ok, gap, unk).
#[derive(Debug, Parser)]
#[command(name = "sixfold", version, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
    Rules(live::RulesArgs),
    Install(live::InstallArgs),
    Uninstall(live::UninstallArgs),
    Launch(launch::Args),
    Providers(providers::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => check::run(args),
        Command::Judge(args) => judge::run(args),
        Command::Modes(args) => modes::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Hook(args) => live::hook(args),
        Command::Mode(args) => live::mode(args),
        Command::Pattern(args) => live::pattern(args),
        Command::Rules(args) => live::rules(args),
        Command::Install(args) => live::install_hooks(args),
        Command::Uninstall(args) => live::uninstall_hooks(args),
        Command::Launch(args) => launch::run(args),
        Command::Providers(args) => providers::run(args),
    };
    ExitCode::from(code)
}
