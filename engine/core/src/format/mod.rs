//! The bundle's file formats, as written: one file per kind. Every table refuses unknown keys.
//!
//! `sixfold schema KIND` prints the JSON Schema of each kind, so an editor can validate and
//! complete the files. The six effect fields are written as [`crate::effects::EffectFields`]
//! wherever a file names effects (a ceiling, a rule's conditions, a tool, a command rule).

mod closed;
mod environment;
mod governed;
mod mode;
mod pattern;
mod policy;
mod provider;
mod rule;
mod spanned;

pub use closed::NoOtherKeys;
pub use environment::{Access, EnvironmentFile, NetworkAccess, VariablesFile};
pub use governed::GovernedFile;
pub use mode::{BehaviourFile, ModeFile};
pub use pattern::{MetaTool, PatternFile, PatternLimits, SpawnExample};
pub use policy::{
    ActRuleFile, CommandRuleFile, FactCheckFile, FactsKind, OptionsFile, PathSetFile, PolicyFile, RowFile,
    ScriptReader, VerdictExample, WrapperFile,
};
pub use provider::{
    AmbientFile, BinaryFile, BuiltinPlugins, HermeticFile, HooksFile, LaunchFile, ProviderFile, ReadinessFile,
    RecordFieldFile, RecordFile, RecordSource, ToolFile,
};
pub use provider::{RecordCaseFile, ReportFile};
pub use rule::{JudgementExample, RuleFile};
pub use spanned::Spanned;
