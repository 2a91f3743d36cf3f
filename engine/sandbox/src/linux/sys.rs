//! The raw system calls the sandbox makes, each wrapped once with why it is sound.
//!
//! Everything here may run in a child forked from a multithreaded process, where only
//! async-signal-safe work is allowed: each wrapper is one or a few system calls on memory the
//! caller prepared, and none allocates, locks, or touches state another thread may have left
//! half-changed. Errors are the kernel's error numbers.

use nix::libc;
use std::ffi::CStr;
use std::os::fd::RawFd;

/// A kernel error number.
pub(crate) type Errno = i32;

/// The current thread's `errno`: a read of a thread-local integer, async-signal-safe.
pub(crate) fn errno() -> Errno {
    nix::errno::Errno::last_raw()
}

fn check(result: libc::c_long) -> Result<libc::c_long, Errno> {
    if result < 0 {
        Err(errno())
    } else {
        Ok(result)
    }
}

fn check_int(result: libc::c_int) -> Result<libc::c_int, Errno> {
    if result < 0 {
        Err(errno())
    } else {
        Ok(result)
    }
}

/// Forks with the raw `clone` system call (flags `SIGCHLD` only: a plain fork).
///
/// Unlike libc's `fork`, this runs no `atfork` handlers and takes no userspace lock, so it is
/// safe in a process that is itself a fork of a multithreaded one. Returns 0 in the child.
pub(crate) fn fork() -> Result<libc::pid_t, Errno> {
    // SAFETY: `clone` with only SIGCHLD and a null stack duplicates the calling thread exactly
    // like fork(2); the child continues on a copy of this stack. No Rust invariant depends on
    // the pid, and the callers run only async-signal-safe code in the child until execve or
    // _exit.
    let pid = check(unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    })?;
    Ok(pid as libc::pid_t)
}

/// A child's stack: anonymous memory with an inaccessible page below it, so an overflow faults
/// instead of writing over the memory the child shares with its parent.
#[derive(Debug)]
pub(crate) struct Stack {
    base: *mut libc::c_void,
    len: usize,
}

impl Stack {
    /// At least `usable` bytes of stack, plus the guard page.
    pub(crate) fn new(usable: usize) -> Result<Stack, Errno> {
        // SAFETY: sysconf takes an integer and returns one.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = usable.div_ceil(page) * page + page;
        // SAFETY: a private anonymous mapping at an address the kernel chooses aliases nothing
        // Rust owns.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(errno());
        }
        // Unmapped again by its drop if the guard cannot be set.
        let stack = Stack { base, len };
        // SAFETY: the first page of the mapping just made, which nothing uses yet.
        check_int(unsafe { libc::mprotect(base, page, libc::PROT_NONE) })?;
        Ok(stack)
    }

    /// Where the stack starts (it grows down from its end).
    fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which `new` made `len` bytes long.
        unsafe { self.base.cast::<u8>().add(self.len) }.cast()
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made, unmapped once; no child runs on it any more (the one
        // that did has exec'd or exited before its parent went on).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// Starts `child(arg)` on `stack` in this process's memory (`CLONE_VM | CLONE_VFORK`, as
/// posix_spawn does) and returns once the child has called execve or exited, with its pid: a fork
/// that copies no page table, for a child that only prepares an execve.
///
/// `child` must only make async-signal-safe calls on memory prepared before, write nothing its
/// parent reads afterwards, and end in execve or _exit.
pub(crate) fn spawn_sharing(
    stack: &Stack,
    child: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> Result<libc::pid_t, Errno> {
    // SAFETY: the child runs on `stack`, a live mapping nothing else uses, never on this
    // thread's frames; this thread is suspended until the child has exec'd (its memory is then
    // its own) or exited, so `arg`, `stack` and everything the child reads stay alive and
    // unchanged while it runs. The child writes only its own stack and its thread's errno.
    check_int(unsafe {
        libc::clone(
            child,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            arg,
        )
    })
}

/// Ends the calling process at once, without running destructors or atexit handlers (which
/// would touch the parent's copied state).
pub(crate) fn exit(code: i32) -> ! {
    // SAFETY: _exit(2) never returns and has no precondition.
    unsafe { libc::_exit(code) }
}

/// Waits for `pid` (or any child with -1), retrying on EINTR; returns the pid and raw status.
pub(crate) fn wait(pid: libc::pid_t) -> Result<(libc::pid_t, libc::c_int), Errno> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid, exclusively borrowed int for the call.
        let found = unsafe { libc::waitpid(pid, &mut status, 0) };
        if found >= 0 {
            return Ok((found, status));
        }
        let e = errno();
        if e != libc::EINTR {
            return Err(e);
        }
    }
}

