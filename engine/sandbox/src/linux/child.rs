//! The sandbox's three processes, from the fork to execve.
//!
//! ```text
//! caller ── fork ─▶ outer ── unshare(user, mount, pid, ipc) ── fork ─▶ init (pid 1) ── spawn ─▶ command
//!   resolves the      maps its uid/gid, [makes a network         builds the mounts,       execve
//!   places, sends     namespace,] waits, reports init's          mounts the places, [joins
//!   them, waits       code, exits                                the network,] confines
//!                                                                itself, waits
//! ```
//!
//! Making a network namespace is the costliest of the namespaces (the kernel sets up every
//! network subsystem for it), so the outer process, idle otherwise, makes it while init builds
//! the filesystem, and init joins it through a pidfd for the outer process before it confines
//! itself.
//!
//! The caller forks before it has resolved the protected paths and the host's sockets (the
//! places: `places.rs`), so the namespaces and the first mounts are made meanwhile; init reads
//! the places from a pipe once it needs them, and goes no further without all of them.
//!
//! The forks copy their parent's memory; the command's spawn shares init's until its execve
//! (`sys::spawn_sharing`: init is confined already, and waits meanwhile).
//!
//! The caller may have many threads, so everything here is async-signal-safe: raw system calls
//! on memory the [`Plan`] laid out before the fork, no allocation, no lock, no panic (a failed
//! step writes a fixed-size record to the report pipe and exits). When the command ends, init
//! exits with its code and the kernel kills whatever is left in the PID namespace: no orphans.

use crate::linux::places::{self, Place};
use crate::linux::plan::{PathList, Payload, Plan, ProbeKind, ProbeOp};
use crate::linux::sys::{self, Errno, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY};
use nix::libc;
use nix::mount::MsFlags;
use std::ffi::CStr;
use std::os::fd::RawFd;

/// The tag of a probe's result record (setup failures are tagged with their [`Step`]).
pub(crate) const PROBE_RESULT: u32 = u32::MAX;

/// The tag of the last record: init's exit code, sent by the outer process once init (and with
/// it every process of the PID namespace) has ended and before the outer process exits. The
/// caller then cleans up while the kernel tears the namespaces down (unmounting everything
/// waits for RCU grace periods: most of a millisecond), instead of after.
pub(crate) const EXIT_CODE: u32 = u32::MAX - 1;

/// A record on the report pipe: tag, index, value (an error number, or 0).
pub(crate) const RECORD_LEN: usize = 12;

/// The steps of building the sandbox, as reported when one fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Step {
    /// unshare(2)
    Namespaces = 1,
    /// /proc/self/{setgroups,uid_map,gid_map}
    IdMaps,
    /// fork
    Fork,
    /// Making every mount private, so nothing propagates back to the host.
    Private,
    /// Copying a writable root before the filesystem turns read-only.
    CopyRoot,
    /// Making the whole filesystem read-only.
    ReadOnlyRoot,
    /// Attaching a writable root's copy.
    AttachRoot,
    /// A tool cache's layer.
    Cache,
    /// The fresh /dev.
    Dev,
    /// A device file in /dev.
    Device,
    /// Receiving the places from the caller.
    Places,
    /// A protected path's read-only bind.
    Protect,
    /// A secret's mask.
    Hide,
    /// The fresh /proc.
    Proc,
    /// Landlock.
    Landlock,
    /// A fresh session keyring.
    Keyring,
    /// Dropping capabilities.
    Capabilities,
    /// no_new_privs.
    NoNewPrivs,
    /// The seccomp filter.
    Seccomp,
    /// The working directory.
    Chdir,
    /// execve.
    Exec,
}

impl Step {
    /// All steps, to read a tag back.
    const ALL: [Step; 21] = [
        Step::Namespaces,
        Step::IdMaps,
        Step::Fork,
        Step::Private,
        Step::CopyRoot,
        Step::ReadOnlyRoot,
        Step::AttachRoot,
        Step::Cache,
        Step::Dev,
        Step::Device,
        Step::Places,
        Step::Protect,
        Step::Hide,
        Step::Proc,
        Step::Landlock,
        Step::Keyring,
        Step::Capabilities,
        Step::NoNewPrivs,
        Step::Seccomp,
        Step::Chdir,
        Step::Exec,
    ];

