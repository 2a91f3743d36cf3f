//! The example runs of `examples/runs/`, embedded in the binary so an installed `sixfold`
//! replays them from any directory: `sixfold examples` lists them, `sixfold replay --example
//! NAME` replays one as `sixfold replay examples/runs/NAME.jsonl` does in a clone.

use crate::output::outln;
use sixfold_core::names::{Kind, Unknown};
use sixfold_core::trace::Trace;
use sixfold_replay::{Format, ReadContext};
use std::path::PathBuf;

/// One embedded run: its name (the file's, without `.jsonl`) and its text, byte for byte.
#[derive(Debug)]
pub(crate) struct Example {
    pub(crate) name: &'static str,
    text: &'static str,
}

/// Embeds `examples/runs/NAME.jsonl`.
macro_rules! example {
    ($name:literal) => {
        Example {
            name: $name,
            text: include_str!(concat!("../../../examples/runs/", $name, ".jsonl")),
        }
    };
}

/// Every run of `examples/runs/` (a test checks that none is missing), in path order.
pub(crate) static EXAMPLES: &[Example] = &[
    example!("claude-assertion-removed"),
    example!("claude-claim-without-suite"),
    example!("claude-fix-then-suite-pass"),
    example!("codex-exec-masked-status"),
    example!("codex-rollout-suite-failed-then-claim"),
];

/// `examples/runs/README.md`: its table says what the agent did in each run.
const README: &str = include_str!("../../../examples/runs/README.md");

/// The word that stands for every example run.
const ALL: &str = "all";

impl Example {
    /// Where the run lies in a clone: what the replay shows as its file.
    pub(crate) fn path(&self) -> String {
        format!("examples/runs/{}.jsonl", self.name)
    }

    /// What the agent did, from the README's table (its Markdown `\|` read as `|`).
    fn about(&self) -> String {
        let cell = format!("| `{}.jsonl` |", self.name);
        README
            .lines()
            .find_map(|line| line.strip_prefix(cell.as_str()))
            .and_then(|rest| rest.split(" | ").next())
            .map(|about| about.trim().replace("\\|", "|"))
            .unwrap_or_default()
    }

    /// The run read as `sixfold replay` reads a file.
    fn read(&self, format: Option<Format>, cx: &ReadContext<'_>) -> std::io::Result<Trace> {
        let mut input = std::io::Cursor::new(self.text.as_bytes());
        let format = match format {
            Some(f) => f,
            None => sixfold_replay::detect(&mut input)?.ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, "the format could not be recognised")
            })?,
        };
        Ok(sixfold_replay::read(input, format, cx))
    }
}

/// The examples named (`all` for every one), in the order named; an unknown name is reported
/// (exit 2) with the close one.
pub(crate) fn chosen(names: &[String]) -> Result<Vec<&'static Example>, u8> {
    let mut chosen = Vec::new();
    for name in names {
        if name == ALL {
            chosen.extend(EXAMPLES.iter());
            continue;
        }
        match EXAMPLES.iter().find(|e| e.name == name.as_str()) {
            Some(e) => chosen.push(e),
            None => {
                let known = EXAMPLES.iter().map(|e| e.name).chain([ALL]);
                return Err(crate::names::report(&Unknown::new(Kind::Example, name, known)));
            }
        }
    }
    Ok(chosen)
}

/// What `sixfold replay` reads: a file, or an example run embedded in the binary.
#[derive(Debug)]
pub(crate) enum Recording {
    /// A file on disk.
    File(PathBuf),
    /// An embedded example run.
    Example(&'static Example),
}

impl Recording {
    /// The name the output gives it.
    pub(crate) fn shown(&self) -> String {
        match self {
            Recording::File(path) => path.display().to_string(),
            Recording::Example(e) => e.path(),
        }
    }

    /// The file, for a recording on disk.
    pub(crate) fn path(&self) -> Option<&std::path::Path> {
        match self {
            Recording::File(path) => Some(path),
            Recording::Example(_) => None,
        }
    }

    /// The recording read, its format detected unless `format` says; `on_read` is told the bytes
    /// read of a file (for progress).
    pub(crate) fn read(
        &self,
        format: Option<Format>,
        cx: &ReadContext<'_>,
        on_read: &dyn Fn(u64),
    ) -> std::io::Result<Trace> {
        match self {
            Recording::File(path) => sixfold_replay::read_file_counted(path, format, cx, on_read),
            Recording::Example(e) => e.read(format, cx),
        }
    }
}

/// List the example runs embedded in this binary: real recorded runs of Claude Code and Codex,
/// replayed from any directory with `sixfold replay --example NAME` (`--example all` for every
/// one). Exit 0.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON object: `{"examples": [{"name", "file", "about"}]}`.
    #[arg(long)]
    json: bool,
}

/// `sixfold examples`.
pub(crate) fn run(args: Args) -> u8 {
    if args.json {
        let listed: Vec<serde_json::Value> = EXAMPLES
            .iter()
            .map(|e| serde_json::json!({ "name": e.name, "file": e.path(), "about": e.about() }))
            .collect();
        crate::output::json(&serde_json::json!({ "examples": listed }));
        return 0;
    }
    let width = EXAMPLES.iter().map(|e| e.name.len()).max().unwrap_or(0);
    for e in EXAMPLES {
        outln!("{:<width$}  {}", e.name, e.about());
    }
    outln!();
    outln!("Replay one with `sixfold replay --example NAME --mode workspace-write`, or all of them");
    outln!("with `sixfold replay --example all --mode workspace-write`.");
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_of_examples_runs_is_embedded_with_what_the_agent_did() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/runs");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .filter_map(|e| {
                        e.file_name()
                            .to_str()
                            .and_then(|n| n.strip_suffix(".jsonl"))
                            .map(String::from)
                    })
                    .collect()
            })
            .unwrap_or_default();
        on_disk.sort();
        let embedded: Vec<String> = EXAMPLES.iter().map(|e| e.name.to_string()).collect();
        assert_eq!(embedded, on_disk);
        for e in EXAMPLES {
            assert!(!e.about().is_empty(), "the README's table has no row for {}", e.name);
        }
    }
}
