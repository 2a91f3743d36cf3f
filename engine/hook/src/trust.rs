//! Which project bundles the user trusts on this machine: `sixfold trust` records the content
//! hash of a project's `.sixfold/` (its bundle files and its state) in a store outside every
//! repository, `$XDG_STATE_HOME/sixfold/trust.json` (else `~/.local/state/sixfold/trust.json`).
//! A bundle whose content changed is untrusted again. Until trusted, a project layer only narrows
//! (see `sixfold_core::narrow`).
//!
//! Trust is in content, not in a place: the store keeps the hashes the user trusted (with where
//! each was trusted, for people and for `--revoke`), so a copy of a trusted `.sixfold/` (the
//! hermetic launcher's `--copy`) is trusted too, and any other content is not.
//!
//! The user's own changes keep a trusted bundle trusted: `sixfold mode set`, `pattern set` and
//! `rules add|remove` record the new hash after writing, when the bundle was trusted (or empty)
//! before. Those commands are the user's: run by an agent, every one is a protected write.

use serde::{Deserialize, Serialize};
use sixfold_core::bounded;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

/// A trust store larger than this is refused (it holds one line per trusted project).
const MAX_STORE_BYTES: u64 = 4 * 1024 * 1024;

/// Where trust is kept.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

/// What the store says about a project's `.sixfold/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// It holds no bundle file and no state: there is nothing to trust.
    Empty,
    /// Its content is the content the user trusted.
    Trusted,
    /// It was never trusted, or changed since.
    Untrusted,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    /// `sha256:…` of a trusted content → the `.sixfold/` directories (absolute) it was trusted in.
    #[serde(default)]
    trusted: BTreeMap<String, BTreeSet<String>>,
}

/// The content hash of a project's `.sixfold/`: every bundle file (path and text) and the
/// state; `None` when it holds neither. A file that cannot be read is an error: what cannot be
/// read cannot be trusted.
pub fn content_hash(project: &Path) -> Result<Option<String>, String> {
    content_hash_of(&crate::ProjectLayer::read(project))
}

/// Whether a project's `.sixfold/` (`layer`, already read) is trusted now, as `store` says;
/// without a store only an empty layer stands.
pub fn standing(store: Option<&TrustStore>, layer: &crate::ProjectLayer) -> Standing {
    // INVARIANT (fail closed): a store that cannot be read, or a project layer that cannot be
    // hashed, trusts nothing: the project layer only narrows.
    match store {
        Some(store) => store.standing_of(layer).unwrap_or(Standing::Untrusted),
        None => match content_hash_of(layer) {
            Ok(None) => Standing::Empty,
            _ => Standing::Untrusted,
        },
    }
}

/// [`content_hash`] of a project layer already read.
pub fn content_hash_of(layer: &crate::ProjectLayer) -> Result<Option<String>, String> {
    let Some(source) = &layer.source else {
        return Ok(None);
    };
    if let Some(d) = layer.diagnostics.first() {
        return Err(d.to_string());
    }
    // The state file was read with the layer: one read serves its standing and the mode.
    let state = layer.state.as_ref().map_err(Clone::clone)?;
    if source.files.is_empty() && state.is_none() {
        return Ok(None);
    }
    if let Some(hash) = &layer.known_trust_hash {
        return Ok(Some(hash.clone()));
    }
    // The layer's files, then the state as one more file (the layer's own hash's recipe).
    let then = state.as_deref().map(|text| (STATE_NAME, text));
    Ok(Some(source.content_hashes(then).1))
}

/// The name the state goes into the trust hash under.
pub(crate) const STATE_NAME: &str = "state.toml";

/// Where a project is trusted, as the store names it: its `.sixfold/`, absolute, symlinks resolved.
fn key(project: &Path) -> String {
    let dir = crate::project::dir(project);
    dir.canonicalize().unwrap_or(dir).to_string_lossy().into_owned()
}

/// Removes a place from every trusted content, and the contents trusted nowhere else.
fn forget_place(store: &mut StoreFile, place: &str) {
    for places in store.trusted.values_mut() {
        places.remove(place);
    }
    store.trusted.retain(|_, places| !places.is_empty());
}

