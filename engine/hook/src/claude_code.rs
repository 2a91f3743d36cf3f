//! Claude Code's hooks: the shared judgement path ([`crate::adapter`]) with Claude Code's
//! provider file, which can ask a person, so an ask is answered `ask`.

use crate::trust::TrustStore;
use crate::Records;
use sixfold_core::call::Sandboxes;

/// The provider file this adapter maps tools through.
pub const PROVIDER: &str = "claude-code";

/// Handles one hook event: the text to print on stdout, and notes for stderr. Project bundles
/// are trusted as the user's trust store (`TrustStore::from_env`) says; command steps run
/// inside the active mode's environment where `sandboxes` proves it (`None`: never contained).
pub fn handle(input: &[u8], records: &dyn Records, sandboxes: Option<&dyn Sandboxes>) -> (String, Vec<String>) {
    crate::adapter::handle(PROVIDER, input, records, TrustStore::from_env().as_ref(), sandboxes)
}
