//! The hook's last line of defence: whatever happens on the hook's path, the agent gets a refusal.
//!
//! Claude Code runs the tool on any hook exit other than 0 and 2: a panic's 101, a kill by the
//! kernel, its own hook timeout. So a hook process that cannot finish its judgement answers
//! deny itself, in the one form that needs nothing more from it: the reason on stderr and exit
//! code 2. Two things can keep the judgement from finishing, and both are covered here:
//!
//! - a panic, anywhere and in any thread: the panic hook answers deny and exits 2 (it runs before
//!   any unwinding, so it holds with `panic = "abort"` too);
//! - a hang: once [`DEADLINE`] has passed, well under the agent's own hook timeout (60 s by
//!   default; Codex's is 600 s), the deadline answers deny and exits 2. The kernel keeps it where
//!   it can (a timer and a signal handler: `sixfold_sandbox::arm_deadline`, wired by the CLI,
//!   with [`deadline_lines`] and these atomics); elsewhere a thread does ([`watch_with_a_thread`]).
//!
//! Codex reads the same answer the same way: exit 2 with the reason on stderr blocks the call.
//!
//! Memory stays bounded because everything the hook reads is bounded (its input, and every file
//! through `sixfold_core::bounded`); a memory limit is not set, since an allocation that fails
//! aborts the process (exit 134) and Claude Code would run the tool.
//!
//! Exactly one answer is written: the first of the judgement, the panic hook and the watchdog to
//! [`claim`] the answer writes it.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the hook may take before it answers deny on its own.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Environment variable that shortens the deadline, in milliseconds (tests). It can only shorten
/// it: a longer value is ignored, so it can never push the hook past the agent's timeout.
pub const DEADLINE_ENV: &str = "SIXFOLD_HOOK_DEADLINE_MS";

/// Environment variable that makes the hook fail on purpose (tests): `panic` or `hang`, for every
/// event or, as `panic@PreToolUse`, for one.
///
/// Safe to honour: it is read from the hook process's own environment, which the agent CLI sets
/// from its own environment and settings (a protected path), never from a tool call's input; and
/// whatever its value, the hook then refuses (a panic and a hang both answer deny), so setting it
/// can only refuse more.
pub const FAULT_ENV: &str = "SIXFOLD_HOOK_FAULT";

/// The exit code Claude Code and Codex read as "block this call", with the reason on stderr.
pub const DENY_EXIT: i32 = 2;

/// Set by whoever writes the answer first.
pub static ANSWERED: AtomicBool = AtomicBool::new(false);

/// Set once the answer was written whole: the decision is made, and nothing the process does
/// after it (the optional telemetry export) can change it.
pub static SETTLED: AtomicBool = AtomicBool::new(false);

/// How long after arming the watchdog answers deny, in milliseconds; [`wait_for_a_person`]
/// pushes it back, once the judgement is done, for the time a person has to answer.
static DEADLINE_MS: AtomicU64 = AtomicU64::new(0);

/// When the guard was armed.
static ARMED: OnceLock<Instant> = OnceLock::new();

/// Set when a failure must let the event through instead of refusing it (a Stop that was
/// already blocked once: blocking again could loop forever).
pub static LET_THROUGH: AtomicBool = AtomicBool::new(false);

/// Arms the guard for this process: installs the panic hook and starts the clock; returns how
/// long the hook has to answer. Call it first thing in the hook process, before reading its
/// input, then keep the deadline (the kernel's timer, else [`watch_with_a_thread`]).
pub fn arm() -> Duration {
    std::panic::set_hook(Box::new(|info| {
        let why = match info.payload().downcast_ref::<&str>() {
            Some(s) => (*s).to_string(),
            None => info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_else(|| "no message".into()),
        };
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        fail(&format!("the hook failed ({why}{place})"));
    }));
    let deadline = deadline(std::env::var(DEADLINE_ENV).ok().as_deref());
    ARMED.get_or_init(Instant::now);
    DEADLINE_MS.store(
        u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
        Ordering::SeqCst,
    );
    deadline
}

/// Keeps the deadline with a thread that sleeps until it, where the kernel cannot keep it.
pub fn watch_with_a_thread() {
    let Some(&armed) = ARMED.get() else { return };
    // INVARIANT (fail closed): a hook that has not answered by its deadline answers deny.
    let spawned = std::thread::Builder::new()
        .name("sixfold-watchdog".into())
        .spawn(move || loop {
            let due = Duration::from_millis(DEADLINE_MS.load(Ordering::SeqCst));
            let elapsed = armed.elapsed();
            if elapsed >= due {
                fail(&missed(due));
            }
            std::thread::sleep(due.saturating_sub(elapsed));
        });
    if spawned.is_err() {
        fail("the hook could not start its watchdog");
    }
}

