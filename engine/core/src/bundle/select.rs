//! Which documents one judgement needs, told apart before they are parsed.
//!
//! A hook judges one step: it needs the active mode, the modes it extends and the policies they
//! include, the provider's tool map, the active pattern, and whatever adds to the whole bundle's
//! command classifier, act rules, MCP maps and path sets. Parsing is most of the cost of a load,
//! so the rest is left unparsed. Telling a file apart reads its text line by line, and whenever
//! that reading is unsure the file is parsed: a file is skipped only when it is certainly not
//! needed.

use super::written::{adds_to_the_whole_bundle, written_id};
use crate::built::Facts;
use crate::format::ModeFile;
use std::collections::{BTreeSet, HashSet};

/// What one judgement needs from a bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    /// The mode the step is judged under (with the modes it extends and the policies they include).
    pub mode: String,
    /// The provider whose tool map applies, if any.
    pub provider: Option<String>,
    /// The pattern that judges sub-agents, if any.
    pub pattern: Option<String>,
    /// Whether the price table (`policies/prices.toml`) is left unread: only a lease with `cents`
    /// needs it, so a caller that knows none applies leaves it out. Read by default.
    pub skip_prices: bool,
    /// The provider tool called, when only that call is judged: of the provider's tool map only
    /// its entry is read, and the `[mcp]` maps only when it is an MCP server's tool.
    pub tool: Option<String>,
    /// Another judgement the same load serves, by its mode and pattern: an untrusted project's
    /// judgement without its layer, when the layer leaves the shipped modes alone
    /// ([`leaves_shipped_alone`]).
    pub also: Option<(String, String)>,
}

impl Needs {
    /// What judging a step under `mode` needs: that mode and what it builds on.
    pub fn mode(mode: &str) -> Needs {
        Needs {
            mode: mode.to_string(),
            provider: None,
            pattern: None,
            skip_prices: false,
            tool: None,
            also: None,
        }
    }

    /// The same, also with a provider's tool map.
    pub fn with_provider(mut self, provider: &str) -> Needs {
        self.provider = Some(provider.to_string());
        self
    }

    /// The same, also with a pattern.
    pub fn with_pattern(mut self, pattern: &str) -> Needs {
        self.pattern = Some(pattern.to_string());
        self
    }

    /// The same, for a call of the provider's tool `name` alone (see [`Needs::tool`]).
    pub fn with_tool(mut self, name: &str) -> Needs {
        self.tool = Some(name.to_string());
        self
    }

    /// The same, also with what judging a step under `mode` and `pattern` needs (see
    /// [`Needs::also`]).
    pub fn also(mut self, mode: &str, pattern: &str) -> Needs {
        self.also = Some((mode.to_string(), pattern.to_string()));
        self
    }

    /// The modes judged under: the step's, and the other judgement's.
    fn modes(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.mode.as_str()).chain(self.also.as_ref().map(|(m, _)| m.as_str()))
    }

    /// The same, with the price table read or not (by default it is).
    pub fn with_prices(mut self, prices: bool) -> Needs {
        self.skip_prices = !prices;
        self
    }
}

/// Reading proceeds in two phases: modes (again for each mode an `extends` names), then the rest
/// (only then is it known which policies the modes include).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Modes,
    Rest,
}

/// The state of a selective read: what is wanted so far, and which files were taken.
#[derive(Debug)]
pub(crate) struct Selection<'a> {
    needs: &'a Needs,
    phase: Phase,
    modes: BTreeSet<String>,
    policies: BTreeSet<String>,
    /// By source index and the file's place in its source (the same in every pass).
    taken: HashSet<(usize, usize)>,
}

