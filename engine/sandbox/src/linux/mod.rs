//! The Linux mechanism: namespaces through `nix`, Landlock, seccomp.
//!
//! Why fork and not re-exec: re-executing the current binary with a hidden entry point would
//! tie the library to one binary (the CLI, the tests and the benches are three). Instead the
//! caller prepares everything in a [`plan::Plan`] and the forked children only make raw system
//! calls on it until execve (see [`child`]), which is what POSIX allows after forking a
//! multithreaded process.

#![allow(
    unsafe_code,
    reason = "fork, raw system calls and execve: each use says why it is sound"
)]

mod child;
pub(crate) mod deadline;
mod landlock_rules;
mod placeholder;
mod places;
mod plan;
pub(crate) mod prove;
mod seccomp_filter;
mod sys;

use crate::environment::Environment;
use crate::error::SandboxError;
use crate::layout::Layout;
use crate::repositories::Repositories;
use crate::Outcome;
use child::{Scratch, Step, EXIT_CODE, PROBE_RESULT, RECORD_LEN};
use landlock_rules::DEVICES;
use plan::{Exec, Payload, Plan};
use std::ffi::OsString;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Runs `argv` confined by `environment`, in `cwd`; returns its exit status and the
/// repositories it made, renamed aside.
pub(crate) fn run(environment: &Environment, argv: &[OsString], cwd: &Path) -> Result<Outcome, SandboxError> {
    let (mut layout, mut trees) = Layout::start(environment)?;
    let plan = Plan::new(
        environment,
        &layout,
        Payload::Exec(Exec::new(argv, &environment.variables)?),
        cwd,
    )?;
    // The namespaces and the first mounts are made while the rest of the layout is resolved;
    // nothing runs before init has every place (an error here drops `started`: init reads the
    // end of its pipe and stops).
    let mut started = start(&plan)?;
    // Waited for last (when dropped), after everything else the run does.
    let _removal = layout.remove_stale_work();
    layout.finish(environment, &mut trees)?;
    let searched: Vec<std::path::PathBuf> = layout
        .roots
        .iter()
        .filter(|r| layout.writable_root_of(r).is_some())
        .cloned()
        .collect();
    for root in &searched {
        let _ = trees.root(root);
    }
    let before = Repositories::of(searched.iter().map(|r| (r.as_path(), trees.walked(r))));
    let placeholders = placeholder::Placeholders::make(&layout.missing, &layout.texts)?;
    layout.hold(placeholders.held());
    let sent = started.send(&layout);
    let spawned = sent.and_then(|()| started.wait(&plan, &layout));
    // The command and everything it started have ended: its placeholders can go.
    drop(placeholders);
    let spawned = spawned?;
    // INVARIANT: nothing inside runs any more, so nothing races the search. Only the
    // directories that changed since the first walk are read again.
    for root in &searched {
        let _ = trees.walk_again(root);
    }
    let after = Repositories::of(searched.iter().map(|r| (r.as_path(), trees.walked(r))));
    // What the walks found is kept for the next run.
    trees.store();
    let status = spawned.code;
    // Reaped last: the kernel tore the namespaces down while the above ran.
    drop(spawned);
    Ok(Outcome {
        status,
        quarantined: before.quarantine_new(&after),
        searched_all: !before.incomplete && !after.incomplete,
    })
}

/// What a probe operation reported: its index and 0 or an error number.
pub(crate) type ProbeResult = (usize, i32);

/// A payload that ran: its exit code, the probe's results, and the outer process, reaped when
/// this is dropped (it may still be tearing the namespaces down: see [`EXIT_CODE`]).
struct Spawned {
    code: i32,
    probe: Vec<ProbeResult>,
    _outer: Outer,
}

/// The outer process until it is reaped.
struct Outer(Option<nix::unistd::Pid>);

impl Outer {
    /// Waits for it; its exit code.
    fn reap(&mut self) -> Result<i32, nix::Error> {
        match self.0.take() {
            Some(pid) => wait(pid),
            None => Ok(255),
        }
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        // A sandbox never outlives its caller's use of it as a zombie.
        let _ = self.reap();
    }
}

/// Builds the sandbox of `plan` with the places of `layout` and runs its payload until it ends:
/// the exit code and the probe's results, or the first setup step that failed.
fn spawn(plan: &Plan, layout: &Layout) -> Result<Spawned, SandboxError> {
    let mut started = start(plan)?;
    let _removal = layout.remove_stale_work();
    started.send(layout)?;
    started.wait(plan, layout)
}

