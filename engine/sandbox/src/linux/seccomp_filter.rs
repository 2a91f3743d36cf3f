//! The seccomp filter: only what the namespaces do not already give.
//!
//! - `io_uring` is refused: its operations bypass the system-call filter below (a socket made
//!   through a ring is never seen here).
//! - The kernel keyring calls (`keyctl`, `add_key`, `request_key`) are refused: the command has a
//!   fresh session keyring, and no way to reach the keys of the user's other keyrings.
//! - `TIOCSTI` and `TIOCLINUX` are refused: with the user's terminal as stdin, a command could
//!   push keystrokes into the shell that started sixfold, outside the sandbox.
//! - When the network is cut, new sockets other than Unix ones are refused (`socket`,
//!   `socketpair`), a second wall behind the empty network namespace.
//!
//! Everything else is allowed; the filesystem is the mounts' and Landlock's job.

use crate::environment::Network;
use crate::error::SandboxError;
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// On x86_64, system calls of the x32 ABI carry this bit; the same rules are added for them in
/// case the kernel has x32 enabled.
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// The compiled filter for an environment.
pub(crate) fn build(network: Network) -> Result<BpfProgram, SandboxError> {
    let unsupported = |what: String| SandboxError::Unsupported { what };
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|_| {
        unsupported(format!(
            "no seccomp filter for the `{}` architecture",
            std::env::consts::ARCH
        ))
    })?;
    let failed = |e: seccompiler::BackendError| unsupported(format!("cannot build the seccomp filter: {e}"));

    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        rules.insert(call, Vec::new());
    }
    let mut terminal = Vec::new();
    #[allow(
        clippy::unnecessary_cast,
        reason = "the ioctl request type differs between architectures"
    )]
    for request in [libc::TIOCSTI as u64, libc::TIOCLINUX as u64] {
        let condition = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request).map_err(failed)?;
        terminal.push(SeccompRule::new(vec![condition]).map_err(failed)?);
    }
    rules.insert(libc::SYS_ioctl, terminal);
    if network.is_cut() {
        for call in [libc::SYS_socket, libc::SYS_socketpair] {
            let not_unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64)
                .map_err(failed)?;
            rules.insert(call, vec![SeccompRule::new(vec![not_unix]).map_err(failed)?]);
        }
    }
    if arch == TargetArch::x86_64 {
        // x32's ioctl has its own number (514); the others share x86_64's.
        let x32: Vec<(i64, Vec<SeccompRule>)> = rules
            .iter()
            .map(|(call, rule)| {
                let number = if *call == libc::SYS_ioctl { 514 } else { *call };
                (number | X32_SYSCALL_BIT, rule.clone())
            })
            .collect();
        rules.extend(x32);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(failed)?;
    BpfProgram::try_from(filter).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_for_both_network_settings() {
        assert!(!build(Network::Cut).unwrap().is_empty());
        assert!(!build(Network::Open).unwrap().is_empty());
    }
}
