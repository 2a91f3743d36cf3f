//! [`crate::deadline`] on Linux: `setitimer(ITIMER_REAL)` and a SIGALRM handler that makes only
//! async-signal-safe calls (atomic loads and swaps, `write`, `_exit`).

use super::sys;
use crate::deadline::Deadline;
use crate::error::SandboxError;
use nix::libc;
use nix::sys::signal::{pthread_sigmask, sigaction, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::Duration;

/// The lines the handler writes: refusing, letting through.
struct Lines {
    refusing: Box<[u8]>,
    passing: Box<[u8]>,
}

/// The deadline armed last, and its lines. Each is leaked when armed and never freed, so a
/// pointer the handler loaded stays valid whatever is armed after it.
static ARMED: AtomicPtr<Deadline> = AtomicPtr::new(std::ptr::null_mut());
static LINES: AtomicPtr<Lines> = AtomicPtr::new(std::ptr::null_mut());

pub(crate) fn arm(
    deadline: &'static Deadline,
    after: Duration,
    refusing: String,
    passing: String,
) -> Result<(), SandboxError> {
    let lines = Box::leak(Box::new(Lines {
        refusing: line(refusing),
        passing: line(passing),
    }));
    LINES.store(lines, Ordering::SeqCst);
    ARMED.store(std::ptr::from_ref(deadline).cast_mut(), Ordering::SeqCst);
    let setup = |step: &'static str, errno: nix::errno::Errno| SandboxError::Setup {
        step,
        path: None,
        errno: errno as i32,
    };
    // Every other signal is held while it runs; it never returns, so no flag is needed.
    let action = SigAction::new(SigHandler::Handler(on_deadline), SaFlags::empty(), SigSet::all());
    // SAFETY: `on_deadline` only loads and swaps atomics, reads the leaked lines, and makes the
    // async-signal-safe `write` and `_exit` system calls, so it may interrupt the process at any
    // point; the previous action is not kept, since nothing else in sixfold handles SIGALRM.
    unsafe { sigaction(Signal::SIGALRM, &action) }.map_err(|e| setup("handle SIGALRM", e))?;
    // A blocked SIGALRM (a mask is inherited across exec) would leave the deadline pending.
    let mut alarm = SigSet::empty();
    alarm.add(Signal::SIGALRM);
    pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&alarm), None).map_err(|e| setup("unblock SIGALRM", e))?;
    // A zero interval disarms: the deadline is at least a microsecond away.
    let micros = after.as_micros().max(1);
    let value = libc::timeval {
        tv_sec: libc::time_t::try_from(micros / 1_000_000).unwrap_or(libc::time_t::MAX),
        tv_usec: libc::suseconds_t::try_from(micros % 1_000_000).unwrap_or(0),
    };
    let timer = libc::itimerval {
        it_interval: libc::timeval { tv_sec: 0, tv_usec: 0 },
        it_value: value,
    };
    // SAFETY: `timer` is a valid itimerval for the call, and the old value is not asked for.
    let set = unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) };
    if set != 0 {
        return Err(setup("set the deadline's timer", nix::errno::Errno::last()));
    }
    Ok(())
}

/// `text` as one line, ending with a newline.
fn line(text: String) -> Box<[u8]> {
    let mut bytes = text.into_bytes();
    if bytes.last() != Some(&b'\n') {
        bytes.push(b'\n');
    }
    bytes.into_boxed_slice()
}

extern "C" fn on_deadline(_: libc::c_int) {
    let armed = ARMED.load(Ordering::SeqCst);
    let lines = LINES.load(Ordering::SeqCst);
    // SAFETY: both are null or point to values leaked by `arm`, which are never freed or changed.
    let (Some(deadline), Some(lines)) = (unsafe { armed.as_ref() }, unsafe { lines.as_ref() }) else {
        // INVARIANT (fail closed): a deadline with nothing armed still ends the process.
        sys::exit(2)
    };
    if deadline.settled.load(Ordering::SeqCst) {
        sys::exit(0);
    }
    let through = deadline.let_through.load(Ordering::SeqCst);
    if !deadline.answered.swap(true, Ordering::SeqCst) {
        let text = if through { &lines.passing } else { &lines.refusing };
        // Nothing is left to do about a write that fails: the exit code still says it.
        let _ = sys::write_all(libc::STDERR_FILENO, text);
    }
    sys::exit(if through { 0 } else { deadline.refusing_code })
}
