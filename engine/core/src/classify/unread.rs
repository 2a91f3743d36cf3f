//! The shipped command rules, left as text until a command names their program. A hook call
//! names one or two programs, and parsing and compiling the shipped bundle's hundred-odd command
//! rules was the largest part of its load. The build (`build.rs`) cuts `policies/commands.toml`
//! into its rules, each with its id and the programs its prefix starts with; a rule is parsed and
//! compiled the first time its program or its id is looked up, as a whole load compiles it, so
//! every classification is the one the whole table gives.

use crate::command_rule::CommandRule;
use crate::format::CommandRuleFile;
use std::sync::{Arc, OnceLock};

/// One rule of the cut file: its byte range, its id, the programs it is for.
type Block = (usize, usize, &'static str, &'static [&'static str]);

// `TEXT` and `CUT`, made by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/commands_cut.rs"));

/// The shipped `policies/commands.toml`, where its first rule starts, and its rules' byte ranges,
/// ids and programs, when the build could cut it.
pub(crate) fn shipped_cut() -> Option<(&'static str, usize, &'static [Block])> {
    let (first, blocks) = CUT?;
    Some((TEXT, first, blocks))
}

/// The command rules of one policy, kept as text and compiled by need.
#[derive(Debug, Clone)]
pub(crate) struct Unread {
    policy: String,
    text: &'static str,
    blocks: &'static [Block],
    /// Each block's rule once compiled (`None`: it did not compile).
    compiled: Vec<OnceLock<Option<Arc<CommandRule>>>>,
}

/// A rule's text as a document of its own: one `[[commands]]` table.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OneRule {
    commands: Vec<CommandRuleFile>,
}

impl Unread {
    /// The shipped `policies/commands.toml`'s rules (the policy `policy`), when the build cut it.
    pub(crate) fn shipped(policy: &str) -> Option<Unread> {
        let (text, _, blocks) = shipped_cut()?;
        Some(Unread {
            policy: policy.to_string(),
            text,
            blocks,
            compiled: blocks.iter().map(|_| OnceLock::new()).collect(),
        })
    }

    /// The rules for `program`, in file order; `None` when one of them did not compile, so the
    /// program is not understood (INVARIANT (fail closed): a rule that is missing could have been
    /// the stricter, longer one).
    pub(crate) fn rules(&self, program: &str) -> Option<Vec<&Arc<CommandRule>>> {
        // A scan of a few hundred short names: cheaper than building an index in a process that
        // looks up one or two programs.
        self.blocks
            .iter()
            .enumerate()
            .filter(|(_, (_, _, _, programs))| programs.contains(&program))
            .map(|(i, _)| self.rule(i))
            .collect()
    }

    /// The rules whose id (`policy/rule`) is `id`; `None` for one that did not compile.
    pub(crate) fn with_id<'s>(&'s self, id: &'s str) -> impl Iterator<Item = Option<&'s Arc<CommandRule>>> + 's {
        let own = id
            .strip_prefix(self.policy.as_str())
            .and_then(|rest| rest.strip_prefix('/'));
        self.blocks
            .iter()
            .enumerate()
            .filter(move |(_, (_, _, rule, _))| own == Some(*rule))
            .map(|(i, _)| self.rule(i))
    }

    /// Every rule, in file order, compiled now (`None` for one that did not compile).
    pub(crate) fn all(&self) -> impl Iterator<Item = Option<&Arc<CommandRule>>> + '_ {
        (0..self.blocks.len()).map(|i| self.rule(i))
    }

    fn rule(&self, i: usize) -> Option<&Arc<CommandRule>> {
        let (start, end, _, _) = *self.blocks.get(i)?;
        self.compiled
            .get(i)?
            .get_or_init(|| {
                let text = self.text.get(start..end)?;
                // As the build parsed it, else (a build that could not) from its TOML.
                let parsed = crate::built::document::<OneRule>("policies/commands.toml", text);
                let mut parsed = parsed.or_else(|| toml::from_str::<OneRule>(text).ok())?.commands;
                let rule = parsed.pop().filter(|_| parsed.is_empty())?;
                CommandRule::from_file(&self.policy, &rule).ok().map(Arc::new)
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use crate::bundle::{Bundle, Needs};
    use crate::format::PolicyFile;
    use std::path::Path;

    fn shipped_commands() -> &'static str {
        let embedded = crate::shipped::source().files.get("policies/commands.toml").cloned();
        assert_eq!(
            embedded.as_deref(),
            Some(super::TEXT),
            "the shipped bundle holds the cut text"
        );
        super::TEXT
    }

    #[test]
    fn the_build_cut_the_shipped_rules_as_they_parse() {
        let Some((text, first, blocks)) = super::shipped_cut() else {
            panic!("the build did not cut policies/commands.toml: every hook call would parse it whole");
        };
        assert_eq!(text, shipped_commands());
        let whole: PolicyFile = toml::from_str(text).unwrap();
        let head: PolicyFile = toml::from_str(&text[..first]).unwrap();
        assert!(head.commands.is_empty());
        assert_eq!(
            serde_json::to_value((&head.id, &head.description, &head.wrappers, &head.inert_assignments)).unwrap(),
            serde_json::to_value((&whole.id, &whole.description, &whole.wrappers, &whole.inert_assignments)).unwrap()
        );
        // The rules cut one by one are the file's rules, in order, with their ids and programs.
        assert_eq!(blocks.len(), whole.commands.len());
        let mut end = first;
        for ((start, stop, id, programs), rule) in blocks.iter().zip(&whole.commands) {
            assert_eq!(*start, end, "the cuts leave no text out");
            end = *stop;
            let one: super::OneRule = toml::from_str(&text[*start..*stop]).unwrap();
            assert_eq!(one.commands.len(), 1);
            let rule = rule.get_ref();
            assert_eq!(
                serde_json::to_value(&one.commands[0]).unwrap(),
                serde_json::to_value(rule).unwrap()
            );
            assert_eq!(*id, rule.id);
            let first: Vec<&str> = rule.prefix[0].split('|').collect();
            assert_eq!(programs.to_vec(), first, "{id}");
        }
        assert_eq!(end, text.len());
    }

    /// Each rule reads from the build as it parses from its TOML, places and all.
    #[test]
    fn each_rule_reads_from_the_build_as_from_its_toml() {
        let (text, _, blocks) = super::shipped_cut().unwrap();
        let compact = |rules: &Vec<crate::format::CommandRuleFile>| {
            let mut bytes = Vec::new();
            ciborium::into_writer(rules, &mut bytes).unwrap();
            bytes
        };
        for (start, end, id, _) in blocks {
            let one = &text[*start..*end];
            let built = crate::built::document::<super::OneRule>("policies/commands.toml", one)
                .unwrap_or_else(|| panic!("{id} is not built"));
            let parsed: super::OneRule = toml::from_str(one).unwrap();
            assert_eq!(compact(&built.commands), compact(&parsed.commands), "{id}");
            assert_eq!(
                format!("{:?}", built.commands),
                format!("{:?}", parsed.commands),
                "{id}"
            );
            // Another text (here one byte shorter) is parsed.
            assert!(
                crate::built::document::<super::OneRule>("policies/commands.toml", &one[..one.len() - 1]).is_none()
            );
        }
    }

    /// Every command of the adversarial corpus (`tests/corpus/*.toml`).
    fn corpus_commands() -> Vec<String> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut commands = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let table: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for case in table.get("case").and_then(toml::Value::as_array).into_iter().flatten() {
                let input = case.get("input").and_then(toml::Value::as_str).and_then(|i| {
                    serde_json::from_str::<serde_json::Value>(i)
                        .ok()
                        .and_then(|v| v.get("command").and_then(|c| c.as_str()).map(String::from))
                });
                commands.extend(case.get("command").and_then(toml::Value::as_str).map(String::from));
                commands.extend(input);
            }
        }
        assert!(commands.len() > 700, "the corpus was not read: {}", commands.len());
        commands
    }

    #[test]
    fn rules_compiled_by_need_classify_as_the_whole_table() {
        let sources = [crate::shipped::source()];
        let (whole, d) = Bundle::load(&sources);
        assert!(d.is_empty(), "{d:?}");
        let whole = whole.classifier();
        assert!(whole.unread.is_none(), "a whole load compiles every rule");
        let load = || {
            let (lean, d) = Bundle::load_for(&sources, &Needs::mode("workspace-write"));
            assert!(d.is_empty(), "{d:?}");
            assert!(
                lean.classifier().unread.is_some(),
                "one judgement's load leaves the rules unread"
            );
            lean
        };
        let cwd = Path::new("/workspace/project");
        // Each program alone, each in a bundle of its own (nothing compiled before it), then
        // each of its rules' examples; every rule's id reached or not alike.
        let whole_text: PolicyFile = toml::from_str(shipped_commands()).unwrap();
        for rule in &whole_text.commands {
            let rule = rule.get_ref();
            let lean = load();
            let lean = lean.classifier();
            let id = format!("{}/{}", whole_text.id, rule.id);
            assert_eq!(lean.rule_reaches(&id), whole.rule_reaches(&id), "{id}");
            for program in rule.prefix[0].split('|') {
                let words: Vec<String> = rule
                    .prefix
                    .iter()
                    .map(|p| p.split('|').next().unwrap_or("").to_string())
                    .collect();
                assert_eq!(
                    lean.select(program, &words).map(|r| &r.id),
                    whole.select(program, &words).map(|r| &r.id),
                    "{program}"
                );
                for command in [
                    program.to_string(),
                    format!("{program} --help"),
                    format!("sudo {program} x"),
                ] {
                    assert_eq!(lean.classify(&command, cwd), whole.classify(&command, cwd), "{command}");
                }
            }
            for command in rule.matches.iter().chain(&rule.not_match) {
                assert_eq!(lean.classify(command, cwd), whole.classify(command, cwd), "{command}");
            }
        }
        // The corpus's commands, in one bundle that compiles as it goes.
        let lean = load();
        for command in corpus_commands() {
            assert_eq!(lean.classify(&command, cwd), whole.classify(&command, cwd), "{command}");
        }
    }
}
