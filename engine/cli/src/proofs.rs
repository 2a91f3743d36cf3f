//! The proof cache: what proving a mode's environment on this machine observed, kept in
//! `$XDG_CACHE_HOME/sixfold/proofs/` (else `~/.cache/sixfold/proofs/`), one small JSON file per
//! key, so neither the hook nor `sixfold sandbox run` probes at every command.
//!
//! A proof that held is kept until its key changes; one that failed is kept [`FAILED_FOR`] only
//! (a machine that cannot prove is not probed at every Bash call, and one that can again is
//! found soon). The directory keeps at most [`MAX_CACHED_PROOFS`] files: keys name roots and temp
//! directories, so without a bound it grows with every workspace ever used.
//!
//! A file is named by its key's digest ([`key_digest`]) and holds the environment it proved: the hook
//! hands that digest to the `sandbox run` it writes (`--proof`), which then reads the
//! environment from the proof instead of loading the bundle a second time ([`proven_by`]).

use sixfold_core::sha256::Sha256;
use sixfold_sandbox::{Environment, Proof};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A cached proof larger than this is not one sixfold wrote: it is ignored.
const MAX_CACHED_PROOF_BYTES: u64 = 256 * 1024;

/// How long a failed proof is believed before the environment is proven again.
pub(crate) const FAILED_FOR: Duration = Duration::from_secs(60);

/// The most proofs the cache keeps; past it the least recently written go.
pub(crate) const MAX_CACHED_PROOFS: usize = 64;

/// A proof found in the cache for exactly this key.
#[derive(Debug)]
pub(crate) enum Cached {
    /// It held: the environment is enforced here.
    Proven,
    /// It failed, less than [`FAILED_FOR`] ago.
    Failed(Proof),
}

/// What a cached proof must match exactly: sixfold's version, the kernel, the mode, the
/// environment's name and the environment as enforced (its roots, temp dir, home, path lists,
/// network, variables and placeholders). Made once per use: it reads the kernel's release.
pub(crate) fn cache_key(mode: &str, id: &str, environment: &Environment) -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "sixfold {}\nkernel {}\nmode {mode}\nenvironment {id}\n{environment:?}",
        env!("CARGO_PKG_VERSION"),
        kernel.trim()
    )
}

