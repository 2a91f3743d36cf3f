//! The pure core of sixfold.
//!
//! It owns effect profiles and scopes, bundles (modes, policies, patterns, providers) with their
//! validation, the hardened Rhai host, judgement and verdicts. It knows nothing of any agent
//! vendor, transport or operating-system mechanism: the layers around it gather facts and apply
//! its outputs.

pub mod bundle;
pub mod classify;
pub mod decision;
pub mod diag;
pub mod effects;
pub mod hook_settings;
pub mod judge;
pub mod launch_facts;
pub mod provider;
pub mod scope;
pub mod script;
pub mod shell;
pub mod shipped;
pub mod trace;
pub mod verdict;