/// A wait status as an exit code: the code, or 128 + the signal that killed the process.
pub(crate) fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        // INVARIANT (fail closed): a status that is neither an exit nor a signal is a failure.
        255
    }
}

/// Writes all of `bytes` to `fd`, retrying on EINTR and short writes.
pub(crate) fn write_all(fd: RawFd, mut bytes: &[u8]) -> Result<(), Errno> {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe a live slice.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if written < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        bytes = bytes.get(written as usize..).unwrap_or_default();
    }
    Ok(())
}

/// Fills `bytes` from `fd`, retrying on EINTR and short reads; the end of the stream before
/// `bytes` is full is `EPIPE`.
pub(crate) fn read_exact(fd: RawFd, mut bytes: &mut [u8]) -> Result<(), Errno> {
    while !bytes.is_empty() {
        // SAFETY: the pointer and length describe a live, exclusively borrowed slice.
        let read = unsafe { libc::read(fd, bytes.as_mut_ptr().cast(), bytes.len()) };
        if read < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        if read == 0 {
            return Err(libc::EPIPE);
        }
        bytes = std::mem::take(&mut bytes).get_mut(read as usize..).unwrap_or_default();
    }
    Ok(())
}

/// Opens `path` with `flags` and `mode`.
pub(crate) fn open(path: &CStr, flags: libc::c_int, mode: libc::mode_t) -> Result<RawFd, Errno> {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    check_int(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) })
}

/// Closes `fd`, ignoring errors (there is nothing to do about them here).
pub(crate) fn close(fd: RawFd) {
    // SAFETY: closing an fd this process owns; a stale number only yields EBADF.
    unsafe { libc::close(fd) };
}

/// Writes `bytes` to the file at `path` (for `/proc/self/uid_map` and friends).
pub(crate) fn write_file(path: &CStr, bytes: &[u8]) -> Result<(), Errno> {
    let fd = open(path, libc::O_WRONLY, 0)?;
    let result = write_all(fd, bytes);
    close(fd);
    result
}

/// Creates an empty file (a mount point or a mask) with `mode`, exactly (umask aside).
pub(crate) fn create_file(path: &CStr, mode: libc::mode_t) -> Result<(), Errno> {
    let fd = open(path, libc::O_WRONLY | libc::O_CREAT | libc::O_NOFOLLOW, mode)?;
    // SAFETY: fchmod on an fd just opened; sets the mode the umask may have narrowed.
    let result = check_int(unsafe { libc::fchmod(fd, mode) }).map(|_| ());
    close(fd);
    result
}

/// A path's device and inode, not following a final symbolic link (a link answers with its
/// own, so it never matches the entry it replaced).
pub(crate) fn identity(path: &CStr) -> Result<(u64, u64), Errno> {
    // SAFETY: `path` is NUL-terminated and `stat` is a live, exclusively borrowed struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    check_int(unsafe { libc::lstat(path.as_ptr(), &mut stat) })?;
    #[allow(clippy::useless_conversion, reason = "the field types differ between architectures")]
    Ok((u64::from(stat.st_dev), u64::from(stat.st_ino)))
}

/// Creates a directory.
pub(crate) fn mkdir(path: &CStr, mode: libc::mode_t) -> Result<(), Errno> {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    check_int(unsafe { libc::mkdir(path.as_ptr(), mode) }).map(|_| ())
}