/// A key's digest: SHA-256, in lowercase hex. It names the key's file and is what `sandbox run
/// --proof` is handed.
pub(crate) fn key_digest(key: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(64);
    for b in Sha256::digest(key.as_bytes()) {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Where proofs are cached.
fn cache_dir() -> Option<PathBuf> {
    Some(sixfold_core::user_dirs::cache_dir()?.join("proofs"))
}

fn cache_file(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{}.json", key_digest(key)))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The proof cached under `key` ([`cache_key`]), where there is one still good.
pub(crate) fn cached_proof(key: &str) -> Option<Cached> {
    read(&cache_dir()?, key, now())
}

/// Keeps a proof for next time (a failed one for [`FAILED_FOR`]), with the environment it
/// proved. A cache that cannot be written is no error: the next run proves again.
pub(crate) fn store_proof(key: &str, made: Made<'_>, proof: &Proof) {
    if let Some(dir) = cache_dir() {
        write(&dir, key, made, proof, now());
    }
}

/// The environment of mode `mode` that a proof which held is cached for under `digest`, with
/// the environment's name, read from the proof. `None` unless the file's key is the digest's,
/// the key is the one this binary computes for the environment read back (this version, this
/// kernel, this mode), and it confines exactly the workspace `roots` with this process's `$HOME`
/// and temp dir: then it is the environment the bundle gave when the proof was made, bound to
/// the digest by SHA-256.
pub(crate) fn proven_by(mode: &str, digest: &str, roots: &[PathBuf]) -> Option<(String, Environment)> {
    // INVARIANT (fail closed): a digest names one file in the cache, never a path.
    if digest.len() != 64 || !digest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let dir = cache_dir()?;
    let text = sixfold_core::bounded::read_text(&dir.join(format!("{digest}.json")), MAX_CACHED_PROOF_BYTES).ok()?;
    let cached: WithEnvironment = serde_json::from_str(&text).ok()?;
    let (key, id, environment, proof) = (cached.key, cached.id, cached.environment, cached.proof);
    // INVARIANT (fail closed): the environment is taken only when everything it confines is in
    // the key the digest names, and the workspace, home and temp dir are this run's.
    let bound = key_digest(&key) == digest && cache_key(mode, &id, &environment) == key;
    let placed = environment
        .roots
        .iter()
        .chain(environment.read_only_roots.iter())
        .eq(roots.iter())
        && environment.home == home()
        && environment.tmp.as_ref().is_none_or(|tmp| *tmp == std::env::temp_dir());
    (proof.proven && bound && placed).then_some((id, environment))
}

/// The `$HOME` an environment's `~` stands for.
pub(crate) fn home() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default()
}

fn read(dir: &Path, key: &str, now: u64) -> Option<Cached> {
    // A FIFO or a device planted as the cache file cannot hang the command: regular files only.
    let text = sixfold_core::bounded::read_text(&cache_file(dir, key), MAX_CACHED_PROOF_BYTES).ok()?;
    let cached: Stored<Verdict> = serde_json::from_str(&text).ok()?;
    // INVARIANT (fail closed): only a proof for the very same key is taken; a file that does
    // not read is proven afresh.
    if cached.key != key {
        return None;
    }
    if cached.proof.proven {
        return Some(Cached::Proven);
    }
    // A failure is believed only for a while, and never from a time that has not come yet.
    let at = cached.at?;
    if !(at <= now && now - at < FAILED_FOR.as_secs()) {
        return None;
    }
    // Only a failure is read whole: its checks say why.
    let failed: Stored<Proof> = serde_json::from_str(&text).ok()?;
    Some(Cached::Failed(failed.proof))
}

/// A cached proof as read for its key (the environment it holds is skipped, not built).
#[derive(serde::Deserialize)]
struct Stored<P> {
    key: String,
    proof: P,
    at: Option<u64>,
}

/// Whether a cached proof held, its checks skipped: the hook reads a proof before every
/// contained command, and one that held has some eighty checks it does not need.
#[derive(serde::Deserialize)]
struct Verdict {
    proven: bool,
}

/// A cached proof read with the environment it proved (for `--proof`).
#[derive(serde::Deserialize)]
struct WithEnvironment {
    key: String,
    id: String,
    environment: Environment,
    proof: Verdict,
}

/// What a proof was made for: the environment's name and what it confined.
pub(crate) type Made<'e> = (&'e str, &'e Environment);

fn write(dir: &Path, key: &str, (id, environment): Made<'_>, proof: &Proof, now: u64) {
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let file = cache_file(dir, key);
    let text =
        serde_json::json!({"key": key, "id": id, "environment": environment, "proof": proof, "at": now}).to_string();
    let partial = dir.join(format!(".{}.partial", std::process::id()));
    if std::fs::write(&partial, text).is_ok() && std::fs::rename(&partial, &file).is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    evict(dir, MAX_CACHED_PROOFS);
}

/// Keeps the `keep` most recently written proofs in `dir` and removes the rest (with partial
/// files a writer that died left). Only run after a proof is written, which is rare.
fn evict(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut proofs = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(meta) = entry.metadata() else { continue };
        let written = meta.modified().unwrap_or(UNIX_EPOCH);
        if name.ends_with(".partial") {
            let old = written.elapsed().is_ok_and(|age| age > FAILED_FOR);
            if old {
                let _ = std::fs::remove_file(&path);
            }
        } else if name.ends_with(".json") && meta.is_file() {
            proofs.push((written, path));
        }
    }
    if proofs.len() <= keep {
        return;
    }
    proofs.sort_by_key(|p| std::cmp::Reverse(p.0));
    for (_, path) in proofs.into_iter().skip(keep) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sixfold_sandbox::Check;

    fn made() -> Made<'static> {
        static NOTHING: std::sync::OnceLock<Environment> = std::sync::OnceLock::new();
        ("env", NOTHING.get_or_init(Environment::default))
    }

    fn proof(held: bool) -> Proof {
        Proof::from_checks(vec![Check::new("sandbox", held, "observed")])
    }

    #[test]
    fn a_proven_proof_is_kept_and_a_failed_one_only_for_a_while() {
        let t = tempfile::tempdir().unwrap();
        write(t.path(), "k", made(), &proof(true), 1_000);
        assert!(matches!(read(t.path(), "k", 1_000_000), Some(Cached::Proven)));
        assert!(read(t.path(), "other key", 1_000).is_none());
        write(t.path(), "k", made(), &proof(false), 1_000);
        assert!(matches!(read(t.path(), "k", 1_000), Some(Cached::Failed(_))));
        assert!(matches!(read(t.path(), "k", 1_059), Some(Cached::Failed(_))));
        assert!(read(t.path(), "k", 1_060).is_none(), "expired: proven again");
        assert!(
            read(t.path(), "k", 999).is_none(),
            "written in the future: proven again"
        );
        // A failure without its time is not believed.
        let file = cache_file(t.path(), "k");
        std::fs::write(
            &file,
            serde_json::json!({"key": "k", "proof": proof(false)}).to_string(),
        )
        .unwrap();
        assert!(read(t.path(), "k", 1_000).is_none());
        // A proof that says it held is believed only in its own key's file with its own key.
        std::fs::write(&file, serde_json::json!({"key": "j", "proof": proof(true)}).to_string()).unwrap();
        assert!(read(t.path(), "k", 1_000).is_none());
    }

    #[test]
    fn the_cache_keeps_a_bounded_number_of_proofs_the_newest() {
        let t = tempfile::tempdir().unwrap();
        for i in 0..(MAX_CACHED_PROOFS + 20) {
            write(t.path(), &format!("key {i}"), made(), &proof(true), 1_000);
            let file = cache_file(t.path(), &format!("key {i}"));
            let at = UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(&file)
                .unwrap()
                .set_modified(at)
                .unwrap();
        }
        let old_partial = t.path().join(".1.partial");
        std::fs::write(&old_partial, "").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&old_partial)
            .unwrap()
            .set_modified(UNIX_EPOCH)
            .unwrap();
        write(t.path(), "last", made(), &proof(true), 1_000);
        let left = std::fs::read_dir(t.path()).unwrap().count();
        assert_eq!(left, MAX_CACHED_PROOFS);
        assert!(!old_partial.exists());
        assert!(matches!(read(t.path(), "last", 1_000), Some(Cached::Proven)));
        let newest = format!("key {}", MAX_CACHED_PROOFS + 19);
        assert!(matches!(read(t.path(), &newest, 1_000), Some(Cached::Proven)));
        assert!(read(t.path(), "key 0", 1_000).is_none(), "the oldest went");
    }
}