fn host(what: &'static str) -> impl Fn(nix::Error) -> SandboxError {
    move |e: nix::Error| SandboxError::Host {
        what,
        source: std::io::Error::from(e),
    }
}

/// A sandbox being built: its processes run until init needs the places.
struct Started {
    /// Where the places go; dropped first, so init, reading the end of the stream, stops
    /// before the outer process is waited for.
    places: Option<std::fs::File>,
    /// What the outer process and init report.
    report: std::fs::File,
    outer: Outer,
}

/// Forks the outer process of `plan`'s sandbox, which makes the namespaces and the mounts the
/// plan holds, then waits in init for the places ([`Started::send`]).
fn start(plan: &Plan) -> Result<Started, SandboxError> {
    let (report, report_end) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(host("make the report pipe"))?;
    let (places_end, places) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(host("make the places' pipe"))?;
    let network = if plan.own_network {
        Some(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(host("make the network's pipe"))?)
    } else {
        None
    };
    let mut fds = vec![-1; plan.writable.len() + DEVICES.len()];
    let mut record = vec![0u8; places::RECORD_MAX];
    let mut keep = vec![report_end.as_raw_fd(), places_end.as_raw_fd()];
    let network_fds = match &network {
        Some((read, write)) => [read.as_raw_fd(), write.as_raw_fd()],
        None => [-1, -1],
    };
    keep.extend(network_fds.iter().filter(|fd| **fd >= 0));
    if let Some(landlock) = &plan.landlock {
        keep.push(landlock.ruleset.as_raw_fd());
    }
    keep.sort_unstable();
    let scratch = Scratch {
        fds: &mut fds,
        record: &mut record,
        places: places_end.as_raw_fd(),
        report: report_end.as_raw_fd(),
        network: network_fds,
    };
    // Before the fork, which would count the child as runnable too.
    let others = elsewhere(plan);
    // SAFETY: the child runs `child::outer`, which only makes async-signal-safe system calls on
    // memory prepared before this point (the plan, `scratch`, `keep`) and never returns: it
    // execs or calls _exit.
    let child = match unsafe { nix::unistd::fork() }.map_err(host("fork the sandbox"))? {
        nix::unistd::ForkResult::Child => child::outer(plan, scratch, &keep),
        nix::unistd::ForkResult::Parent { child } => child,
    };
    if let Some(others) = &others {
        // Only where it runs first: a failure leaves it where the scheduler put it.
        let _ = nix::sched::sched_setaffinity(child, others);
    }
    drop((report_end, places_end, network));
    Ok(Started {
        places: Some(std::fs::File::from(places)),
        report: std::fs::File::from(report),
        outer: Outer(Some(child)),
    })
}

/// Where the outer process should start: the caller's CPUs but this one, when one of them is
/// idle now; `None` to leave it to the scheduler.
///
/// A new process starts on its parent's CPU and waits there until the scheduler moves it, while
/// the caller keeps that CPU busy resolving the rest of the layout. Where the scheduler packs
/// processes onto few CPUs (a virtual machine's), the outer process waited most of that
/// resolution before it ran, and the sandbox was built after the caller's part instead of beside
/// it. Where no other CPU is idle, moving it only queues it behind other work: a machine kept
/// busy ran the line 9 % slower that way (docs/performance.md). Init takes the caller's CPUs
/// back (`Plan::cpus`).
fn elsewhere(plan: &Plan) -> Option<nix::sched::CpuSet> {
    use std::io::Read as _;
    let mut others = plan.cpus?;
    let usable = (0..nix::sched::CpuSet::count())
        .filter(|cpu| others.is_set(*cpu).unwrap_or(false))
        .count();
    // Fewer runnable tasks than the CPUs the caller may use leaves one of them idle.
    let mut text = [0u8; 128];
    let read = std::fs::File::open("/proc/loadavg")
        .and_then(|mut f| f.read(&mut text))
        .ok()?;
    if runnable(text.get(..read)?)? >= usable {
        return None;
    }
    others.unset(nix::sched::sched_getcpu().ok()?).ok()?;
    Some(others)
}

/// The kernel's count of runnable tasks, the reader included, from the text of `/proc/loadavg`
/// (its fourth field, `runnable/all`); `None` for text not of that form.
fn runnable(loadavg: &[u8]) -> Option<usize> {
    std::str::from_utf8(loadavg)
        .ok()?
        .split_whitespace()
        .nth(3)?
        .split_once('/')?
        .0
        .parse()
        .ok()
}

