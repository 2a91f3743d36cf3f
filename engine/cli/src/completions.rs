//! `sixfold completions SHELL` and `sixfold man`: generated from the clap definitions `--help`
//! prints, so they name every command and flag there is, and no other.

use crate::output::{errln, out, outln};
use clap::CommandFactory;
use clap_mangen::roff::{roman, Roff};
use std::path::PathBuf;

/// Print the shell completion script for bash, zsh or fish (or elvish, powershell). Exit 0.
///
/// Install it where the shell looks: `sixfold completions bash >
/// ~/.local/share/bash-completion/completions/sixfold`, `sixfold completions zsh >
/// "${fpath[1]}/_sixfold"`, `sixfold completions fish > ~/.config/fish/completions/sixfold.fish`.
#[derive(Debug, clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell the script is for.
    shell: clap_complete::Shell,
}

/// Print the man page sixfold(1) as roff (`sixfold man | man -l -`); with --dir, write it and a
/// page per command (`sixfold-judge.1`, …) into a directory. Exit 0, 1 when a page cannot be
/// written.
#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// Write sixfold.1 and a page per command here (the directory is created) instead of
    /// printing sixfold(1).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// `sixfold completions`.
pub(crate) fn completions(args: CompletionsArgs) -> u8 {
    let mut command = crate::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "sixfold", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    0
}

/// What every command's exit status has in common, for the man page.
const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "The command did what it was asked. A judgement or a verdict is output, not failure: `judge` and `replay` (without --strict) exit 0 whatever they decide."),
    ("1", "A check failed: a gating gap under --strict, a step that widens (`whatif`), two modes that differ (`modes diff`), a file that could not be written."),
    ("2", "A usage error: a missing or malformed argument, a bundle with errors, or a name that is not there (a mode, a pattern, a provider, a kept rule, an example run), said with the closest name there is."),
    ("3", "A gating row is unk under --strict (no gating gap)."),
    ("126", "`sandbox run`: this machine cannot enforce the mode's environment, so the command did not run."),
];

/// `sixfold man`.
pub(crate) fn man(args: ManArgs) -> u8 {
    let command = crate::Cli::command();
    let Some(dir) = args.dir else {
        let mut page = Vec::new();
        if let Err(e) = clap_mangen::Man::new(command).render(&mut page) {
            errln!("error: cannot render the man page: {e}");
            return 1;
        }
        out!("{}", ascii(&String::from_utf8_lossy(&page)));
        out!("{}", exit_status_section());
        return 0;
    };
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| pages(command, &dir))
        .and_then(|()| {
            // The top page gets the exit statuses every command shares.
            let top = dir.join("sixfold.1");
            let mut page = std::fs::read_to_string(&top)?;
            page.push_str(&exit_status_section());
            std::fs::write(&top, page)
        });
    match written {
        Ok(()) => {
            outln!("wrote the man pages to {}", dir.display());
            0
        }
        Err(e) => {
            errln!("error: cannot write the man pages to `{}`: {e}", dir.display());
            1
        }
    }
}

/// Writes sixfold.1 and a page per command (not the hidden ones) into `dir`.
fn pages(command: clap::Command, dir: &std::path::Path) -> std::io::Result<()> {
    let mut command = command.disable_help_subcommand(true);
    command.build();
    let mut pending = vec![command];
    while let Some(command) = pending.pop() {
        pending.extend(command.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
        let man = clap_mangen::Man::new(command);
        let mut page = Vec::new();
        man.render(&mut page)?;
        std::fs::write(dir.join(man.get_filename()), ascii(&String::from_utf8_lossy(&page)))?;
    }
    Ok(())
}

/// Roff input is ASCII: every other character (a dash, an arrow in the help) as groff's and
/// mandoc's `\[uXXXX]`, so no formatter warns or drops it.
fn ascii(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    for c in roff.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

/// The EXIT STATUS section, as roff.
fn exit_status_section() -> String {
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    roff.text([roman(
        "Each command's --help says what its exit status means; what they share:",
    )]);
    for (code, meaning) in EXIT_STATUS {
        roff.control("TP", []);
        roff.text([roman(*code)]);
        roff.text([roman(*meaning)]);
    }
    roff.to_roff()
}
