//! The hook's deadline: the guard's answer when the hook has not answered in time
//! (`sixfold_hook::guard`), kept by the kernel (a timer and a signal handler, no thread) where it
//! can be, else by the guard's thread.

use sixfold_hook::guard;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What the deadline does when it passes: the guard's own atomics, so it and the guard write
/// exactly one answer between them.
static DEADLINE: sixfold_sandbox::Deadline = sixfold_sandbox::Deadline {
    settled: &guard::SETTLED,
    answered: &guard::ANSWERED,
    let_through: &guard::LET_THROUGH,
    refusing_code: guard::DENY_EXIT,
};

/// Whether the kernel keeps it (else the guard's thread does).
static BY_THE_KERNEL: AtomicBool = AtomicBool::new(false);

/// Arms the guard and keeps its deadline. First thing in the hook process.
pub(crate) fn arm() {
    let due = guard::arm();
    if keep(due, due) {
        BY_THE_KERNEL.store(true, Ordering::SeqCst);
    } else {
        // INVARIANT (fail closed): the deadline is kept one way or the other.
        guard::watch_with_a_thread();
    }
}

/// Gives the hook `wait` more, from now (see `guard::wait_for_a_person`).
pub(crate) fn wait_for_a_person(wait: Duration) {
    let Some((due, from_now)) = guard::wait_for_a_person(wait) else {
        return;
    };
    if BY_THE_KERNEL.load(Ordering::SeqCst) {
        // A timer that could not be moved keeps the earlier deadline: it refuses sooner, never
        // later.
        keep(due, from_now);
    }
}

/// Arms the kernel's deadline `from_now`, saying `due` (from arming) when it passes.
fn keep(due: Duration, from_now: Duration) -> bool {
    let (refusing, passing) = guard::deadline_lines(due);
    sixfold_sandbox::arm_deadline(&DEADLINE, from_now, refusing, passing).is_ok()
}