impl<'a> Selection<'a> {
    pub(crate) fn new(needs: &'a Needs) -> Selection<'a> {
        Selection {
            needs,
            phase: Phase::Modes,
            modes: needs.modes().map(str::to_string).collect(),
            policies: BTreeSet::new(),
            taken: HashSet::new(),
        }
    }

    /// True when the file is to be read now (and marks it read): the file at place `file` of the
    /// source `source`, the same file in every pass. `built` is what the build read of the same
    /// text (a shipped file's [`Facts`]), so it is not read again.
    pub(crate) fn take(
        &mut self,
        (source, file): (usize, usize),
        relative: &str,
        text: &str,
        built: Option<Facts>,
    ) -> bool {
        let folder = relative.split('/').next().unwrap_or("");
        let script = relative.ends_with(".rhai");
        let id = || built.map_or_else(|| written_id(text), |(id, _)| id);
        let now = match (self.phase, folder) {
            (Phase::Modes, _) if script => false,
            (Phase::Rest, _) if script => true,
            (Phase::Modes, "modes") => id().is_none_or(|id| self.modes.contains(id)),
            (Phase::Modes, _) => false,
            (Phase::Rest, "modes") => false,
            (Phase::Rest, "policies") => {
                built.map_or_else(|| adds_to_the_whole_bundle(text), |(_, whole)| whole)
                    || id().is_none_or(|id| {
                        self.policies.contains(id) || (!self.needs.skip_prices && id == crate::lease::prices::POLICY)
                    })
            }
            (Phase::Rest, "patterns") => {
                let id = id();
                wanted(id, self.needs.pattern.as_deref())
                    || self.needs.also.as_ref().is_some_and(|(_, p)| wanted(id, Some(p)))
            }
            (Phase::Rest, "providers") => wanted(id(), self.needs.provider.as_deref()),
            (Phase::Rest, _) => false,
        };
        now && self.taken.insert((source, file))
    }

    /// After a pass (`mode` finds a mode read so far): true when another pass is needed (a mode
    /// extends one not read yet, or the modes are done and the rest is to be read).
    pub(crate) fn next_round<'m>(&mut self, mode: impl Fn(&str) -> Option<&'m ModeFile>) -> bool {
        if self.phase == Phase::Rest {
            return false;
        }
        let mut chain = BTreeSet::new();
        for root in self.needs.modes() {
            let mut next = Some(root.to_string());
            while let Some(id) = next.take() {
                if !chain.insert(id.clone()) {
                    break;
                }
                if let Some(mode) = mode(&id) {
                    self.policies.extend(mode.include.iter().map(|i| i.get_ref().clone()));
                    next = mode.extends.as_ref().map(|e| e.get_ref().clone());
                }
            }
        }
        let before = self.modes.len();
        self.modes.extend(chain);
        if self.modes.len() == before {
            self.phase = Phase::Rest;
        }
        true
    }
}

/// Whether no judgement under a shipped mode and a shipped pattern reads anything of `layer`: it
/// holds modes and patterns alone, each of an id written for certain that no shipped mode or
/// pattern has. Its modes then only build on the shipped ones, so one load serves an untrusted
/// project's judgement and the judgement without its layer ([`Needs::also`]), each judged under
/// its own mode. Anything else may reach a shipped mode's judgement: a policy may add to the
/// whole bundle, or hold settings every judgement reads (`trust_annotations`, prices) whichever
/// mode includes it; a script, a provider or a shipped id may stand in for the shipped one.
///
/// ```
/// use sixfold_core::bundle::{leaves_shipped_alone, BundleSource, Origin};
/// let layer = |files: &[(&str, &str)]| {
///     let files = files.iter().map(|(p, t)| (p.to_string(), t.to_string()));
///     BundleSource::new(Origin::Directory("/p/.sixfold".into()), files)
/// };
/// assert!(leaves_shipped_alone(&layer(&[("modes/mine.toml", "id = \"mine\"\nextends = \"workspace-write\"\n")])));
/// // A shipped mode's id stands in for the shipped mode; a policy may reach every judgement.
/// assert!(!leaves_shipped_alone(&layer(&[("modes/ask.toml", "id = \"ask\"\n")])));
/// assert!(!leaves_shipped_alone(&layer(&[("policies/p.toml", "id = \"p\"\n")])));
/// ```
// INVARIANT (fail closed): false whenever unsure, so the judgement without the layer is loaded
// on its own.
pub fn leaves_shipped_alone(layer: &super::source::BundleSource) -> bool {
    layer.files.iter().all(|(relative, text)| {
        let folder = relative.split('/').next().unwrap_or("");
        let document = relative.ends_with(".toml") || (folder == "modes" && relative.ends_with(".md"));
        matches!(folder, "modes" | "patterns")
            && document
            && written_id(text).is_some_and(|id| !crate::built::shipped_id(folder, id))
    })
}