/// Gives the hook `wait` more, from now, before the deadline answers deny: for a judgement that
/// is done and now waits for a person's answer (an OpenCode ask parked for `sixfold approvals`),
/// which takes as long as the person does, up to the ask's own timeout. Returns the deadline
/// now, from arming and from now, for a deadline the kernel keeps to be armed again (`None`
/// before [`arm`]).
pub fn wait_for_a_person(wait: Duration) -> Option<(Duration, Duration)> {
    let armed = ARMED.get()?;
    let elapsed = armed.elapsed();
    let due = elapsed.saturating_add(wait);
    let before = DEADLINE_MS.fetch_max(u64::try_from(due.as_millis()).unwrap_or(u64::MAX), Ordering::SeqCst);
    let due = due.max(Duration::from_millis(before));
    Some((due, due.saturating_sub(elapsed)))
}

/// The lines the deadline writes once `due` (from arming) has passed: refusing, and letting the
/// event through; as [`fail`] words them.
pub fn deadline_lines(due: Duration) -> (String, String) {
    let why = missed(due);
    (refusal(&why), let_through_line(&why))
}

fn missed(due: Duration) -> String {
    format!("the hook did not answer within {} ms", due.as_millis())
}

fn refusal(why: &str) -> String {
    format!("sixfold: could not judge this call, so it is refused: {why}")
}

fn let_through_line(why: &str) -> String {
    format!("sixfold: {why}; let through, as it was blocked once already")
}

/// The deadline: [`DEADLINE`], or a shorter one asked for in [`DEADLINE_ENV`].
fn deadline(asked: Option<&str>) -> Duration {
    asked
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .filter(|d| *d < DEADLINE)
        .unwrap_or(DEADLINE)
}

/// Takes the right to write the answer; true for the first caller only.
pub fn claim() -> bool {
    !ANSWERED.swap(true, Ordering::SeqCst)
}

/// From now on a failure lets the event through (with a note) instead of refusing it. For a Stop
/// that a hook already blocked once: blocking again could keep the agent from ever stopping.
pub fn let_through_on_failure() {
    LET_THROUGH.store(true, Ordering::SeqCst);
}

/// The answer was written whole (exit 0): a failure after this point (a panic, the deadline)
/// ends the process with that exit, so the agent keeps the answer it read.
pub fn settle() {
    SETTLED.store(true, Ordering::SeqCst);
}

/// Answers deny (the reason on stderr, exit 2) and ends the process, unless an answer was
/// already written; then it only ends the process (with exit 0 once the answer is settled).
pub fn fail(why: &str) -> ! {
    if SETTLED.load(Ordering::SeqCst) {
        std::process::exit(0);
    }
    let let_through = LET_THROUGH.load(Ordering::SeqCst);
    if claim() {
        let mut stderr = std::io::stderr().lock();
        let line = if let_through {
            let_through_line(why)
        } else {
            refusal(why)
        };
        let _ = writeln!(stderr, "{line}");
        let _ = stderr.flush();
    }
    std::process::exit(if let_through { 0 } else { DENY_EXIT })
}

/// Fails on purpose when [`FAULT_ENV`] asks for it for this event: `panic` panics, `hang` never
/// returns. Called on the hook's path, after its input is read, so tests can show that either
/// one is refused.
pub fn fault_on_purpose(event: &str) {
    let Ok(asked) = std::env::var(FAULT_ENV) else { return };
    let (fault, only) = match asked.split_once('@') {
        Some((fault, only)) => (fault, Some(only)),
        None => (asked.as_str(), None),
    };
    if only.is_some_and(|only| only != event) {
        return;
    }
    match fault {
        #[expect(clippy::panic, reason = "the test switch makes the hook panic on purpose")]
        "panic" => panic!("{FAULT_ENV}={asked}"),
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_can_only_be_shortened() {
        assert_eq!(deadline(None), DEADLINE);
        assert_eq!(deadline(Some("200")), Duration::from_millis(200));
        assert_eq!(deadline(Some("3600000")), DEADLINE);
        assert_eq!(deadline(Some("soon")), DEADLINE);
    }
}