/// Creates a symbolic link `path` pointing to `target`.
pub(crate) fn symlink(target: &CStr, path: &CStr) -> Result<(), Errno> {
    // SAFETY: both are NUL-terminated strings that outlive the call.
    check_int(unsafe { libc::symlink(target.as_ptr(), path.as_ptr()) }).map(|_| ())
}

/// Removes a file.
pub(crate) fn unlink(path: &CStr) {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    unsafe { libc::unlink(path.as_ptr()) };
}

/// Removes an empty directory.
pub(crate) fn rmdir(path: &CStr) {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    unsafe { libc::rmdir(path.as_ptr()) };
}

/// Removes a file or, failing that, an empty directory; the error is the directory's when
/// `path` is one.
pub(crate) fn remove(path: &CStr) -> Result<(), Errno> {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    match check_int(unsafe { libc::unlink(path.as_ptr()) }) {
        Ok(_) => Ok(()),
        // SAFETY: as above.
        Err(libc::EISDIR) => check_int(unsafe { libc::rmdir(path.as_ptr()) }).map(|_| ()),
        Err(e) => Err(e),
    }
}

/// Changes the working directory.
pub(crate) fn chdir(path: &CStr) -> Result<(), Errno> {
    // SAFETY: `path` is a NUL-terminated string that outlives the call.
    check_int(unsafe { libc::chdir(path.as_ptr()) }).map(|_| ())
}

/// Reads one byte from `fd`; returns how many were read.
pub(crate) fn read_one(fd: RawFd) -> Result<usize, Errno> {
    let mut byte = [0u8; 1];
    // SAFETY: the buffer is a live one-byte array.
    let read = unsafe { libc::read(fd, byte.as_mut_ptr().cast(), 1) };
    if read < 0 {
        Err(errno())
    } else {
        Ok(read as usize)
    }
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `MOUNT_ATTR_RDONLY` and friends.
pub(crate) const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// Ignore set-user-ID bits.
pub(crate) const MOUNT_ATTR_NOSUID: u64 = 0x2;
/// No device files.
pub(crate) const MOUNT_ATTR_NODEV: u64 = 0x4;
/// No execution.
pub(crate) const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// Sets mount attributes on the mount at `path`, and on every mount below it when `recursive`.
pub(crate) fn mount_setattr(path: &CStr, recursive: bool, set: u64) -> Result<(), Errno> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 };
    // SAFETY: `path` is NUL-terminated and `attr` is a live `struct mount_attr` whose size is
    // passed; the kernel only reads it.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags as libc::c_uint,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
    .map(|_| ())
}

/// A detached copy of the mount tree at `path` (with `recursive`, its submounts too), as an fd
/// to attach elsewhere later with [`move_mount`]. Its flags are the original's.
pub(crate) fn open_tree(path: &CStr, recursive: bool) -> Result<RawFd, Errno> {
    let mut flags = libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC;
    if recursive {
        flags |= libc::AT_RECURSIVE as libc::c_uint;
    }
    // SAFETY: `path` is NUL-terminated; the call only returns a new fd.
    let fd = check(unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) })?;
    Ok(fd as RawFd)
}

/// Attaches the detached mount `fd` at `path`.
pub(crate) fn move_mount(fd: RawFd, path: &CStr) -> Result<(), Errno> {
    // SAFETY: the empty path and `path` are NUL-terminated strings that outlive the call.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    })
    .map(|_| ())
}

/// The kernel's Landlock ABI version, or `None` when Landlock is off or absent.
pub(crate) fn landlock_abi() -> Option<i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns a number.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (abi > 0).then_some(abi as i32)
}

