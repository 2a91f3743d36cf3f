//! Everything the sandbox's processes need, prepared in the caller before the fork: C strings,
//! pointer arrays, the Landlock ruleset and the seccomp program. After the fork nothing is
//! allocated; the children only read this, and the places init receives later
//! (`places.rs`).

use crate::environment::{Environment, Network, Variables};
use crate::error::SandboxError;
use crate::layout::Layout;
use crate::linux::landlock_rules::{self, LandlockRules, DEVICES};
use crate::linux::seccomp_filter;
use crate::linux::sys::Stack;
use nix::libc;
use nix::sched::CloneFlags;
use seccompiler::BpfProgram;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// What the sandbox's processes do, decided and laid out in memory before the fork.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The caller's pid: the first child ends if its parent is no longer this one.
    pub(crate) parent: libc::pid_t,
    /// The namespaces the outer process enters (the network's is made apart: see `own_network`).
    pub(crate) namespaces: CloneFlags,
    /// Whether the command gets a network namespace of its own (the network is cut): the outer
    /// process makes it while init builds the filesystem, and init joins it.
    pub(crate) own_network: bool,
    /// `/proc/self/uid_map`'s line: the caller's uid as itself.
    pub(crate) uid_map: Vec<u8>,
    /// `/proc/self/gid_map`'s line: the caller's gid as itself.
    pub(crate) gid_map: Vec<u8>,
    /// [`Layout::writable`], as C strings.
    pub(crate) writable: Vec<CString>,
    /// [`Layout::caches`], as init mounts them.
    pub(crate) caches: Vec<CacheMount>,
    /// [`DEVICES`], as C strings.
    pub(crate) devices: Vec<CString>,
    /// The Landlock ruleset, when the kernel has Landlock.
    pub(crate) landlock: Option<LandlockRules>,
    /// The seccomp program.
    pub(crate) seccomp: BpfProgram,
    /// Where the command starts.
    pub(crate) cwd: CString,
    /// What runs inside.
    pub(crate) payload: Payload,
    /// The stack the command's process starts on, in init's memory.
    pub(crate) stack: Stack,
    /// The CPUs the caller may run on: the outer process may start on another of them (see
    /// `linux::elsewhere`), and init takes these back before it does anything else, so the
    /// command may run wherever its caller may.
    pub(crate) cpus: Option<nix::sched::CpuSet>,
}

/// The command's process runs little before its execve (or the probe's operations).
const COMMAND_STACK: usize = 64 * 1024;

/// A tool cache's overlay, as init mounts it.
#[derive(Debug)]
pub(crate) struct CacheMount {
    /// Where it is mounted.
    pub(crate) path: CString,
    /// The overlay's options.
    pub(crate) options: CString,
    /// The per-project layer (its upper and work directories), read-only to the command once
    /// the overlay is mounted.
    pub(crate) layer: CString,
}

/// What runs once the sandbox is built.
#[derive(Debug)]
pub(crate) enum Payload {
    /// A command, by execve.
    Exec(Exec),
    /// The probe: operations tried inside, each reported back.
    Probe(Vec<ProbeOp>),
}

/// A command ready for execve.
#[derive(Debug)]
pub(crate) struct Exec {
    /// The program's path.
    pub(crate) program: CString,
    /// Owns the strings `argv` points into.
    _args: Vec<CString>,
    /// Null-terminated `argv`.
    pub(crate) argv: Vec<*const libc::c_char>,
    /// Owns the strings `envp` points into.
    _vars: Vec<CString>,
    /// Null-terminated `envp`.
    pub(crate) envp: Vec<*const libc::c_char>,
}

/// One operation of the probe.
#[derive(Debug)]
pub(crate) struct ProbeOp {
    /// What to try.
    pub(crate) kind: ProbeKind,
    /// On what (unused for [`ProbeKind::Connect`]).
    pub(crate) path: CString,
    /// The port for [`ProbeKind::Connect`].
    pub(crate) port: u16,
    /// The new name for [`ProbeKind::Rename`].
    pub(crate) other: CString,
}

/// The operations the probe tries. Each is reported as 0 (it worked) or the error number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProbeKind {
    /// Create a new file (and remove it again when that worked).
    CreateFile,
    /// Open an existing file for writing, without truncating or writing.
    OpenForWrite,
    /// Create a directory (and remove it again when that worked).
    MakeDir,
    /// Open and read one byte (a directory: open it).
    Read,
    /// Remove a file or an empty directory.
    Remove,
    /// Connect to the host's loopback on a port.
    Connect,
    /// Rename an entry (and rename it back when that worked).
    Rename,
    /// Connect to a pathname Unix socket.
    ConnectUnix,
    /// Connect to an abstract Unix socket (the path's bytes are its name).
    ConnectAbstract,
    /// Ask for the session keyring.
    Keyring,
}

/// Turns a path into a C string; a NUL inside is an environment that cannot be enforced.
pub(crate) fn c_path(path: &Path) -> Result<CString, SandboxError> {
    c_string(path.as_os_str())
}

fn c_string(text: &OsStr) -> Result<CString, SandboxError> {
    CString::new(text.as_bytes()).map_err(|_| SandboxError::Invalid {
        what: format!("`{}` contains a NUL byte", text.to_string_lossy()),
    })
}

