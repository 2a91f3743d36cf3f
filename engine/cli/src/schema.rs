//! `sixfold schema`: the JSON Schema of each bundle file kind.

use crate::output::{errln, outln};
use schemars::schema_for;
use sixfold_core::effects::EffectProfile;
use sixfold_core::format::{ModeFile, PatternFile, PolicyFile, ProviderFile};
use sixfold_core::launch_facts::LaunchFacts;

/// The file kinds there is a schema for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Kind {
    /// `modes/*.toml` (and the front matter of `modes/*.md`).
    Mode,
    /// `policies/**/*.toml`.
    Policy,
    /// `patterns/*.toml`.
    Pattern,
    /// `providers/*.toml`.
    Provider,
    /// The effects JSON `sixfold judge` reads.
    Effects,
    /// The launch facts a hermetic run's rows read under `facts.launch`.
    LaunchFacts,
}

/// Print the JSON Schema of a bundle file kind (or of the launch facts rows read), so an editor can validate and complete the files
/// (the shipped files point at copies in `docs/schema/`). Without KIND, all of them as one object.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Which kind.
    kind: Option<Kind>,
}

pub(crate) fn schema(kind: Kind) -> serde_json::Value {
    let schema = match kind {
        Kind::Mode => schema_for!(ModeFile),
        Kind::Policy => schema_for!(PolicyFile),
        Kind::Pattern => schema_for!(PatternFile),
        Kind::Provider => schema_for!(ProviderFile),
        Kind::Effects => schema_for!(EffectProfile),
        Kind::LaunchFacts => schema_for!(LaunchFacts),
    };
    serde_json::to_value(schema).unwrap_or_default()
}

pub(crate) fn run(args: Args) -> u8 {
    let value = match args.kind {
        Some(kind) => schema(kind),
        None => serde_json::json!({
            "mode": schema(Kind::Mode),
            "policy": schema(Kind::Policy),
            "pattern": schema(Kind::Pattern),
            "provider": schema(Kind::Provider),
            "effects": schema(Kind::Effects),
            "launch-facts": schema(Kind::LaunchFacts),
        }),
    };
    match serde_json::to_string_pretty(&value) {
        Ok(text) => {
            outln!("{text}");
            0
        }
        Err(e) => {
            errln!("error: cannot print the schema: {e}");
            2
        }
    }
}