/// `struct landlock_path_beneath_attr` (packed, as the kernel declares it).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// Grants `access` beneath `path` in the ruleset `ruleset`, for a path that exists only inside
/// the sandbox (a fresh `/dev/shm`, `/dev/pts`), so the parent could not add it.
pub(crate) fn landlock_add_path(ruleset: RawFd, path: &CStr, access: u64) -> Result<(), Errno> {
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_uint = 1;
    let fd = open(path, libc::O_PATH, 0)?;
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: fd,
    };
    // SAFETY: `attr` is a live packed struct of the layout the kernel expects; it is only read.
    let result = check(unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    });
    close(fd);
    result.map(|_| ())
}

/// Enforces the Landlock ruleset `ruleset` on the calling thread and its future children.
pub(crate) fn landlock_restrict_self(ruleset: RawFd) -> Result<(), Errno> {
    // SAFETY: the call takes an fd and flags only.
    check(unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) }).map(|_| ())
}

/// `prctl(option, arg)`.
fn prctl(option: libc::c_int, arg: libc::c_ulong) -> Result<(), Errno> {
    // SAFETY: the options used here take integer arguments only.
    check_int(unsafe { libc::prctl(option, arg, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong) })
        .map(|_| ())
}

/// Replaces the session keyring with a fresh anonymous one (`KEYCTL_JOIN_SESSION_KEYRING` with
/// no name). A kernel built without keyrings has none to leak: that is not an error.
pub(crate) fn join_session_keyring() -> Result<(), Errno> {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: with a null name the call takes integers only and returns the new keyring's id.
    match check(unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        )
    }) {
        Ok(_) | Err(libc::ENOSYS) => Ok(()),
        Err(e) => Err(e),
    }
}

/// A pidfd for the calling process (Linux 5.3+).
pub(crate) fn pidfd_self() -> Result<RawFd, Errno> {
    // SAFETY: pidfd_open(2) on this process's own pid only returns a new descriptor.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0 as libc::c_uint) };
    if fd < 0 {
        Err(errno())
    } else {
        RawFd::try_from(fd).map_err(|_| libc::EMFILE)
    }
}

/// Makes a new network namespace for the calling process.
pub(crate) fn new_network() -> Result<(), Errno> {
    // SAFETY: unshare(2) only changes this process's namespaces.
    check_int(unsafe { libc::unshare(libc::CLONE_NEWNET) }).map(|_| ())
}

/// Joins the network namespace of the process `pidfd` refers to (Linux 5.8+).
pub(crate) fn join_network(pidfd: RawFd) -> Result<(), Errno> {
    // SAFETY: setns(2) only changes this process's namespaces; `pidfd` is a descriptor it owns.
    check_int(unsafe { libc::setns(pidfd, libc::CLONE_NEWNET) }).map(|_| ())
}

/// Asks the kernel to SIGKILL the calling process when its parent ends.
pub(crate) fn die_with_parent() -> Result<(), Errno> {
    prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)
}

/// Sets `no_new_privs`: no execve may grant privileges again (set-user-ID bits, file
/// capabilities).
pub(crate) fn no_new_privs() -> Result<(), Errno> {
    prctl(libc::PR_SET_NO_NEW_PRIVS, 1)
}

/// Drops every capability: the bounding set (so no execve can grant one back, even as uid 0),
/// the ambient set, and the effective, permitted and inheritable sets.
pub(crate) fn drop_capabilities() -> Result<(), Errno> {
    for capability in 0..64 {
        // Capabilities are numbered from 0 without gaps, and a number past the kernel's last
        // one answers EINVAL: the set ends there.
        match prctl(libc::PR_CAPBSET_DROP, capability) {
            Ok(()) => {}
            Err(libc::EINVAL) if capability > 0 => break,
            Err(e) => return Err(e),
        }
    }
    // SAFETY: PR_CAP_AMBIENT takes integer arguments only.
    check_int(unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    })?;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let header = Header {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: `header` and the two `data` words are live structs of the kernel's layout for
    // version 3; capset only reads them.
    check(unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) }).map(|_| ())
}

