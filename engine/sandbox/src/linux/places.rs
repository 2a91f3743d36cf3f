//! The places the caller resolves while the sandbox's namespaces are being made
//! ([`Layout::finish`]): the entries kept in place and the secrets and sockets masked. They go
//! to init over a pipe, one record each, then an end record; init mounts each as it reads it.
//! A stream that stops before the end record (the caller failed) builds nothing further and
//! runs nothing.

use crate::error::SandboxError;
use crate::layout::Layout;
use crate::linux::sys::{self, Errno};
use nix::libc;
use std::ffi::CStr;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A record's header: its kind, a flag, two unused bytes, the path's length with its NUL, then
/// the device and inode the mount must land on (zero for a mask).
const HEADER: usize = 24;

/// The room init keeps for one record: a path the kernel takes is at most `PATH_MAX` bytes
/// with its NUL.
pub(crate) const RECORD_MAX: usize = HEADER + libc::PATH_MAX as usize;

const END: u8 = 0;
const KEPT: u8 = 1;
const HIDDEN: u8 = 2;

/// One place, as init reads it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Place<'a> {
    /// An entry kept in place ([`crate::layout::Kept`]).
    Kept {
        /// Where it is.
        path: &'a CStr,
        /// Whether it is read-only, else only pinned.
        read_only: bool,
        /// The device and inode the bind must land on.
        identity: (u64, u64),
    },
    /// A secret or socket masked ([`crate::layout::Hidden`]).
    Hidden {
        /// Where it is.
        path: &'a CStr,
        /// Whether it is a directory.
        is_dir: bool,
    },
}

/// The records of `layout`'s places: the kept entries in their order (parents first), the
/// hidden ones, then the end. The indices init reports a failure with are positions in
/// `layout.kept` and `layout.hidden`.
pub(crate) fn encode(layout: &Layout) -> Result<Vec<u8>, SandboxError> {
    let mut records = Vec::new();
    for kept in &layout.kept {
        push(&mut records, KEPT, kept.read_only, kept.identity, &kept.path)?;
    }
    for hidden in &layout.hidden {
        push(&mut records, HIDDEN, hidden.is_dir, (0, 0), &hidden.path)?;
    }
    records.extend_from_slice(&[END; HEADER]);
    Ok(records)
}

fn push(
    records: &mut Vec<u8>,
    kind: u8,
    flag: bool,
    (device, inode): (u64, u64),
    path: &Path,
) -> Result<(), SandboxError> {
    let bytes = path.as_os_str().as_bytes();
    let length = bytes.len() + 1;
    if bytes.contains(&0) || HEADER + length > RECORD_MAX {
        return Err(SandboxError::Invalid {
            what: format!(
                "`{}` cannot be mounted (a NUL byte, or longer than PATH_MAX)",
                path.display()
            ),
        });
    }
    records.extend_from_slice(&[kind, u8::from(flag), 0, 0]);
    records.extend_from_slice(&u32::try_from(length).unwrap_or(u32::MAX).to_ne_bytes());
    records.extend_from_slice(&device.to_ne_bytes());
    records.extend_from_slice(&inode.to_ne_bytes());
    records.extend_from_slice(bytes);
    records.push(0);
    Ok(())
}

