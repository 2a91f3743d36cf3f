//! `sixfold schema`: the JSON Schema of each bundle file kind.

use crate::output::{errln, outln};
use clap::ValueEnum;
use schemars::schema_for;
use sixfold_core::effects::EffectProfile;
use sixfold_core::format::{ModeFile, PatternFile, PolicyFile, ProviderFile};
use sixfold_core::launch_facts::LaunchFacts;
use std::path::{Path, PathBuf};

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

/// Print the JSON Schema of a bundle file kind (or of the launch facts rows read), so an editor can
/// validate and complete the files. Without KIND, all of them as one object; with --write DIR, a
/// file per kind in DIR.
///
/// `sixfold schema --write .sixfold/schema` puts `mode.json`, `policy.json`, … where a project's
/// files reach them: a mode file in `.sixfold/modes/` starts with `#:schema ../schema/mode.json`,
/// a policy in `.sixfold/policies/` with `#:schema ../schema/policy.json` (TOML editors such as
/// Taplo read the path relative to the file). The shipped files point at copies in
/// `docs/schema/`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Which kind.
    kind: Option<Kind>,
    /// Write `KIND.json` for each kind (or only KIND) into DIR, created if missing.
    #[arg(long, value_name = "DIR")]
    write: Option<PathBuf>,
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

/// The kind's name on the command line, and its file's name without `.json`.
fn name(kind: Kind) -> String {
    kind.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

pub(crate) fn run(args: Args) -> u8 {
    if let Some(dir) = &args.write {
        let kinds: Vec<Kind> = match args.kind {
            Some(kind) => vec![kind],
            None => Kind::value_variants().to_vec(),
        };
        return write(dir, &kinds);
    }
    let value = match args.kind {
        Some(kind) => schema(kind),
        None => serde_json::Value::Object(Kind::value_variants().iter().map(|k| (name(*k), schema(*k))).collect()),
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

/// Writes each kind's schema as `DIR/KIND.json`.
fn write(dir: &Path, kinds: &[Kind]) -> u8 {
    if let Err(e) = std::fs::create_dir_all(dir) {
        errln!("error: cannot create `{}`: {e}", dir.display());
        return 1;
    }
    for kind in kinds {
        let file = dir.join(format!("{}.json", name(*kind)));
        let written = serde_json::to_string_pretty(&schema(*kind))
            .map_err(|e| e.to_string())
            .and_then(|text| std::fs::write(&file, format!("{text}\n")).map_err(|e| e.to_string()));
        match written {
            Ok(()) => outln!("wrote {}", file.display()),
            Err(e) => {
                errln!("error: cannot write `{}`: {e}", file.display());
                return 1;
            }
        }
    }
    0
}
