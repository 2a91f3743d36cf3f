//! A deadline for this process kept by the kernel, for a process that must answer whatever
//! happens to it: a hook that hangs is a tool call the agent runs, so the hook refuses when its
//! deadline passes.
//!
//! A real-time interval timer raises SIGALRM when the deadline passes, and a handler ends the
//! process the way the [`Deadline`] says. A thread that sleeps until the deadline does the same,
//! but a second thread makes glibc's allocator take its locks and the process wake another CPU
//! to start it and to end it: about an eighth of `sixfold --version` on every hook call
//! (docs/performance.md). The timer costs two system calls.

use crate::error::SandboxError;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What the process does when its deadline passes. The handler reads only these atomics and the
/// lines [`arm_deadline`] was given (kept for the life of the process), which is what lets a
/// signal handler read them.
#[derive(Debug)]
pub struct Deadline {
    /// Set once the process's answer is out whole: it then ends with 0 and says nothing.
    pub settled: &'static AtomicBool,
    /// Taken (swapped to true) by whoever answers first: the deadline writes its line only if it
    /// takes it, so exactly one answer is written.
    pub answered: &'static AtomicBool,
    /// Set when a failure lets the event through: the deadline writes its `passing` line and
    /// ends with 0.
    pub let_through: &'static AtomicBool,
    /// The exit code the deadline ends the process with when it refuses.
    pub refusing_code: i32,
}

/// Arms `deadline` to pass `after` from now: it then writes `refusing` (or `passing`, when let
/// through) to stderr and ends the process. Arming again moves it, with the new lines.
///
/// # Errors
///
/// Where the kernel cannot keep it (not Linux, or the handler or the timer could not be set):
/// the caller then keeps the deadline another way.
pub fn arm_deadline(
    deadline: &'static Deadline,
    after: Duration,
    refusing: String,
    passing: String,
) -> Result<(), SandboxError> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::deadline::arm(deadline, after, refusing, passing)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (deadline, after, refusing, passing);
        Err(SandboxError::Unsupported {
            what: "a deadline kept by the kernel (Linux only)".into(),
        })
    }
}
