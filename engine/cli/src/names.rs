//! An unknown name reported: the core's `Unknown` (what was asked for, the close name, every
//! name there is) said one way, with one exit status, by every command.

use crate::output::errln;
use sixfold_core::names::Unknown;

/// The exit status of a command given a name that is not there: a usage error, as clap's own.
pub(crate) const EXIT: u8 = 2;

/// Says that `unknown` is not there, with what to use instead; the exit status.
pub(crate) fn report(unknown: &Unknown) -> u8 {
    errln!("error: {unknown}\n  = help: {}", unknown.hint());
    EXIT
}

/// As [`report`], with what the command did not do because of it.
pub(crate) fn report_then(unknown: &Unknown, so: &str) -> u8 {
    errln!("error: {unknown}; {so}\n  = help: {}", unknown.hint());
    EXIT
}

/// A pinned `--mode` of a command that serves for a long time (the MCP proxy, the governed
/// tools) checked against the project's bundle before it starts, so a slip is said now and not
/// as a refusal at every call. A bundle with errors is left to refuse at the calls, as it does.
pub(crate) fn check_pinned_mode(project: &std::path::Path, mode: Option<&str>) -> Result<(), u8> {
    let Some(mode) = mode else { return Ok(()) };
    let (bundle, diagnostics) = sixfold_hook::load_bundle(project);
    if diagnostics.is_empty() && bundle.mode(mode).is_none() {
        return Err(report_then(&bundle.unknown_mode(mode), "nothing was started"));
    }
    Ok(())
}
