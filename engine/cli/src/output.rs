//! Where every command's output goes. Commands write through `outln!` and `errln!` (not
//! `println!`/`eprintln!`, which panic when the reader has gone), so a closed pipe
//! (`sixfold schema | head -1`) ends the output quietly: what is left is dropped, the command
//! finishes, and its exit code is the one it decided. Any other failure to write stdout (a full
//! disk) is reported once at the end and fails the run.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Set once stdout's reader has gone: later output is dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// The first error writing stdout that was not a closed pipe.
static FAILED: Mutex<Option<String>> = Mutex::new(None);

/// Writes to stdout; a closed pipe ends the output, another error is kept for `finish`.
pub(crate) fn write_stdout(args: fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            if let Ok(mut failed) = FAILED.lock() {
                failed.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// Writes to stderr; if that fails there is nowhere left to say so, and the run goes on.
pub(crate) fn write_stderr(args: fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// The exit code once the command has run: its own, unless stdout could not be written for a
/// reason other than a closed pipe.
pub(crate) fn finish(code: u8) -> u8 {
    if !CLOSED.load(Ordering::Relaxed) {
        if let Err(e) = std::io::stdout().lock().flush() {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                write_stderr(format_args!("error: cannot write the output: {e}\n"));
                return code.max(1);
            }
        }
    }
    let failed = FAILED.lock().ok().and_then(|f| f.clone());
    match failed {
        Some(e) => {
            write_stderr(format_args!("error: cannot write the output: {e}\n"));
            // INVARIANT (fail closed): output that was lost never reads as a clean run.
            code.max(1)
        }
        None => code,
    }
}

/// The version of the shape of sixfold's own JSON output (every `--json`, `sixfold judge`'s
/// answers): raised when a field goes or changes meaning, not when one is added. What other tools
/// define is printed as they define it, without it: the hook answers the agent CLIs read, SARIF,
/// JSON Schemas.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// Makes a value one of sixfold's JSON documents: an object carrying `schema_version`. A value
/// that is not an object is put under `value`, so the field is never missing.
pub(crate) fn versioned(value: &impl serde::Serialize) -> serde_json::Value {
    let value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
    let mut fields = match value {
        serde_json::Value::Object(fields) => fields,
        other => serde_json::Map::from_iter([("value".to_string(), other)]),
    };
    fields.insert("schema_version".into(), SCHEMA_VERSION.into());
    serde_json::Value::Object(fields)
}

/// Prints one of sixfold's JSON documents on one line: every JSON output goes through here.
pub(crate) fn json(value: &impl serde::Serialize) {
    write_stdout(format_args!("{}\n", versioned(value)));
}

/// As [`json`], indented for a person to read.
pub(crate) fn json_pretty(value: &impl serde::Serialize) {
    let text = serde_json::to_string_pretty(&versioned(value)).unwrap_or_default();
    write_stdout(format_args!("{text}\n"));
}

/// `println!` to stdout, quiet when the reader has gone.
macro_rules! outln {
    () => {
        $crate::output::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` to stdout, quiet when the reader has gone.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    () => {
        $crate::output::write_stderr(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!($($arg)*))
    };
}

pub(crate) use {err, errln, out, outln};