fn wanted(id: Option<&str>, want: Option<&str>) -> bool {
    match (id, want) {
        (None, _) => true,
        (Some(id), Some(want)) => id == want,
        (Some(_), None) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::written::starts_with_a_key;
    use super::*;

    fn layer(files: &[(&str, &str)]) -> crate::bundle::BundleSource {
        crate::bundle::BundleSource::from_files("p", files.iter().copied())
    }

    /// Anything that may reach a shipped mode's judgement keeps the judgement without the layer
    /// in a load of its own.
    #[test]
    fn a_layer_leaves_the_shipped_modes_alone_only_when_certain() {
        let mode = ("modes/mine.toml", "id = \"mine\"\n");
        let pattern = ("patterns/free.toml", "id = \"free\"\n");
        assert!(leaves_shipped_alone(&layer(&[])));
        assert!(leaves_shipped_alone(&layer(&[mode, pattern])));
        assert!(leaves_shipped_alone(&layer(&[(
            "modes/mine.md",
            "+++\nid = \"mine\"\n+++\nrole\n"
        )])));
        for other in [
            // Settings every judgement reads, whichever mode includes the policy.
            (
                "policies/p.toml",
                "id = \"p\"\n[settings]\ntrust_annotations = [\"s\"]\n",
            ),
            ("policies/kept.toml", "id = \"kept\"\n[[acts]]\nid = \"a\"\n"),
            ("policies/p.rhai", "fn f(e, c) { true }"),
            ("providers/agent.toml", "id = \"agent\"\n"),
            ("providers/mine.toml", "id = \"mine\"\n"),
            // Shipped ids stand in for the shipped documents.
            ("modes/ask.toml", "id = \"ask\"\n"),
            ("modes/workspace-write.md", "+++\nid = \"workspace-write\"\n+++\n"),
            ("patterns/single.toml", "id = \"single\"\n"),
            // Ids not read for certain.
            ("modes/x.toml", "\"id\" = \"ask\"\n"),
            ("modes/y.toml", "id = \"\\u0061sk\"\n"),
            ("modes/z.toml", "description = \"no id\"\n"),
            ("patterns/w.toml", "id = \"a\"\nid = \"b\"\n"),
        ] {
            assert!(!leaves_shipped_alone(&layer(&[mode, other])), "{other:?}");
        }
    }

    #[test]
    fn the_id_is_read_only_when_certain() {
        assert_eq!(
            written_id("# c\nid = \"secrets\"\n[paths.x]\nid = \"no\""),
            Some("secrets")
        );
        assert_eq!(written_id("+++\nid = 'read-only'\n+++\nbody"), Some("read-only"));
        assert_eq!(written_id("identity = 1\nid=\"a\" # note"), Some("a"));
        assert_eq!(written_id("id = \"a\"\nid = \"b\""), None);
        assert_eq!(written_id("\"id\" = \"a\""), None);
        assert_eq!(written_id("id = \"a\\u0062\""), None);
        assert_eq!(written_id("d = \"\"\"\nid = \"a\"\n\"\"\"\nid = \"b\""), None);
        assert_eq!(written_id("id.x = \"a\""), None);
        assert_eq!(written_id("name = \"x\""), None);
        assert_eq!(written_id("include = [\n  \"secrets\",\n]\nid = \"m\""), Some("m"));
    }

    /// The line-by-line reading the key search stands for.
    fn by_every_line(text: &str) -> bool {
        text.contains("\\u") || text.contains("\\U") || text.lines().any(starts_with_a_key)
    }

    #[test]
    fn finding_the_keys_reads_as_every_line_does() {
        let mut texts: Vec<String> = crate::shipped::source()
            .files
            .into_values()
            .map(|t| t.to_string())
            .collect();
        texts.extend(
            [
                "paths\r\nid = \"x\"",
                "x = 1\n  'mcp' = {}",
                "id = \"p\"\n# paths are commands\ndescription = \"acts on mcp\"",
                "[rules.paths]\nx = 1",
                "\u{feff}environments.x = {}",
                "wrappers",
                "[[ acts ]]",
                "acts_x = 1",
                "",
            ]
            .map(String::from),
        );
        for text in &texts {
            assert_eq!(adds_to_the_whole_bundle(text), by_every_line(text), "{text}");
        }
    }

    #[test]
    fn whatever_may_add_to_the_whole_bundle_is_read() {
        for text in [
            "[[commands]]\nid = \"x\"",
            "[ \"acts\" ]",
            "paths.secrets.globs = []",
            "mcp = {}",
            "  [[wrappers]]",
            "[paths]",
            "\"\\u0061cts\" = []",
        ] {
            assert!(adds_to_the_whole_bundle(text), "{text}");
        }
        for text in [
            "id = \"x\"\n[[rules]]\nid = \"commands\"",
            "[[rows]]\ntitle = \"mcp servers\"",
            "pathsets = 1",
        ] {
            assert!(!adds_to_the_whole_bundle(text), "{text}");
        }
    }
}
