//! Codex's hooks: the shared judgement path ([`crate::adapter`]) with Codex's provider file.
//!
//! Codex's hook events take Claude Code's shape (`PreToolUse` with `tool_name` and `tool_input`,
//! `PostToolUse`, `Stop` with `last_assistant_message`), and its answers too, but it runs a call
//! answered `ask` without asking anyone; its provider file says so (`[hooks] can_ask = false`),
//! so every ask is answered as a deny that says how a person approves. The Stop hook reads
//! Codex's rollout as the transcript, through the [`Records`] the CLI passes in.

use crate::trust::TrustStore;
use crate::Records;
use sixfold_core::call::Sandboxes;

/// The provider file this adapter maps tools through.
pub const PROVIDER: &str = "codex";

/// Handles one hook event: the text to print on stdout, and notes for stderr. Project bundles
/// are trusted as the user's trust store (`TrustStore::from_env`) says; command steps run
/// inside the active mode's environment where `sandboxes` proves it (`None`: never contained).
pub fn handle(input: &[u8], records: &dyn Records, sandboxes: Option<&dyn Sandboxes>) -> (String, Vec<String>) {
    crate::adapter::handle(PROVIDER, input, records, TrustStore::from_env().as_ref(), sandboxes)
}