impl Started {
    /// Sends the places of `layout` (resolved in full, its placeholders held) to init.
    fn send(&mut self, layout: &Layout) -> Result<(), SandboxError> {
        use std::io::Write;
        let records = places::encode(layout)?;
        let sent = match self.places.take() {
            Some(mut pipe) => pipe.write_all(&records),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        match sent {
            Ok(()) => Ok(()),
            // Init stopped before it read them all: what it reports says why.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Err(source) => Err(SandboxError::Host {
                what: "send the places to the sandbox",
                source,
            }),
        }
    }

    /// Waits for the payload to end: its exit code and the probe's results, or the first setup
    /// step that failed (`plan` and `layout` name its path).
    fn wait(self, plan: &Plan, layout: &Layout) -> Result<Spawned, SandboxError> {
        let Started {
            places,
            report: mut pipe,
            mut outer,
        } = self;
        drop(places);
        // Records until the exit code, which the outer process sends last (then it may still be
        // tearing the namespaces down); without it (the outer process failed, or was killed) its own
        // exit status is the code.
        let mut records = Vec::new();
        let mut record = [0u8; RECORD_LEN];
        let read_result = loop {
            match pipe.read_exact(&mut record) {
                Ok(()) => {
                    records.extend_from_slice(&record);
                    if record.starts_with(&EXIT_CODE.to_ne_bytes()) {
                        break Ok(());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        read_result.map_err(|source| SandboxError::Host {
            what: "read the sandbox's report",
            source,
        })?;
        let mut exit = None;
        let mut probe = Vec::new();
        for record in records.chunks_exact(RECORD_LEN) {
            let word = |at: usize| -> [u8; 4] {
                let mut bytes = [0u8; 4];
                bytes.copy_from_slice(record.get(at..at + 4).unwrap_or(&[0; 4]));
                bytes
            };
            let (tag, index, value) = (
                u32::from_ne_bytes(word(0)),
                u32::from_ne_bytes(word(4)),
                i32::from_ne_bytes(word(8)),
            );
            let index = index as usize;
            if tag == PROBE_RESULT {
                probe.push((index, value));
                continue;
            }
            if tag == EXIT_CODE {
                exit = Some(value);
                continue;
            }
            // INVARIANT (fail closed): any failed step, even one after others worked, is an error,
            // never a sandbox that holds.
            return Err(match Step::from_tag(tag) {
                Some(Step::Exec) => SandboxError::Exec {
                    program: plan.program().unwrap_or_default(),
                    errno: value,
                },
                Some(step) => SandboxError::Setup {
                    step: step.phrase(),
                    path: plan.path_of(layout, step.list(), index),
                    errno: value,
                },
                None => SandboxError::Setup {
                    step: "build the sandbox",
                    path: None,
                    errno: value,
                },
            });
        }
        let code = match exit {
            Some(code) => code,
            None => outer.reap().map_err(host("wait for the sandbox"))?,
        };
        Ok(Spawned {
            code,
            probe,
            _outer: outer,
        })
    }
}

/// Waits for the outer process and turns its status into an exit code.
fn wait(child: nix::unistd::Pid) -> Result<i32, nix::Error> {
    use nix::sys::wait::{waitpid, WaitStatus};
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => return Ok(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => return Ok(128 + signal as i32),
            Ok(_) => continue,
            Err(nix::Error::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

impl Plan {
    /// The program of an exec payload, for its error message.
    fn program(&self) -> Option<std::path::PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        match &self.payload {
            Payload::Exec(exec) => Some(std::ffi::OsStr::from_bytes(exec.program.as_bytes()).into()),
            Payload::Probe(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::runnable;

    #[test]
    fn the_runnable_count_is_read_from_loadavg_and_nothing_else_reads_as_one() {
        assert_eq!(runnable(b"0.99 1.74 1.57 1/87 26316\n"), Some(1));
        assert_eq!(runnable(b"3.10 2.00 1.00 12/400 1\n"), Some(12));
        // Anything else: no count, so the outer process is left where the scheduler puts it.
        for text in [
            &b""[..],
            b"0.99 1.74 1.57",
            b"0.99 1.74 1.57 x/87 1",
            b"0.99 1.74 1.57 87 1",
            b"\xff\xfe 1 2 3/4",
        ] {
            assert_eq!(runnable(text), None, "{:?}", String::from_utf8_lossy(text));
        }
    }
}
