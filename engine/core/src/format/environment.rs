//! An environment, as written: `[environments.NAME]` in a policy file. What a sandbox must
//! enforce around a command run under a mode that names it.

use super::Spanned;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What an environment confines: which roots and whether the temp dir are writable, which path
/// sets stay read-only inside them and which are hidden, and whether the network is cut.
/// A mode names it in `environment`; a sandbox enforces it and proves it before use.
///
/// Left out, a field confines: roots and temp dir read-only, nothing extra read-only or hidden,
/// the network cut. `confined = false` (the shipped `full`) confines nothing and takes no other
/// field.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentFile {
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
    /// `false`: nothing is confined and a command runs as it is (no sandbox, no proof).
    #[serde(default = "yes")]
    pub confined: bool,
    /// Whether the workspace roots are `writable` or `read-only`.
    #[serde(default)]
    pub roots: Access,
    /// Whether the system temp dir (`$TMPDIR`, else `/tmp`) is `writable` or `read-only`.
    #[serde(default)]
    pub tmp: Access,
    /// Path sets (`@NAME`, from a policy's `[paths]`) that stay read-only inside writable roots,
    /// existing or not: they can be neither changed nor created.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub read_only: Vec<Spanned<String>>,
    /// Path sets (`@NAME`) that cannot be read at all.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub hidden: Vec<Spanned<String>>,
    /// Whether the network is `cut` or `open`.
    #[serde(default)]
    pub network: NetworkAccess,
    /// Tool caches outside the roots (`~/.npm`, `~/.cache/pip`) the command reads as they are
    /// and writes to a per-project layer over them: the host's cache is never changed.
    #[serde(default)]
    pub caches: Vec<String>,
    /// Which of the caller's environment variables the command gets. Left out, none.
    #[serde(default)]
    pub variables: VariablesFile,
    /// What a protected file that does not exist yet holds while it stands in its place (by
    /// default it is empty): `{ ".git/commondir" = ".\n" }` for a file git reads when it exists.
    #[serde(default)]
    pub placeholders: std::collections::BTreeMap<String, String>,
}

/// The environment variables a confined command gets: an allow-list.
///
/// A variable passes when `pass` names it exactly, or when it matches a pattern of `pass` (a
/// name with `*`) and no pattern of `never` (matched ignoring case). Everything else is
/// withheld: a credential reaches the command only when an environment names it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariablesFile {
    /// Names (`PATH`) and patterns (`LC_*`) of the variables that pass.
    #[serde(default)]
    pub pass: Vec<String>,
    /// Patterns of names that never pass through a pattern of `pass` (`*TOKEN*`, `*_KEY`).
    #[serde(default)]
    pub never: Vec<String>,
}

fn yes() -> bool {
    true
}

/// Whether a place may be written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// Nothing there may be changed.
    #[default]
    ReadOnly,
    /// It may be changed (what stays read-only inside it aside).
    Writable,
}

/// Whether a command may reach the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkAccess {
    /// No network at all, not even the host's loopback.
    #[default]
    Cut,
    /// The host's network, as it is.
    Open,
}