impl Plan {
    /// Prepares a plan for a layout of `environment`, as far as [`Layout::start`] resolves it.
    pub(crate) fn new(
        environment: &Environment,
        layout: &Layout,
        payload: Payload,
        cwd: &Path,
    ) -> Result<Plan, SandboxError> {
        let namespaces =
            CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC;
        let uid = nix::unistd::getuid().as_raw();
        let gid = nix::unistd::getgid().as_raw();
        let landlock = landlock_rules::build(layout, environment.network)?;
        let seccomp = seccomp_filter::build(environment.network)?;
        let paths = |list: &[PathBuf]| list.iter().map(|p| c_path(p)).collect::<Result<Vec<_>, _>>();
        Ok(Plan {
            parent: nix::unistd::getpid().as_raw(),
            namespaces,
            own_network: environment.network == Network::Cut,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            writable: paths(&layout.writable)?,
            caches: layout
                .caches
                .iter()
                .map(|c| {
                    // `volatile`: unmounting the layer does not sync the filesystem it lives on
                    // (the user's home, which a sync flushes whole, whoever wrote to it); what the
                    // command wrote reaches the disk as any write does, as when the tool writes
                    // the host's cache itself.
                    let options = format!(
                        "lowerdir={},upperdir={},workdir={},userxattr,volatile",
                        c.path.display(),
                        c.layer.join("upper").display(),
                        c.layer.join("work").display()
                    );
                    Ok(CacheMount {
                        path: c_path(&c.path)?,
                        options: c_string(OsStr::new(&options))?,
                        layer: c_path(&c.layer)?,
                    })
                })
                .collect::<Result<Vec<_>, SandboxError>>()?,
            devices: DEVICES
                .iter()
                .map(|d| c_path(Path::new(d)))
                .collect::<Result<Vec<_>, _>>()?,
            landlock,
            seccomp,
            cwd: c_path(cwd)?,
            payload,
            stack: Stack::new(COMMAND_STACK).map_err(|e| SandboxError::Host {
                what: "map the command's stack",
                source: std::io::Error::from_raw_os_error(e),
            })?,
            cpus: nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok(),
        })
    }

    /// The path a setup step's index refers to in `layout` (the one the plan and the places
    /// were made of), for its error message.
    pub(crate) fn path_of(&self, layout: &Layout, list: PathList, index: usize) -> Option<PathBuf> {
        match list {
            PathList::None => None,
            PathList::Writable => layout.writable.get(index).cloned(),
            PathList::Kept => layout.kept.get(index).map(|k| k.path.clone()),
            PathList::Hidden => layout.hidden.get(index).map(|h| h.path.clone()),
            PathList::Devices => DEVICES.get(index).map(PathBuf::from),
            PathList::Cwd => Some(PathBuf::from(OsStr::from_bytes(self.cwd.as_bytes()))),
            PathList::Caches => layout.caches.get(index).map(|c| c.path.clone()),
        }
    }
}

/// Which of the plan's lists a step's index points into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathList {
    /// The step is about no path.
    None,
    /// [`Plan::writable`].
    Writable,
    /// [`Layout::kept`], as the places were sent.
    Kept,
    /// [`Layout::hidden`], as the places were sent.
    Hidden,
    /// [`Plan::devices`].
    Devices,
    /// [`Plan::cwd`].
    Cwd,
    /// [`Plan::caches`].
    Caches,
}

impl Exec {
    /// Prepares `argv` for execve, with the program found on the caller's `$PATH` and the
    /// caller's environment variables that `variables` lets pass.
    pub(crate) fn new(argv: &[OsString], variables: &Variables) -> Result<Exec, SandboxError> {
        let Some(first) = argv.first() else {
            return Err(SandboxError::Invalid {
                what: "no command to run".to_string(),
            });
        };
        let program = find_program(first)?;
        let args = argv.iter().map(|a| c_string(a)).collect::<Result<Vec<_>, _>>()?;
        let vars = passed(std::env::vars_os(), variables)
            .into_iter()
            .map(|(k, v)| {
                let mut pair = k.into_vec();
                pair.push(b'=');
                pair.extend(v.into_vec());
                CString::new(pair).map_err(|_| SandboxError::Invalid {
                    what: "an environment variable contains a NUL byte".to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut envp: Vec<*const libc::c_char> = vars.iter().map(|v| v.as_ptr()).collect();
        envp.push(std::ptr::null());
        Ok(Exec {
            program: c_path(&program)?,
            _args: args,
            argv,
            _vars: vars,
            envp,
        })
    }
}

/// The program's path: as given when it has a `/`, else the first executable file of that name
/// on `$PATH`. Found on the host; the sandbox sees the same files, read-only.
fn find_program(program: &OsStr) -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::PermissionsExt;
    if program.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(program));
    }
    let search = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
    for dir in std::env::split_paths(&search) {
        let candidate = dir.join(program);
        if let Ok(meta) = std::fs::metadata(&candidate) {
            if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
                return Ok(candidate);
            }
        }
    }
    Err(SandboxError::NotFound {
        program: program.to_string_lossy().into_owned(),
    })
}

/// The variables of `all` that `variables` lets pass, in their order.
pub(crate) fn passed(
    all: impl Iterator<Item = (OsString, OsString)>,
    variables: &Variables,
) -> Vec<(OsString, OsString)> {
    // INVARIANT (fail closed): a name that is not text cannot be matched, so it never passes.
    all.filter(|(name, _)| name.to_str().is_some_and(|n| variables.passes(n)))
        .collect()
}
