//! What can go wrong before or while a command is confined. Every failure is one of these and
//! none is ever treated as a sandbox that holds.

use std::fmt;
use std::path::PathBuf;

/// Why a command could not be run confined (its own exit status is not an error).
///
/// The message says what is missing, lowercase, with the path or program in backticks and a
/// help line where there is something to do:
///
/// ```
/// use sixfold_sandbox::SandboxError;
///
/// let error = SandboxError::NotFound { program: "cargo-nextest".into() };
/// assert_eq!(error.to_string(), "program `cargo-nextest` not found on `$PATH`");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum SandboxError {
    /// The environment cannot be enforced as written (a root that is not a directory, a
    /// protected path with a wildcard, a protected path that is a symbolic link, …).
    Invalid {
        /// What is wrong, for a person.
        what: String,
    },
    /// The machine lacks a mechanism the environment needs.
    Unsupported {
        /// The mechanism and why it is needed.
        what: String,
    },
    /// The kernel refused a step of building the sandbox.
    Setup {
        /// The step, as a verb phrase ("create a user namespace").
        step: &'static str,
        /// The path the step was about, if any.
        path: Option<PathBuf>,
        /// The kernel's error number.
        errno: i32,
    },
    /// The command's program is not on `$PATH`.
    NotFound {
        /// The program as given.
        program: String,
    },
    /// The program was found but could not be started inside the sandbox.
    Exec {
        /// The program's path.
        program: PathBuf,
        /// The kernel's error number.
        errno: i32,
    },
    /// The host side failed (a pipe, a fork, a wait).
    Host {
        /// What sixfold was doing.
        what: &'static str,
        /// The error.
        source: std::io::Error,
    },
}

impl SandboxError {
    /// The kernel's error number behind a [`Setup`](SandboxError::Setup) or
    /// [`Exec`](SandboxError::Exec) failure.
    pub fn errno(&self) -> Option<i32> {
        match self {
            SandboxError::Setup { errno, .. } | SandboxError::Exec { errno, .. } => Some(*errno),
            _ => None,
        }
    }

    /// What a person can do about it, when there is something.
    fn help(&self) -> Option<&'static str> {
        match self {
            SandboxError::Setup { step, errno, .. } if *step == STEP_USER_NAMESPACE => match *errno {
                nix_errno::EPERM | nix_errno::EACCES => Some(
                    "unprivileged user namespaces are off on this machine (sysctl \
                     `kernel.unprivileged_userns_clone`, `kernel.apparmor_restrict_unprivileged_userns`, \
                     or a container that forbids them)",
                ),
                nix_errno::ENOSPC => Some("`user.max_user_namespaces` is 0 or exhausted on this machine"),
                nix_errno::EINVAL => Some("this kernel was built without user, mount, PID or network namespaces"),
                _ => None,
            },
            SandboxError::Setup { errno, .. } if *errno == nix_errno::ENOSYS => {
                Some("this kernel is too old: the sandbox needs Linux 5.12 or later")
            }
            _ => None,
        }
    }
}

/// The step whose failure means user namespaces are missing; named once so the help matches.
pub(crate) const STEP_USER_NAMESPACE: &str = "create user, mount, PID and network namespaces";

/// The few error numbers the help text distinguishes (the same on every Linux architecture).
mod nix_errno {
    pub(super) const EPERM: i32 = 1;
    pub(super) const EACCES: i32 = 13;
    pub(super) const EINVAL: i32 = 22;
    pub(super) const ENOSPC: i32 = 28;
    pub(super) const ENOSYS: i32 = 38;
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxError::Invalid { what } => write!(f, "environment cannot be enforced: {what}")?,
            SandboxError::Unsupported { what } => write!(f, "this machine cannot enforce the environment: {what}")?,
            SandboxError::Setup { step, path, errno } => {
                let reason = std::io::Error::from_raw_os_error(*errno);
                match path {
                    Some(path) => write!(f, "cannot {step} at `{}`: {}", path.display(), lowercase(&reason))?,
                    None => write!(f, "cannot {step}: {}", lowercase(&reason))?,
                }
            }
            SandboxError::NotFound { program } => write!(f, "program `{program}` not found on `$PATH`")?,
            SandboxError::Exec { program, errno } => {
                let reason = std::io::Error::from_raw_os_error(*errno);
                write!(
                    f,
                    "cannot start `{}` in the sandbox: {}",
                    program.display(),
                    lowercase(&reason)
                )?
            }
            SandboxError::Host { what, source } => write!(f, "cannot {what}: {}", lowercase(source))?,
        }
        if let Some(help) = self.help() {
            write!(f, "\nhelp: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SandboxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SandboxError::Host { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// An OS error's text without the `(os error N)` tail, starting lowercase.
fn lowercase(error: &std::io::Error) -> String {
    let text = error.to_string();
    let text = match text.find(" (os error") {
        Some(at) => text.get(..at).unwrap_or(&text).to_string(),
        None => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_user_namespace_says_what_to_do() {
        let error = SandboxError::Setup {
            step: STEP_USER_NAMESPACE,
            path: None,
            errno: nix_errno::EPERM,
        };
        let text = error.to_string();
        assert!(
            text.starts_with("cannot create user, mount, PID and network namespaces: operation not permitted"),
            "{text}"
        );
        assert!(text.contains("\nhelp: unprivileged user namespaces are off"), "{text}");
    }

    #[test]
    fn a_setup_error_names_its_path() {
        let error = SandboxError::Setup {
            step: "keep a protected path in place",
            path: Some("/w/.git/config".into()),
            errno: 2,
        };
        assert_eq!(
            error.to_string(),
            "cannot keep a protected path in place at `/w/.git/config`: no such file or directory"
        );
    }
}