/// Closes every fd from 3 up except those in `keep` (sorted ascending).
pub(crate) fn close_fds_except(keep: &[RawFd]) {
    let mut from: libc::c_uint = 3;
    for &fd in keep {
        if fd < 0 || (fd as libc::c_uint) < from {
            continue;
        }
        if fd as libc::c_uint > from {
            close_range(from, fd as libc::c_uint - 1, 0);
        }
        from = fd as libc::c_uint + 1;
    }
    close_range(from, libc::c_uint::MAX, 0);
}

/// Marks every fd from 3 up close-on-exec, so the command inherits only stdin, stdout and
/// stderr.
pub(crate) fn cloexec_from_3() {
    close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC);
}

fn close_range(first: libc::c_uint, last: libc::c_uint, flags: libc::c_uint) {
    // SAFETY: close_range(2) only closes (or flags) descriptors of this process; none of them
    // is owned by a Rust object that will be used again in this process, which only execs or
    // exits next.
    unsafe { libc::syscall(libc::SYS_close_range, first, last, flags) };
}

/// Restores the default signal dispositions and an empty signal mask, as a fresh process has
/// them: the Rust runtime ignores SIGPIPE, and an ignored signal stays ignored across execve.
pub(crate) fn reset_signals() {
    // SAFETY: sigemptyset initialises the set; sigprocmask and signal take valid arguments; both
    // are async-signal-safe.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        for signal in [
            libc::SIGPIPE,
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGCHLD,
        ] {
            libc::signal(signal, libc::SIG_DFL);
        }
    }
}

/// Replaces the process image. Returns only on failure.
pub(crate) fn execve(program: &CStr, argv: &[*const libc::c_char], envp: &[*const libc::c_char]) -> Errno {
    // SAFETY: `program` is NUL-terminated; `argv` and `envp` are null-terminated arrays of
    // pointers to NUL-terminated strings, all prepared before the fork and alive until execve
    // replaces the process.
    unsafe { libc::execve(program.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    errno()
}

/// Opens a TCP connection to 127.0.0.1:`port`; `Ok` when it connected.
pub(crate) fn connect_loopback(port: u16) -> Result<(), Errno> {
    // SAFETY: socket takes integers only.
    let fd = check_int(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })?;
    let address = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `address` is a live sockaddr_in whose size is passed.
    let result = check_int(unsafe {
        libc::connect(
            fd,
            &address as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    });
    close(fd);
    result.map(|_| ())
}

/// Renames `from` to `to`.
pub(crate) fn rename(from: &CStr, to: &CStr) -> Result<(), Errno> {
    // SAFETY: both are NUL-terminated strings that outlive the call.
    check_int(unsafe { libc::rename(from.as_ptr(), to.as_ptr()) }).map(|_| ())
}

/// Connects a new Unix stream socket to `name`: a pathname socket, or an abstract one (the
/// name's bytes after a leading NUL) when `abstract_name`.
pub(crate) fn connect_unix(name: &CStr, abstract_name: bool) -> Result<(), Errno> {
    // SAFETY: a plain socket(2) call.
    let fd = check_int(unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: an all-zero sockaddr_un is valid.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = name.to_bytes();
    let start = usize::from(abstract_name);
    let mut length = start;
    for (slot, byte) in address.sun_path.iter_mut().skip(start).zip(bytes) {
        *slot = *byte as libc::c_char;
        length += 1;
    }
    let size = std::mem::size_of::<libc::sa_family_t>() + length;
    // SAFETY: `address` is a live sockaddr_un and `size` does not exceed it.
    let result = check_int(unsafe {
        libc::connect(
            fd,
            &address as *const libc::sockaddr_un as *const libc::sockaddr,
            size as libc::socklen_t,
        )
    });
    close(fd);
    result.map(|_| ())
}

/// Asks the kernel for the id of the session keyring (`KEYCTL_GET_KEYRING_ID`), as a command
/// reading its keys would start.
pub(crate) fn session_keyring() -> Result<(), Errno> {
    const KEYCTL_GET_KEYRING_ID: libc::c_long = 0;
    const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;
    // SAFETY: the call takes integers only.
    check(unsafe { libc::syscall(libc::SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) }).map(|_| ())
}
