//! The second wall for writes: a Landlock ruleset that allows writing only beneath the writable
//! roots (and the few device files every program writes to), so a write the mounts would let
//! through by mistake is still refused. It is also the only wall that keeps a missing protected
//! path from being created (see [`Layout::sealed`]).

use crate::environment::Network;
use crate::error::SandboxError;
use crate::layout::Layout;
use crate::linux::sys;
use landlock::{
    make_bitflags, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};
use std::os::fd::OwnedFd;
use std::path::Path;

/// The device files every program may write to; they are bound into the sandbox's `/dev`.
pub(crate) const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The rights Landlock adds in this sandbox (a subset of the kernel's ABI 5 write rights).
const NEWEST_USED: i32 = 5;

/// A created ruleset, not yet enforced, and the bits the child grants on the directories that
/// exist only inside the sandbox (`/dev/shm`, `/dev/pts`).
#[derive(Debug)]
pub(crate) struct LandlockRules {
    /// The ruleset; enforced by the sandbox's init process after its mounts.
    pub(crate) ruleset: OwnedFd,
    /// Every write right this ruleset handles, as the kernel's bit mask.
    pub(crate) all_writes: u64,
}

/// Builds the ruleset for a layout. `Ok(None)` when the kernel has no Landlock and nothing
/// needs it; an error when a sealed directory needs it and it is missing.
pub(crate) fn build(layout: &Layout, network: Network) -> Result<Option<LandlockRules>, SandboxError> {
    let Some(kernel) = sys::landlock_abi() else {
        if let Some(sealed) = layout.missing.first() {
            // INVARIANT (fail closed): without Landlock a missing protected path could be
            // created, so the environment is refused rather than enforced without it.
            return Err(SandboxError::Unsupported {
                what: format!(
                    "Landlock is needed to keep `{}` from being created, and this kernel has none (Linux 5.13+ \
                     with `landlock` in the `lsm=` list)",
                    sealed.display()
                ),
            });
        }
        return Ok(None);
    };
    let abi = ABI::from(kernel.min(NEWEST_USED));
    let all_writes = AccessFs::from_write(abi);
    let file_writes = all_writes & AccessFs::from_file(abi);
    let makes: BitFlags<AccessFs> =
        make_bitflags!(AccessFs::{MakeChar | MakeDir | MakeReg | MakeSock | MakeFifo | MakeBlock | MakeSym});
    let refer = if kernel >= 2 {
        BitFlags::from(AccessFs::Refer)
    } else {
        BitFlags::EMPTY
    };
    // Inside a sealed directory existing entries stay writable and removable; nothing new.
    let sealed_writes = all_writes & !makes & !refer;

    let failed = |e: &dyn std::fmt::Display| SandboxError::Unsupported {
        what: format!("cannot build the Landlock ruleset: {e}"),
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all_writes)
        .map_err(|e| failed(&e))?;
    if network.is_cut() && kernel >= 4 {
        // A third wall for the network: no TCP bind or connect at all.
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(|e| failed(&e))?;
    }
    if kernel >= 6 {
        // No connecting to the host's abstract Unix sockets, no signals to processes outside.
        ruleset = ruleset.scope(Scope::from_all(ABI::V6)).map_err(|e| failed(&e))?;
    }
    let mut created = ruleset.create().map_err(|e| failed(&e))?;

    let mut grants: Vec<(std::path::PathBuf, BitFlags<AccessFs>)> = Vec::new();
    for root in &layout.writable {
        grant_tree(
            root,
            &layout.sealed,
            all_writes,
            sealed_writes,
            file_writes,
            &mut grants,
        );
    }
    for device in DEVICES {
        grants.push((device.into(), file_writes));
    }
    for (path, access) in grants {
        // A path that vanished since the layout was resolved simply gets no grant: less access,
        // never more.
        let Ok(fd) = PathFd::new(&path) else {
            continue;
        };
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(|e| failed(&e))?;
    }
    let fd: Option<OwnedFd> = created.into();
    match fd {
        Some(ruleset) => Ok(Some(LandlockRules {
            ruleset,
            all_writes: all_writes.bits(),
        })),
        None if !layout.missing.is_empty() => Err(SandboxError::Unsupported {
            what: "Landlock is needed to keep missing protected paths from being created, and it could not be \
                   enabled"
                .to_string(),
        }),
        None => Ok(None),
    }
}

/// Grants writes beneath `dir`; where a sealed directory lies below (or is `dir`), the grant is
/// split so that the sealed directory and its ancestors get no right to create entries, while
/// every existing entry beside them keeps all rights.
fn grant_tree(
    dir: &Path,
    sealed: &[std::path::PathBuf],
    all_writes: BitFlags<AccessFs>,
    sealed_writes: BitFlags<AccessFs>,
    file_writes: BitFlags<AccessFs>,
    grants: &mut Vec<(std::path::PathBuf, BitFlags<AccessFs>)>,
) {
    if !sealed.iter().any(|s| s.starts_with(dir)) {
        grants.push((dir.to_path_buf(), all_writes));
        return;
    }
    // Landlock rights are inherited downwards, so `dir` itself must not get the rights to make
    // entries; they are given to each existing entry instead.
    grants.push((dir.to_path_buf(), sealed_writes));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            // A grant on a link would land on its target, which may be outside every root.
            continue;
        }
        if kind.is_dir() {
            grant_tree(&entry.path(), sealed, all_writes, sealed_writes, file_writes, grants);
        } else {
            grants.push((entry.path(), file_writes));
        }
    }
}