/// Reads the next place from `fd` into `buffer` (at least [`RECORD_MAX`] bytes): `None` at the
/// end record. A stream that ends early, or a record that is not one `encode` writes, is an
/// error (fail closed). Only raw reads into memory prepared before the fork: async-signal-safe.
pub(crate) fn read(fd: RawFd, buffer: &mut [u8]) -> Result<Option<Place<'_>>, Errno> {
    let (header, rest) = buffer.split_at_mut_checked(HEADER).ok_or(libc::EINVAL)?;
    sys::read_exact(fd, header)?;
    let [kind, flag, _, _, l0, l1, l2, l3, ref rest_of_header @ ..] = *header else {
        return Err(libc::EINVAL);
    };
    let word = |at: usize| -> u64 {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(rest_of_header.get(at..at + 8).unwrap_or(&[0; 8]));
        u64::from_ne_bytes(bytes)
    };
    let identity = (word(0), word(8));
    if kind == END {
        return Ok(None);
    }
    let length = u32::from_ne_bytes([l0, l1, l2, l3]) as usize;
    if flag > 1 || length == 0 {
        return Err(libc::EINVAL);
    }
    let path = rest.get_mut(..length).ok_or(libc::ENAMETOOLONG)?;
    sys::read_exact(fd, path)?;
    // Exactly one NUL, the last byte.
    let path = CStr::from_bytes_with_nul(path).map_err(|_| libc::EINVAL)?;
    match kind {
        KEPT => Ok(Some(Place::Kept {
            path,
            read_only: flag == 1,
            identity,
        })),
        HIDDEN => Ok(Some(Place::Hidden {
            path,
            is_dir: flag == 1,
        })),
        _ => Err(libc::EINVAL),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{Hidden, Kept};
    use std::os::fd::AsRawFd;

    fn through_a_pipe(bytes: &[u8]) -> std::os::fd::OwnedFd {
        let (read, write) = nix::unistd::pipe().unwrap();
        sys::write_all(write.as_raw_fd(), bytes).unwrap();
        read
    }

    #[test]
    fn places_read_back_as_they_were_written_then_the_end() {
        let mut layout = Layout::default();
        layout.kept = vec![
            Kept {
                path: "/w/.git".into(),
                read_only: false,
                identity: (7, 42),
            },
            Kept {
                path: "/w/.git/hooks".into(),
                read_only: true,
                identity: (7, u64::MAX),
            },
        ];
        layout.hidden = vec![Hidden {
            path: "/w/.env".into(),
            is_dir: false,
        }];
        let pipe = through_a_pipe(&encode(&layout).unwrap());
        let mut buffer = vec![0u8; RECORD_MAX];
        let mut places = Vec::new();
        loop {
            match read(pipe.as_raw_fd(), &mut buffer).unwrap() {
                Some(Place::Kept {
                    path,
                    read_only,
                    identity,
                }) => places.push(format!("kept {} {read_only} {identity:?}", path.to_str().unwrap())),
                Some(Place::Hidden { path, is_dir }) => {
                    places.push(format!("hidden {} {is_dir}", path.to_str().unwrap()))
                }
                None => break,
            }
        }
        assert_eq!(
            places,
            [
                "kept /w/.git false (7, 42)",
                "kept /w/.git/hooks true (7, 18446744073709551615)",
                "hidden /w/.env false",
            ]
        );
    }

    #[test]
    fn a_stream_cut_short_or_malformed_is_an_error_never_the_end() {
        let mut layout = Layout::default();
        layout.hidden = vec![Hidden {
            path: "/w/.env".into(),
            is_dir: true,
        }];
        let whole = encode(&layout).unwrap();
        let mut buffer = vec![0u8; RECORD_MAX];
        // Every cut before the end record's last byte: the caller stopped part-way.
        for cut in 0..whole.len() {
            let pipe = through_a_pipe(whole.get(..cut).unwrap());
            let outcome = loop {
                match read(pipe.as_raw_fd(), &mut buffer) {
                    Ok(Some(_)) => continue,
                    other => break other.map(|_| ()),
                }
            };
            assert!(outcome.is_err(), "cut at {cut} read as a whole stream");
        }
        // A flag, a kind, a length or a NUL that `encode` never writes.
        for (at, value) in [(1, 2u8), (0, 9), (4, 0), (HEADER + 2, 0)] {
            let mut bad = whole.clone();
            *bad.get_mut(at).unwrap() = value;
            if at == 4 {
                bad.get_mut(4..8).unwrap().copy_from_slice(&0u32.to_ne_bytes());
            }
            let pipe = through_a_pipe(&bad);
            assert!(
                read(pipe.as_raw_fd(), &mut buffer).is_err(),
                "byte {at} = {value} was taken"
            );
        }
        // A length past the room init keeps.
        let mut long = whole;
        long.get_mut(4..8).unwrap().copy_from_slice(&u32::MAX.to_ne_bytes());
        let pipe = through_a_pipe(&long);
        assert_eq!(read(pipe.as_raw_fd(), &mut buffer), Err(libc::ENAMETOOLONG));
    }

    #[test]
    fn a_path_the_kernel_would_not_take_is_refused_when_written() {
        let mut layout = Layout::default();
        layout.hidden = vec![Hidden {
            path: format!("/{}", "a".repeat(libc::PATH_MAX as usize)).into(),
            is_dir: false,
        }];
        assert!(encode(&layout).is_err());
    }
}
