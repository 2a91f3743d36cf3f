//! SHA-256, as every hash the engine makes is made: a layer's content hash, a checkpoint's
//! digest, a cache's key.
//!
//! Short inputs are hashed in portable code (`hmac-sha256`), long ones by `sha2`, which uses the
//! CPU's SHA extensions where it has them. Finding out whether it has them costs `sha2` two CPUID
//! instructions per process, and under a hypervisor each CPUID exits to it (8.45 µs each on the
//! machine of `docs/performance.md`): more than hashing a few kilobytes in portable code. A hook
//! call hashes only its project's state and its checkpoint, so it never asks; a project of a
//! thousand rules is hashed with the extensions. Both give the same digest (tested below).
//!
//! The build script includes this file too (`build.rs`), for the shipped bundle's hash.

/// Inputs shorter than this are hashed in portable code: at most a few microseconds slower than
/// with the SHA extensions, where asking for them costs more under a hypervisor.
const SHORT: usize = 4 * 1024;

/// A SHA-256 being computed.
#[derive(Clone)]
pub struct Sha256(Inner);

impl std::fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = match self.0 {
            Inner::Short(_) => "portable",
            Inner::Long(_) => "sha2",
        };
        f.debug_tuple("Sha256").field(&how).finish()
    }
}

#[derive(Clone)]
enum Inner {
    Short(hmac_sha256::Hash),
    Long(sha2::Sha256),
}

impl Sha256 {
    /// A hash of about `len` bytes in all: what chooses how it is computed (any number of bytes
    /// may follow; the digest is SHA-256's either way).
    pub fn sized(len: usize) -> Sha256 {
        use sha2::Digest as _;
        Sha256(match len < SHORT {
            true => Inner::Short(hmac_sha256::Hash::new()),
            false => Inner::Long(sha2::Sha256::new()),
        })
    }

    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        use sha2::Digest as _;
        match &mut self.0 {
            Inner::Short(hash) => hash.update(bytes),
            Inner::Long(hash) => hash.update(bytes),
        }
    }

    /// The digest.
    pub fn finalize(self) -> [u8; 32] {
        use sha2::Digest as _;
        match self.0 {
            Inner::Short(hash) => hash.finalize(),
            Inner::Long(hash) => hash.finalize().into(),
        }
    }

    /// The digest of `bytes`.
    pub fn digest(bytes: &[u8]) -> [u8; 32] {
        let mut hash = Sha256::sized(bytes.len());
        hash.update(bytes);
        hash.finalize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_digests() {
        let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(hex(Sha256::digest(b"")), empty);
        assert_eq!(hex(Sha256::sized(SHORT).finalize()), empty);
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(hex(Sha256::digest(b"abc")), abc);
    }

    proptest! {
        /// Whichever computes it, in whatever pieces, the digest is `sha2`'s of the whole.
        #[test]
        fn both_ways_give_sha2s_digest(
            pieces in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..3000), 0..6),
            claimed in 0usize..3 * SHORT,
        ) {
            use sha2::Digest as _;
            let whole: Vec<u8> = pieces.concat();
            let expected: [u8; 32] = sha2::Sha256::digest(&whole).into();
            let mut hash = Sha256::sized(claimed);
            for piece in &pieces {
                hash.update(piece);
            }
            let copy = hash.clone();
            prop_assert_eq!(hash.finalize(), expected);
            prop_assert_eq!(copy.finalize(), expected);
            prop_assert_eq!(Sha256::digest(&whole), expected);
        }
    }
}
