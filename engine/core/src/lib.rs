//! The pure core of sixfold.
//!
//! It owns effect profiles and scopes, bundles (modes, policies, patterns, providers) with their
//! file formats and validation, environments (what a sandbox must confine), the hardened Rhai host, judgement and verdicts. It knows nothing of
//! any agent vendor, transport or operating-system mechanism: the layers around it gather facts
//! and apply its outputs.
//!
//! What the layers use is re-exported here; the modules say where each thing lives.

pub mod bounded;
mod built;
pub mod bundle;
pub mod call;
mod classify;
mod command_rule;
pub mod containment;
pub mod decision;
pub mod diag;
pub mod effect_space;
pub mod effects;
pub mod environment;
pub mod format;
mod glob_place;
pub mod hook_opencode;
pub mod hook_settings;
pub mod hook_toml;
pub mod judge;
pub mod launch_facts;
pub mod lease;
mod line_state;
pub mod lines;
pub mod names;
pub mod narrow;
pub mod project;
mod provider;
pub mod scope;
pub mod script;
pub mod sha256;
pub mod shell;
pub mod shipped;
pub mod trace;
pub mod uri;
pub mod user_dirs;
pub mod verdict;

pub use bundle::{ActView, Bundle, BundleSource, Mode, Needs, Origin, Pattern, Policy, Row};
pub use classify::{Classified, Classifier, Part};
pub use decision::{DecidedBy, Decision, Judgement};
pub use diag::Diagnostic;
pub use effects::{EffectFields, EffectProfile, Effects};
pub use judge::Context;
pub use provider::{Act, Provider, ToolEffects};
pub use scope::Workspace;
pub use verdict::{RowResult, Severity, Strictness, Verdict};
