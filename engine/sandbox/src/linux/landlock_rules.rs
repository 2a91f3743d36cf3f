//! The second wall for writes: a Landlock ruleset that allows writing only beneath the writable
//! roots (and the few device files every program writes to), so a write the mounts would let
//! through by mistake is still refused. (A missing protected path is kept by a placeholder the
//! mounts bind read-only, see `placeholder.rs`, not by Landlock.)

use crate::environment::Network;
use crate::error::SandboxError;
use crate::layout::Layout;
use crate::linux::sys;
use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};
use std::os::fd::OwnedFd;

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

/// Builds the ruleset for a layout; `Ok(None)` when the kernel has no Landlock (the read-only
/// mounts are then the only wall).
pub(crate) fn build(layout: &Layout, network: Network) -> Result<Option<LandlockRules>, SandboxError> {
    let Some(kernel) = sys::landlock_abi() else {
        return Ok(None);
    };
    let abi = ABI::from(kernel.min(NEWEST_USED));
    let all_writes = AccessFs::from_write(abi);
    let file_writes = all_writes & AccessFs::from_file(abi);

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
        grants.push((root.clone(), all_writes));
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
        None => Ok(None),
    }
}