    /// The step a record's tag names.
    pub(crate) fn from_tag(tag: u32) -> Option<Step> {
        Step::ALL.into_iter().find(|s| *s as u32 == tag)
    }

    /// What the step does, as a verb phrase.
    pub(crate) fn phrase(self) -> &'static str {
        match self {
            Step::Namespaces => crate::error::STEP_USER_NAMESPACE,
            Step::IdMaps => "map the user and group ids into the user namespace",
            Step::Fork => "start the sandbox's init process",
            Step::Private => "make the mounts private to the sandbox",
            Step::CopyRoot => "copy a writable root's mount (needs Linux 5.2+)",
            Step::ReadOnlyRoot => "make the filesystem read-only (needs Linux 5.12+)",
            Step::AttachRoot => "bind a writable root",
            Step::Cache => "layer a tool cache (overlayfs)",
            Step::Dev => "build the sandbox's /dev",
            Step::Device => "bind a device file",
            Step::Places => "receive the protected paths and secrets",
            Step::Protect => "keep a protected path in place",
            Step::Hide => "hide a secret",
            Step::Proc => "mount /proc for the sandbox's PID namespace",
            Step::Landlock => "enforce the Landlock ruleset",
            Step::Keyring => "join a fresh session keyring",
            Step::Capabilities => "drop capabilities",
            Step::NoNewPrivs => "set no_new_privs",
            Step::Seccomp => "install the seccomp filter",
            Step::Chdir => "enter the working directory",
            Step::Exec => "start the command",
        }
    }

    /// Which list the record's index points into.
    pub(crate) fn list(self) -> PathList {
        match self {
            Step::CopyRoot | Step::AttachRoot => PathList::Writable,
            Step::Device => PathList::Devices,
            Step::Protect => PathList::Kept,
            Step::Hide => PathList::Hidden,
            Step::Chdir => PathList::Cwd,
            Step::Cache => PathList::Caches,
            _ => PathList::None,
        }
    }
}

/// A failed step: the step, the index into its list, the error number.
type Failure = (Step, usize, Errno);

/// Writes a record to the report pipe; a failure to report is not reportable.
fn report(pipe: RawFd, tag: u32, index: usize, value: i32) {
    let mut record = [0u8; RECORD_LEN];
    let index = u32::try_from(index).unwrap_or(u32::MAX);
    for (slot, bytes) in record
        .chunks_exact_mut(4)
        .zip([tag.to_ne_bytes(), index.to_ne_bytes(), value.to_ne_bytes()])
    {
        slot.copy_from_slice(&bytes);
    }
    let _ = sys::write_all(pipe, &record);
}

/// Reports a failed step and exits.
fn fail(pipe: RawFd, (step, index, errno): Failure) -> ! {
    report(pipe, step as u32, index, errno);
    sys::exit(126)
}

/// What the forked processes work with besides the plan: memory of their own, prepared before
/// the fork, and the pipes.
pub(crate) struct Scratch<'a> {
    /// Room for one fd per writable root and device.
    pub(crate) fds: &'a mut [RawFd],
    /// Room for one record of the places ([`places::RECORD_MAX`]).
    pub(crate) record: &'a mut [u8],
    /// The pipe the places come from.
    pub(crate) places: RawFd,
    /// The report pipe.
    pub(crate) report: RawFd,
    /// The pipe (read end, write end) through which the outer process tells init whether it made
    /// the command's network namespace (0, or the error number), when the plan wants one.
    pub(crate) network: [RawFd; 2],
}