impl TrustStore {
    /// The store at a given file.
    pub fn at(path: impl Into<PathBuf>) -> TrustStore {
        TrustStore { path: path.into() }
    }

    /// The user's store: `$XDG_STATE_HOME/sixfold/trust.json`, else
    /// `$HOME/.local/state/sixfold/trust.json`; `None` when neither is set (nothing is trusted).
    pub fn from_env() -> Option<TrustStore> {
        Some(TrustStore::at(sixfold_core::user_dirs::state_dir()?.join("trust.json")))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load(&self) -> Result<StoreFile, String> {
        match bounded::read_text(&self.path, MAX_STORE_BYTES) {
            Ok(text) => {
                serde_json::from_str(&text).map_err(|e| format!("`{}` cannot be read: {e}", self.path.display()))
            }
            Err(bounded::ReadError::Missing) => Ok(StoreFile::default()),
            Err(e) => Err(format!("`{}` cannot be read: {e}", self.path.display())),
        }
    }

    /// Whether a project's `.sixfold/` is trusted now.
    pub fn standing(&self, project: &Path) -> Result<Standing, String> {
        self.standing_of(&crate::ProjectLayer::read(project))
    }

    /// [`TrustStore::standing`] of a project layer already read.
    pub fn standing_of(&self, layer: &crate::ProjectLayer) -> Result<Standing, String> {
        let Some(hash) = content_hash_of(layer)? else {
            return Ok(Standing::Empty);
        };
        // INVARIANT (fail closed): a store that cannot be read trusts nothing.
        let store = self.load()?;
        Ok(if store.trusted.contains_key(&hash) {
            Standing::Trusted
        } else {
            Standing::Untrusted
        })
    }

    /// Trusts the project's `.sixfold/` as it is now; returns the hash recorded (`None`: there
    /// was nothing to trust).
    pub fn record(&self, project: &Path) -> Result<Option<String>, String> {
        let hash = content_hash(project)?;
        let place = key(project);
        self.change(|store| {
            // What was trusted here before is replaced: a changed bundle is trusted as it is now.
            // The same content trusted elsewhere stays trusted there.
            forget_place(store, &place);
            if let Some(h) = &hash {
                store.trusted.entry(h.clone()).or_default().insert(place.clone());
            }
        })?;
        Ok(hash)
    }

    /// Stops trusting the project's `.sixfold/` (what was trusted in it, and its content as it is
    /// now wherever that was trusted); true when something was trusted.
    pub fn revoke(&self, project: &Path) -> Result<bool, String> {
        let place = key(project);
        let now = content_hash(project).ok().flatten();
        let mut was = false;
        self.change(|store| {
            let before: usize = store.trusted.values().map(BTreeSet::len).sum();
            forget_place(store, &place);
            if let Some(now) = &now {
                store.trusted.remove(now);
            }
            was = store.trusted.values().map(BTreeSet::len).sum::<usize>() < before;
        })?;
        Ok(was)
    }

    /// Reads, changes and writes the store under an exclusive lock (on a file beside it), so
    /// concurrent commands lose no entry.
    fn change(&self, edit: impl FnOnce(&mut StoreFile)) -> Result<(), String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        let lock_path = self.path.with_extension("lock");
        let lock = bounded::open_with(OpenOptions::new().create(true).truncate(false).write(true), &lock_path)
            .map_err(|e| format!("cannot open `{}`: {e}", lock_path.display()))?;
        lock.lock()
            .map_err(|e| format!("cannot lock `{}`: {e}", lock_path.display()))?;
        let mut store = self.load()?;
        edit(&mut store);
        let text = serde_json::to_string_pretty(&store).map_err(|e| format!("cannot write the trust store: {e}"))?;
        let tmp = self.path.with_extension(format!("json.{}", std::process::id()));
        std::fs::write(&tmp, text).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
        let renamed =
            std::fs::rename(&tmp, &self.path).map_err(|e| format!("cannot write `{}`: {e}", self.path.display()));
        let _ = lock.unlock();
        renamed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash trust is recorded by keeps its recipe (the files, then the state, each framed
    /// by lengths), so what users trusted stays trusted; made with the layer's own hash when the
    /// layer is read, or alone, it is the same.
    #[test]
    fn the_trust_hash_keeps_its_recipe() {
        use sha2::{Digest, Sha256};
        let t = tempfile::tempdir().unwrap();
        let files = [
            ("modes/mine.toml", "id = \"mine\"\n"),
            ("policies/kept.toml", "id = \"kept\"\n"),
        ];
        for (name, text) in files {
            let path = t.path().join(".sixfold").join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let state = "mode = \"ask\"\n";
        std::fs::write(t.path().join(".sixfold/state.toml"), state).unwrap();
        let mut hasher = Sha256::new();
        for (name, text) in files.into_iter().chain([("state.toml", state)]) {
            for bytes in [name.as_bytes(), text.as_bytes()] {
                hasher.update((bytes.len() as u64).to_le_bytes());
                hasher.update(bytes);
            }
        }
        let expected: String = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let mut layer = crate::ProjectLayer::read(t.path());
        assert_eq!(content_hash_of(&layer).unwrap(), Some(format!("sha256:{expected}")));
        layer.known_trust_hash = None;
        assert_eq!(content_hash_of(&layer).unwrap(), Some(format!("sha256:{expected}")));
        // Without a state, it is the layer's own hash.
        std::fs::remove_file(t.path().join(".sixfold/state.toml")).unwrap();
        let layer = crate::ProjectLayer::read(t.path());
        let own = layer.source.as_ref().unwrap().content_hash();
        assert_eq!(content_hash_of(&layer).unwrap(), Some(own));
    }

    #[test]
    fn trust_is_for_the_exact_content() {
        let t = tempfile::tempdir().unwrap();
        let project = t.path().join("repo");
        let store = TrustStore::at(t.path().join("state/sixfold/trust.json"));
        std::fs::create_dir_all(project.join(".sixfold/runs")).unwrap();
        assert_eq!(
            store.standing(&project).unwrap(),
            Standing::Empty,
            "a log alone is nothing to trust"
        );
        std::fs::write(project.join(".sixfold/state.toml"), "mode = \"full\"\n").unwrap();
        assert_eq!(store.standing(&project).unwrap(), Standing::Untrusted);
        assert!(store.record(&project).unwrap().is_some());
        assert_eq!(store.standing(&project).unwrap(), Standing::Trusted);
        // The session log is not content: appending to it keeps the trust.
        std::fs::write(project.join(".sixfold/runs/s.jsonl"), "{}\n").unwrap();
        assert_eq!(store.standing(&project).unwrap(), Standing::Trusted);
        // Any bundle file changed, added or removed: untrusted again.
        std::fs::create_dir_all(project.join(".sixfold/policies")).unwrap();
        std::fs::write(project.join(".sixfold/policies/kept.toml"), "id = \"kept\"\n").unwrap();
        assert_eq!(store.standing(&project).unwrap(), Standing::Untrusted);
        store.record(&project).unwrap();
        std::fs::write(project.join(".sixfold/state.toml"), "mode = \"ask\"\n").unwrap();
        assert_eq!(store.standing(&project).unwrap(), Standing::Untrusted);
        store.record(&project).unwrap();
        // A copy of the same content is trusted; the copy changed is not.
        let copy = t.path().join("copy");
        std::fs::create_dir_all(copy.join(".sixfold/policies")).unwrap();
        for file in ["state.toml", "policies/kept.toml"] {
            std::fs::copy(project.join(".sixfold").join(file), copy.join(".sixfold").join(file)).unwrap();
        }
        assert_eq!(store.standing(&copy).unwrap(), Standing::Trusted);
        std::fs::write(copy.join(".sixfold/state.toml"), "mode = \"full\"\n").unwrap();
        assert_eq!(store.standing(&copy).unwrap(), Standing::Untrusted);
        assert!(store.revoke(&project).unwrap());
        assert_eq!(store.standing(&project).unwrap(), Standing::Untrusted);
        // A store that cannot be read trusts nothing.
        store.record(&project).unwrap();
        std::fs::write(store.path(), "{ not json").unwrap();
        assert!(store.standing(&project).is_err());
    }
}