/// The outer process: enters the namespaces, maps ids, forks init and waits for it.
///
/// `keep` lists the fds to keep open (the pipes and the Landlock ruleset), sorted.
pub(crate) fn outer(plan: &Plan, scratch: Scratch<'_>, keep: &[RawFd]) -> ! {
    let pipe = scratch.report;
    // The sandbox dies with its caller; if the caller is already gone, so is the point.
    if sys::die_with_parent().is_err() || nix::unistd::getppid().as_raw() != plan.parent {
        sys::exit(126);
    }
    // Other threads' pipes and files copied by the fork must not be held open by the sandbox.
    sys::close_fds_except(keep);
    if let Err(e) = nix::sched::unshare(plan.namespaces) {
        fail(pipe, (Step::Namespaces, 0, e as i32));
    }
    let maps = sys::write_file(c"/proc/self/setgroups", b"deny")
        .and_then(|()| sys::write_file(c"/proc/self/uid_map", &plan.uid_map))
        .and_then(|()| sys::write_file(c"/proc/self/gid_map", &plan.gid_map));
    if let Err(e) = maps {
        fail(pipe, (Step::IdMaps, 0, e));
    }
    // What init joins the network namespace made below through.
    let outer = if plan.own_network {
        match sys::pidfd_self() {
            Ok(fd) => fd,
            Err(e) => fail(pipe, (Step::Namespaces, 0, e)),
        }
    } else {
        -1
    };
    match sys::fork() {
        Err(e) => fail(pipe, (Step::Fork, 0, e)),
        Ok(0) => init(plan, scratch, outer),
        Ok(pid) => {
            // The places are init's to read.
            sys::close(scratch.places);
            if plan.own_network {
                let [from_outer, to_init] = scratch.network;
                sys::close(from_outer);
                sys::close(outer);
                let made = sys::new_network().err().unwrap_or(0);
                let _ = sys::write_all(to_init, &made.to_ne_bytes());
                sys::close(to_init);
            }
            // INVARIANT: init has ended when its wait returns, and the kernel ends every other
            // process of its PID namespace before that: nothing inside runs once this is sent.
            let code = match sys::wait(pid) {
                Ok((_, status)) => sys::exit_code(status),
                Err(_) => 255,
            };
            report(pipe, EXIT_CODE, 0, code);
            sys::exit(code)
        }
    }
}

/// Init, pid 1 of the new PID namespace: builds the filesystem, confines itself (the command
/// inherits it), forks the command and reaps until the command ends.
fn init(plan: &Plan, scratch: Scratch<'_>, outer: RawFd) -> ! {
    let pipe = scratch.report;
    if let Err(e) = sys::die_with_parent() {
        fail(pipe, (Step::Fork, 0, e));
    }
    // The caller's CPUs again (the outer process was started on the others): the command may run
    // wherever its caller may. Should this fail, it runs on fewer, never on more.
    if let Some(cpus) = &plan.cpus {
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), cpus);
    }
    if plan.own_network {
        // The outer process's end: a failed or killed outer process reads as the end of the pipe.
        sys::close(scratch.network[1]);
    }
    if let Err(failure) = build_filesystem(plan, scratch.fds) {
        fail(pipe, failure);
    }
    if let Err(failure) = mount_places(scratch.places, scratch.record) {
        fail(pipe, failure);
    }
    sys::close(scratch.places);
    if let Err(failure) = finish_filesystem() {
        fail(pipe, failure);
    }
    if plan.own_network {
        if let Err(e) = join_network(scratch.network[0], outer) {
            fail(pipe, (Step::Namespaces, 0, e));
        }
    }
    if let Err(failure) = confine(plan) {
        fail(pipe, failure);
    }
    // The command shares init's memory until its execve: nothing of init's is copied for a
    // process that only execs (init is confined already, and so is everything it starts).
    let call = Call { plan, pipe };
    let arg: *const Call<'_> = &call;
    let command_pid = match sys::spawn_sharing(&plan.stack, run_command, arg.cast_mut().cast()) {
        Err(e) => fail(pipe, (Step::Fork, 0, e)),
        Ok(pid) => pid,
    };
    sys::close(pipe);
    loop {
        match sys::wait(-1) {
            // INVARIANT: init's exit ends the PID namespace; the kernel kills what is left.
            Ok((pid, status)) if pid == command_pid => sys::exit(sys::exit_code(status)),
            Ok(_) => continue,
            Err(_) => sys::exit(255),
        }
    }
}

fn mount(
    source: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: MsFlags,
    data: Option<&CStr>,
) -> Result<(), Errno> {
    // nix takes `&CStr` as a path without copying it, so this allocates nothing.
    nix::mount::mount(source, target, fstype, flags, data).map_err(|e| e as i32)
}

/// The filesystem as far as the plan says: all read-only, the writable roots read-write, the
/// tool caches layered, a fresh /dev. The places ([`mount_places`]) and /proc follow.
fn build_filesystem(plan: &Plan, scratch: &mut [RawFd]) -> Result<(), Failure> {
    // Nothing done here may propagate to the host's mounts.
    mount(None, c"/", None, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None).map_err(|e| (Step::Private, 0, e))?;
    let (roots, devices) = scratch.split_at_mut(plan.writable.len());
    // Detached copies keep their original (writable) flags through the read-only pass below.
    for (index, (root, slot)) in plan.writable.iter().zip(roots.iter_mut()).enumerate() {
        *slot = sys::open_tree(root, true).map_err(|e| (Step::CopyRoot, index, e))?;
    }
    for (device, slot) in plan.devices.iter().zip(devices.iter_mut()) {
        // A device the host lacks is simply absent inside.
        *slot = sys::open_tree(device, false).unwrap_or(-1);
    }
    // INVARIANT (fail closed): every mount, recursively, becomes read-only before anything is
    // made writable again.
    sys::mount_setattr(c"/", true, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
        .map_err(|e| (Step::ReadOnlyRoot, 0, e))?;
    for (index, (root, fd)) in plan.writable.iter().zip(roots.iter()).enumerate() {
        sys::move_mount(*fd, root).map_err(|e| (Step::AttachRoot, index, e))?;
        sys::close(*fd);
    }
    // A tool cache reads as the host's and takes the command's writes into its per-project
    // layer (attached writable above).
    for (index, cache) in plan.caches.iter().enumerate() {
        mount(
            Some(c"overlay"),
            &cache.path,
            Some(c"overlay"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some(&cache.options),
        )
        .map_err(|e| (Step::Cache, index, e))?;
        // The overlay writes through a private copy of the layer's mount, made just now; the
        // layer itself is read-only to the command from here. So nothing a command could plant
        // there (a link for the next run's mount, or for the removal of a stale work directory,
        // to follow) is ever made.
        mount(Some(&cache.layer), &cache.layer, None, MsFlags::MS_BIND, None)
            .and_then(|()| sys::mount_setattr(&cache.layer, false, MOUNT_ATTR_RDONLY))
            .map_err(|e| (Step::Cache, index, e))?;
    }
    build_dev(plan, devices)?;
    Ok(())
}

/// Mounts the places as the caller sends them: each kept entry bound onto itself (parents
/// first: a directory kept in place is bound before what is read-only inside it), then each
/// secret and socket masked.
fn mount_places(pipe: RawFd, record: &mut [u8]) -> Result<(), Failure> {
    let (mut kept, mut hidden) = (0, 0);
    loop {
        let place = places::read(pipe, record).map_err(|e| (Step::Places, 0, e))?;
        match place {
            None => return Ok(()),
            Some(Place::Kept {
                path,
                read_only,
                identity,
            }) => {
                keep(path, read_only, identity).map_err(|e| (Step::Protect, kept, e))?;
                kept += 1;
            }
            Some(Place::Hidden { path, is_dir }) => {
                hide(path, is_dir).map_err(|e| (Step::Hide, hidden, e))?;
                hidden += 1;
            }
        }
    }
}

/// Binds `path` onto itself, read-only or only pinned.
fn keep(path: &CStr, read_only: bool, identity: (u64, u64)) -> Result<(), Errno> {
    mount(Some(path), path, None, MsFlags::MS_BIND | MsFlags::MS_REC, None)?;
    // INVARIANT (fail closed): the mount landed on the very entry the layout found (not on
    // what a symbolic link swapped in since then points to).
    if sys::identity(path)? != identity {
        return Err(libc::ESTALE);
    }
    if read_only {
        sys::mount_setattr(path, true, MOUNT_ATTR_RDONLY)?;
    }
    Ok(())
}

/// Masks a secret or socket: nobody inside may read it (or connect to it).
fn hide(path: &CStr, is_dir: bool) -> Result<(), Errno> {
    let masked = if is_dir {
        // An empty directory nobody may open.
        mount(
            Some(c"tmpfs"),
            path,
            Some(c"tmpfs"),
            MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            Some(c"mode=000,size=4k"),
        )
    } else {
        // An empty file nobody may open.
        mount(Some(HIDDEN_FILE), path, None, MsFlags::MS_BIND, None).and_then(|()| {
            sys::mount_setattr(
                path,
                false,
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
            )
        })
    };
    match masked {
        // A place that vanished since the layout was made (a socket a host process removed, a
        // file a concurrent run deleted) holds nothing to read or connect to: nothing to mask.
        // Inside a sandbox a masked place cannot be moved away (it is a mount point).
        Err(libc::ENOENT) => Ok(()),
        other => other,
    }
}

/// The last of the filesystem, once the places are mounted: the PID namespace's /proc, and
/// /dev read-only.
fn finish_filesystem() -> Result<(), Failure> {
    // The PID namespace's own /proc: the host's processes are not there.
    mount(
        Some(c"proc"),
        c"/proc",
        Some(c"proc"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
        None,
    )
    .map_err(|e| (Step::Proc, 0, e))?;
    sys::mount_setattr(c"/dev", false, MOUNT_ATTR_RDONLY).map_err(|e| (Step::Dev, 0, e))?;
    Ok(())
}

/// Joins the network namespace the outer process (`outer`, a pidfd) made, once it says it made
/// one through `pipe`.
fn join_network(pipe: RawFd, outer: RawFd) -> Result<(), Errno> {
    let mut made = [0u8; 4];
    sys::read_exact(pipe, &mut made)?;
    sys::close(pipe);
    match i32::from_ne_bytes(made) {
        0 => sys::join_network(outer)?,
        errno => return Err(errno),
    }
    sys::close(outer);
    Ok(())
}

/// The empty, unreadable file bound over secrets that are files.
const HIDDEN_FILE: &CStr = c"/dev/.sixfold-hidden";

/// A fresh /dev: the harmless device files bound from the host, a private devpts and
/// /dev/shm, and nothing else (the host's disks are not there).
fn build_dev(plan: &Plan, devices: &[RawFd]) -> Result<(), Failure> {
    let dev = |e| (Step::Dev, 0, e);
    mount(
        Some(c"tmpfs"),
        c"/dev",
        Some(c"tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some(c"mode=0755,size=1m"),
    )
    .map_err(dev)?;
    for (index, (device, fd)) in plan.devices.iter().zip(devices.iter()).enumerate() {
        if *fd < 0 {
            continue;
        }
        sys::create_file(device, 0o666).map_err(|e| (Step::Device, index, e))?;
        sys::move_mount(*fd, device).map_err(|e| (Step::Device, index, e))?;
        sys::close(*fd);
    }
    for (target, link) in [
        (c"/proc/self/fd", c"/dev/fd"),
        (c"/proc/self/fd/0", c"/dev/stdin"),
        (c"/proc/self/fd/1", c"/dev/stdout"),
        (c"/proc/self/fd/2", c"/dev/stderr"),
        (c"pts/ptmx", c"/dev/ptmx"),
    ] {
        sys::symlink(target, link).map_err(dev)?;
    }
    sys::mkdir(c"/dev/pts", 0o755).map_err(dev)?;
    mount(
        Some(c"devpts"),
        c"/dev/pts",
        Some(c"devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some(c"newinstance,ptmxmode=0666,mode=0620"),
    )
    .map_err(dev)?;
    sys::mkdir(c"/dev/shm", 0o755).map_err(dev)?;
    mount(
        Some(c"tmpfs"),
        c"/dev/shm",
        Some(c"tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(c"mode=1777"),
    )
    .map_err(dev)?;
    sys::create_file(HIDDEN_FILE, 0).map_err(dev)?;
    Ok(())
}

/// Confines init (and so the command it forks): Landlock for the fresh /dev's directories, no
/// capabilities, no_new_privs, the Landlock ruleset, the seccomp filter.
fn confine(plan: &Plan) -> Result<(), Failure> {
    use std::os::fd::AsRawFd;
    if let Some(landlock) = &plan.landlock {
        for dir in [c"/dev/shm", c"/dev/pts"] {
            sys::landlock_add_path(landlock.ruleset.as_raw_fd(), dir, landlock.all_writes)
                .map_err(|e| (Step::Landlock, 0, e))?;
        }
        // The layered caches exist only inside, like /dev/shm.
        for cache in &plan.caches {
            sys::landlock_add_path(landlock.ruleset.as_raw_fd(), &cache.path, landlock.all_writes)
                .map_err(|e| (Step::Landlock, 0, e))?;
        }
    }
    // The caller's session keyring (and the keys it holds) is not the command's: a fresh,
    // empty one replaces it; the filter below then refuses the keyring calls altogether.
    sys::join_session_keyring().map_err(|e| (Step::Keyring, 0, e))?;
    // INVARIANT (fail closed): without capabilities nothing inside can undo a mount, and no
    // execve (a set-user-ID program included) can grant one back.
    sys::drop_capabilities().map_err(|e| (Step::Capabilities, 0, e))?;
    sys::no_new_privs().map_err(|e| (Step::NoNewPrivs, 0, e))?;
    if let Some(landlock) = &plan.landlock {
        sys::landlock_restrict_self(landlock.ruleset.as_raw_fd()).map_err(|e| (Step::Landlock, 0, e))?;
        sys::close(landlock.ruleset.as_raw_fd());
    }
    // seccompiler's apply_filter is a prctl and a seccomp system call on the prepared program;
    // on success it allocates nothing.
    seccompiler::apply_filter(&plan.seccomp).map_err(|e| {
        let errno = match e {
            seccompiler::Error::Seccomp(io) | seccompiler::Error::Prctl(io) => {
                io.raw_os_error().unwrap_or(libc::EINVAL)
            }
            _ => libc::EINVAL,
        };
        (Step::Seccomp, 0, errno)
    })?;
    Ok(())
}

/// What init hands the command's process.
struct Call<'p> {
    plan: &'p Plan,
    pipe: RawFd,
}

/// The command's process, started by [`sys::spawn_sharing`].
extern "C" fn run_command(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Call` init made, alive and unchanged while init is suspended until
    // this process execs or exits.
    let call = unsafe { &*arg.cast::<Call<'_>>() };
    command(call.plan, call.pipe)
}

/// The command's process: the default signal state, its working directory, then execve (or
/// the probe).
fn command(plan: &Plan, pipe: RawFd) -> ! {
    let _ = sys::die_with_parent();
    sys::reset_signals();
    if let Err(e) = sys::chdir(&plan.cwd) {
        fail(pipe, (Step::Chdir, 0, e));
    }
    match &plan.payload {
        Payload::Exec(exec) => {
            // Only stdin, stdout and stderr go through to the command.
            sys::cloexec_from_3();
            let errno = sys::execve(&exec.program, &exec.argv, &exec.envp);
            report(pipe, Step::Exec as u32, 0, errno);
            sys::exit(127)
        }
        Payload::Probe(ops) => {
            for (index, op) in ops.iter().enumerate() {
                report(pipe, PROBE_RESULT, index, try_op(op));
            }
            sys::exit(0)
        }
    }
}

/// Tries one probe operation: 0 when it worked, else the error number.
fn try_op(op: &ProbeOp) -> i32 {
    let result = match op.kind {
        ProbeKind::CreateFile => sys::open(
            &op.path,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            0o600,
        )
        .map(|fd| {
            sys::close(fd);
            sys::unlink(&op.path);
        }),
        ProbeKind::OpenForWrite => sys::open(&op.path, libc::O_WRONLY | libc::O_APPEND, 0).map(sys::close),
        ProbeKind::MakeDir => sys::mkdir(&op.path, 0o700).map(|()| sys::rmdir(&op.path)),
        ProbeKind::Read => sys::open(&op.path, libc::O_RDONLY, 0).and_then(|fd| {
            let read = sys::read_one(fd);
            sys::close(fd);
            match read {
                // A directory opened for reading was read; EISDIR means the open worked.
                Err(libc::EISDIR) => Ok(0),
                other => other,
            }
            .map(|_| ())
        }),
        ProbeKind::Remove => sys::remove(&op.path),
        ProbeKind::Connect => sys::connect_loopback(op.port),
        ProbeKind::Rename => sys::rename(&op.path, &op.other).map(|()| {
            let _ = sys::rename(&op.other, &op.path);
        }),
        ProbeKind::ConnectUnix => sys::connect_unix(&op.path, false),
        ProbeKind::ConnectAbstract => sys::connect_unix(&op.path, true),
        ProbeKind::Keyring => sys::session_keyring(),
    };
    match result {
        Ok(()) => 0,
        Err(errno) => errno,
    }
}
