//! A mode's rules of place globs alone, left in a stored layer's entry when one judgement's load
//! read the mode it judges under: the judgement reads and compiles only those a step's places may
//! reach, so a project mode of a thousand path rules costs the index stored beside its tree, and
//! a test of each glob's literal start, until a step comes near one.

use super::compile::{place_entry, rules_read_later, PlaceEntry};
use super::index_words;
use super::parsed::Whole;
use super::read::Doc;
use crate::built::Tree;
use crate::decision::Decision;
use crate::effects::Effects;
use crate::format::{ModeFile, RuleFile, Spanned};
use crate::judge::{Judge, PathSet, Places, Rule};
use crate::scope::Workspace;
use crate::script::ScriptHost;
use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

/// Decisions as an index writes them.
const DECISIONS: [Decision; 3] = [Decision::Allow, Decision::Ask, Decision::Refuse];

/// The rules a load left unread of one mode's document.
pub(crate) struct UnreadRules {
    /// The mode's tree whole in the layer's entry, read when a step's place reaches one of them.
    whole: Whole,
    index: Index,
}

/// Which of a mode's rules are of place globs alone: found in its tree when the tree is stored
/// ([`Index::scan`]), and kept beside it ([`UnreadRules::index`]).
#[derive(Debug, Clone, PartialEq)]
struct Index {
    /// The nodes of the rules left unread, in order (what the load leaves out).
    nodes: Vec<u32>,
    /// Of each of those: its place among the mode's own rules, its decision, and its globs.
    left: Vec<Left>,
    /// Where each glob of those rules ends in `starts`.
    globs: Vec<u32>,
    /// Each glob's literal start (what a step's place must reach for the glob to match it),
    /// one after the other: tested without reading the mode's tree.
    starts: String,
    /// The places among the mode's own rules of those read with it, in order.
    read: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq)]
struct Left {
    place: u32,
    decision: Decision,
    globs: Range<usize>,
}

impl std::fmt::Debug for UnreadRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UnreadRules({} rules)", self.index.left.len())
    }
}

impl Index {
    /// The rules of place globs alone of the mode whose stored tree is `tree`; `None` when it
    /// has none, or when two of its rules share an id (compiling it whole reports that).
    ///
    /// A rule is left unread when it holds exactly `id`, `decision`, `reason` and a `when` of
    /// `reads` and `writes` lists of path globs that compile (at least one glob): no flag, no
    /// script, no path set, no `ceiling`. Such a rule holds only where a step's place is matched
    /// by one of its globs, and that needs the place to reach the glob's literal start.
    fn scan(tree: &[u8]) -> Option<Index> {
        let (tree, root) = Tree::stored_again(tree)?;
        let items = tree.top_array(root, "rules")?;
        let mut ids = HashSet::with_capacity_and_hasher(items.len(), foldhash::fast::RandomState::default());
        let (mut nodes, mut left, mut globs, mut read) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut starts = String::new();
        for (place, at) in (0u32..).zip(items) {
            let (from, written) = (globs.len(), starts.len());
            let (id, plain) = scan_rule(tree, at, &mut globs, &mut starts)?;
            if !ids.insert(id) {
                return None;
            }
            match plain {
                Some(decision) => {
                    nodes.push(at);
                    left.push(Left {
                        place,
                        decision,
                        globs: from..globs.len(),
                    });
                }
                None => {
                    globs.truncate(from);
                    starts.truncate(written);
                    read.push(place);
                }
            }
        }
        if nodes.is_empty() {
            return None;
        }
        Some(Index {
            nodes,
            left,
            globs,
            starts,
            read,
        })
    }
}

impl UnreadRules {
    /// The index an entry keeps beside a mode's tree, made when the tree is stored, and the
    /// places of the rules it leaves unread (`None` where none is): the scan of [`Index::scan`]
    /// written out, so a load reads it instead of scanning a thousand rules. Words,
    /// little-endian: the tree's length in bytes, the counts of rules left, of globs and of
    /// rules read, the length of the literal starts; each rule left as its node, place, decision
    /// and the end of its globs; each glob as the end of its literal start; each rule read as
    /// its place; then the literal starts.
    pub(crate) fn index(tree: &[u8]) -> Option<(Vec<u8>, Vec<u32>)> {
        let found = Index::scan(tree)?;
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let mut words = vec![
            count(found.left.len()),
            count(found.globs.len()),
            count(found.read.len()),
            count(found.starts.len()),
        ];
        for (node, left) in found.nodes.iter().zip(&found.left) {
            let decision = DECISIONS.iter().position(|d| *d == left.decision);
            words.extend([
                *node,
                left.place,
                count(decision.unwrap_or(usize::MAX)),
                count(left.globs.end),
            ]);
        }
        words.extend(&found.globs);
        words.extend(&found.read);
        let bytes = index_words::write(tree.len(), &words, &found.starts);
        Some((bytes, found.left.iter().map(|l| l.place).collect()))
    }

    /// The rules left unread of the mode whose tree whole is `whole`, as its `index` says;
    /// `None` when it leaves none, or is not one [`UnreadRules::index`] could have made of that
    /// tree (the mode is then read whole).
    pub(crate) fn from_index(whole: Whole, index: &[u8]) -> Option<UnreadRules> {
        let mut reader = index_words::Reader::of(index, &whole)?;
        let (lefts, globs, reads, written) = (
            reader.word()? as usize,
            reader.word()? as usize,
            reader.word()? as usize,
            reader.word()? as usize,
        );
        let words = lefts.checked_mul(4)?.checked_add(globs)?.checked_add(reads)?;
        if lefts == 0 || !reader.holds(words, written) {
            return None;
        }
        let (mut nodes, mut left) = (Vec::with_capacity(lefts), Vec::with_capacity(lefts));
        let mut from = 0;
        for _ in 0..lefts {
            let (node, place, decision, end) =
                (reader.word()?, reader.word()?, reader.word()?, reader.word()? as usize);
            let decision = DECISIONS.get(decision as usize).copied()?;
            // In order, as the load skips them; each with globs of its own.
            if nodes.last().is_some_and(|last| *last >= node) || end <= from || end > globs {
                return None;
            }
            nodes.push(node);
            left.push(Left {
                place,
                decision,
                globs: from..end,
            });
            from = end;
        }
        let globs = reader.words(globs)?;
        let read = reader.words(reads)?;
        let starts = reader.text()?.to_string();
        let index = Index {
            nodes,
            left,
            globs,
            starts,
            read,
        };
        Some(UnreadRules { whole, index })
    }

    /// How many rules the mode has: those left unread and those read with it.
    pub(crate) fn count(&self) -> usize {
        self.index.left.len() + self.index.read.len()
    }

    /// How many of the mode's rules are read with it.
    pub(crate) fn read_count(&self) -> usize {
        self.index.read.len()
    }

    /// The nodes the load leaves out.
    pub(crate) fn nodes(&self) -> &[u32] {
        &self.index.nodes
    }

    /// The decision of each rule left unread.
    pub(crate) fn decisions(&self) -> impl Iterator<Item = Decision> + '_ {
        self.index.left.iter().map(|l| l.decision)
    }

    /// The mode's tree whole, when it holds as many rules as the index counts.
    fn tree(&self) -> Option<Tree<'_>> {
        let (tree, root) = Tree::stored_again(self.whole.bytes()?)?;
        let count = tree.top_array(root, "rules")?.len();
        (count == self.count()).then_some(tree)
    }

    /// Which rules left unread a step's places may reach (by their place in `left`).
    fn reached(&self, places: &Places<'_>) -> Vec<usize> {
        let Index {
            left, globs, starts, ..
        } = &self.index;
        let start = |i: usize| index_words::piece(starts, i, |g| globs.get(g).copied());
        let reaches = |l: &Left| {
            l.globs.clone().any(|i| match start(i) {
                Some(literal) => places.may_reach(literal, literal.len()),
                // INVARIANT (fail closed): a glob whose start cannot be read is read with its
                // rule.
                None => true,
            })
        };
        (0..).zip(left).filter(|(_, l)| reaches(l)).map(|(i, _)| i).collect()
    }

    /// The rules left unread at `which`, as written: from the mode's tree whole, or, where the
    /// tree does not read (a torn or forged entry), from the mode's TOML, as a whole load reads
    /// them. An error when neither holds them.
    fn files(&self, which: &[usize], doc: &Doc) -> Result<Vec<Spanned<RuleFile>>, ()> {
        let from_tree = self.tree().and_then(|tree| {
            which
                .iter()
                .map(|&i| tree.item(*self.index.nodes.get(i)?))
                .collect::<Option<Vec<_>>>()
        });
        if let Some(files) = from_tree {
            return Ok(files);
        }
        let mode: ModeFile = toml::from_str(doc.text.as_ref()).map_err(|_| ())?;
        if mode.rules.len() != self.count() {
            return Err(());
        }
        which
            .iter()
            .map(|&i| {
                let place = self.index.left.get(i)?.place as usize;
                mode.rules.get(place).cloned()
            })
            .collect::<Option<Vec<_>>>()
            .ok_or(())
    }

    /// The mode's own rules with those left unread at `which` read and compiled in, in the
    /// order of its file: `own` are those compiled with it, at the places `read` names. An
    /// error when one does not read or compile as the load found it (a forged entry).
    fn merged(
        &self,
        which: &[usize],
        own: &[Arc<Rule>],
        owner: &str,
        doc: &Doc,
        host: &ScriptHost,
    ) -> Result<Vec<Arc<Rule>>, ()> {
        let files = self.files(which, doc)?;
        let places = which
            .iter()
            .map(|&i| self.index.left.get(i).map(|l| l.place))
            .collect::<Option<Vec<u32>>>()
            .ok_or(())?;
        let read_now = rules_read_later(host, owner, doc, &files)?;
        let read = &self.index.read;
        if own.len() != read.len() {
            return Err(());
        }
        let mut out: Vec<(u32, Arc<Rule>)> = read.iter().copied().zip(own.iter().cloned()).collect();
        out.extend(places.into_iter().zip(read_now.into_iter().map(Arc::new)));
        out.sort_by_key(|(place, _)| *place);
        Ok(out.into_iter().map(|(_, rule)| rule).collect())
    }
}

/// A judged mode's rules left unread, with the document they are read from.
#[derive(Debug, Clone)]
pub(crate) struct LeftRules {
    pub(crate) rules: Arc<UnreadRules>,
    pub(crate) doc: Doc,
}

impl LeftRules {
    /// `judge` with the rules left unread that a step of `effects` may reach read in: itself
    /// when there are none.
    pub(crate) fn judge_for<'j>(
        &self,
        judge: &'j Judge,
        effects: &Effects,
        workspace: &Workspace,
        host: &ScriptHost,
    ) -> Result<Cow<'j, Judge>, ()> {
        let which = self.rules.reached(&Places::of(effects, workspace));
        if which.is_empty() {
            return Ok(Cow::Borrowed(judge));
        }
        self.with(judge, &which, host).map(Cow::Owned)
    }

    /// `judge` with every rule left unread read in, as a whole load compiles it.
    pub(crate) fn every(&self, judge: &Judge, host: &ScriptHost) -> Result<Judge, ()> {
        let all: Vec<usize> = (0..self.rules.index.left.len()).collect();
        self.with(judge, &all, host)
    }

    /// The mode's own rules, `own`, with every rule left unread read in: for a mode that
    /// compiles them whole after all.
    pub(crate) fn every_own(&self, own: &[Arc<Rule>], owner: &str, host: &ScriptHost) -> Result<Vec<Arc<Rule>>, ()> {
        let all: Vec<usize> = (0..self.rules.index.left.len()).collect();
        self.rules.merged(&all, own, owner, &self.doc, host)
    }

    fn with(&self, judge: &Judge, which: &[usize], host: &ScriptHost) -> Result<Judge, ()> {
        // The mode's own rules come last: after those it inherits and those it includes.
        let split = judge.rules.len().checked_sub(self.rules.index.read.len()).ok_or(())?;
        let (before, own) = judge.rules.split_at(split);
        let mut rules = before.to_vec();
        rules.extend(self.rules.merged(which, own, &judge.mode, &self.doc, host)?);
        Ok(Judge {
            mode: judge.mode.clone(),
            default: judge.default,
            ceiling: judge.ceiling.clone(),
            rules,
        })
    }
}

/// A rule's id, and its decision when it is of place globs alone (each glob's literal start
/// pushed onto `starts`, and where it ends there onto `globs`); `None` when it has no id to read.
fn scan_rule<'a>(
    tree: Tree<'a>,
    at: u32,
    globs: &mut Vec<u32>,
    starts: &mut String,
) -> Option<(&'a str, Option<Decision>)> {
    let mut id = None;
    let mut decision = None;
    let mut plain = true;
    let (mut reason, mut when) = (false, false);
    for entry in tree.entries(at)? {
        let (key, value) = entry?;
        match key {
            "id" => id = Some(tree.text(value)?),
            "decision" => decision = tree.text(value).and_then(Decision::parse),
            "reason" => reason = tree.text(value).is_some(),
            "when" if plain => {
                when = true;
                plain = place_globs(tree, value, globs, starts);
            }
            _ => plain = false,
        }
    }
    // `when` read as place globs pushed at least one.
    Some((id?, decision.filter(|_| plain && reason && when)))
}

/// Whether the `when` table at `at` holds only `reads` and `writes` lists of path globs that
/// compile, each one's literal start pushed onto `starts` and its end there onto `globs`.
fn place_globs(tree: Tree<'_>, at: u32, globs: &mut Vec<u32>, starts: &mut String) -> bool {
    let Some(entries) = tree.entries(at) else { return false };
    let before = globs.len();
    for entry in entries {
        let Some((key, value)) = entry else { return false };
        let (true, Some(items)) = (key == "reads" || key == "writes", tree.items(value)) else {
            return false;
        };
        for node in items {
            let Some(PlaceEntry::Glob(glob)) = tree.text(node).map(place_entry) else {
                return false;
            };
            let Ok(literal) = PathSet::check(glob) else {
                return false;
            };
            // As a step's place is tested against it (`Seen::may_reach`).
            starts.push_str(glob.get(..literal).unwrap_or(glob));
            let Ok(end) = u32::try_from(starts.len()) else {
                return false;
            };
            globs.push(end);
        }
    }
    globs.len() > before
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::source::Text;
    use crate::format::ModeFile;
    use crate::judge::PlaceMatcher;

    /// Entries of `reads` and `writes`: globs, names, sets, and globs that do not compile.
    fn entry(pick: u8) -> String {
        let pool = [
            "src/**",
            "/etc/x/**",
            "~/.ssh/*",
            "**/.env",
            "tmp",
            "any",
            "unknown",
            "@secrets",
            "covers:@protected",
            "a[",
            "{a,b",
            "src/[ab].rs",
        ];
        match pool.get(usize::from(pick)) {
            Some(entry) => entry.to_string(),
            None => "a".repeat(1100),
        }
    }

    /// Compiled as a load compiles it, no path set declared: a rule of place globs alone, that
    /// compiles cleanly.
    fn of_place_globs_alone(rule: &Rule) -> bool {
        let w = &rule.when;
        let matchers: Vec<&PlaceMatcher> = w.reads.iter().chain(&w.writes).flatten().collect();
        rule.script.is_none()
            && !rule.ceiling
            && [w.reaches, w.reversible, w.contained, w.costs]
                .iter()
                .all(Option::is_none)
            && !matchers.is_empty()
            && matchers.iter().all(|m| matches!(m, PlaceMatcher::Paths(_)))
    }

    proptest::proptest! {
        /// A rule is left unread exactly when it is written with nothing but an id, a decision, a
        /// reason and place globs, and compiles into a rule that only a place its globs reach can
        /// make hold (no flag, no script, no set, not part of the ceiling); with its decision. A
        /// file with two rules of one id leaves none.
        #[test]
        fn the_rules_left_unread_are_the_rules_of_place_globs_alone(
            rules in proptest::collection::vec(
                (
                    0u8..5,
                    proptest::option::of(proptest::collection::vec(0u8..14, 0..3)),
                    proptest::option::of(proptest::collection::vec(0u8..14, 0..3)),
                    proptest::option::of(proptest::bool::ANY),
                    0u8..3,
                    0u8..4,
                ),
                1..5,
            )
        ) {
            let mut text = String::from("id = \"m\"\n");
            let mut ids = HashSet::new();
            let mut duplicate = false;
            let mut plain_keys = Vec::new();
            for (i, (extra, reads, writes, reaches, decision, id)) in rules.iter().enumerate() {
                let id = if *id == 0 { "dup".to_string() } else { format!("r{i}") };
                duplicate |= !ids.insert(id.clone());
                let decision = ["allow", "ask", "refuse"][usize::from(*decision)];
                text.push_str(&format!("\n[[rules]]\nreason = \"why\"\nid = \"{id}\"\ndecision = \"{decision}\"\n"));
                text.push_str(["", "ceiling = true\n", "ceiling = false\n", "script = \"s.rhai\"\nfunction = \"f\"\n", "when = {}\n"][usize::from(*extra)]);
                plain_keys.push(*extra == 0);
                for (key, entries) in [("writes", writes), ("reads", reads)] {
                    if let (Some(entries), false) = (entries, *extra == 4) {
                        let list: Vec<String> = entries.iter().map(|e| toml::Value::String(entry(*e)).to_string()).collect();
                        text.push_str(&format!("when.{key} = [{}]\n", list.join(", ")));
                    }
                }
                if let (Some(reaches), false) = (reaches, *extra == 4) {
                    text.push_str(&format!("when.reaches = {reaches}\n"));
                }
            }
            let bytes = crate::bundle::parsed::tree_of(&text);
            proptest::prop_assume!(!bytes.is_empty());
            let len = bytes.len();
            let unread = Index::scan(&bytes);
            let file: ModeFile = toml::from_str(&text).unwrap();
            let doc = Doc {
                source: 0,
                relative: "modes/m.toml".into(),
                display: "m.toml".into(),
                text: Text::from(text.as_str()),
                line_offset: 0,
                unread_commands: false,
                unread_acts: None,
                unread_rules: None,
            };
            let host = ScriptHost::new(crate::script::ScriptLimits::for_facts());
            let mut expected = Vec::new();
            for (place, (spanned, plain)) in (0u32..).zip(file.rules.iter().zip(&plain_keys)) {
                let compiled = rules_read_later(&host, "m", &doc, std::slice::from_ref(spanned));
                let alone = matches!(&compiled, Ok(r) if r.iter().all(of_place_globs_alone));
                if alone && *plain {
                    expected.push((place, spanned.get_ref().decision));
                }
            }
            // The index stored with the tree says what the scan says.
            let index = UnreadRules::index(&crate::bundle::parsed::tree_of(&text));
            let indexed = index
                .as_ref()
                .and_then(|(bytes, _)| UnreadRules::from_index(Whole::Read(Arc::new(Vec::new()), 0..len), bytes));
            proptest::prop_assert_eq!(indexed.as_ref().map(|u| &u.index), unread.as_ref());
            // The places it leaves are those the slim twin is made without.
            let places: Option<Vec<u32>> = unread.as_ref().map(|u| u.left.iter().map(|l| l.place).collect());
            proptest::prop_assert_eq!(index.map(|(_, left)| left), places);
            let found: Vec<(u32, Decision)> = unread
                .iter()
                .flat_map(|u| u.left.iter().map(|l| (l.place, l.decision)))
                .collect();
            if duplicate {
                proptest::prop_assert!(found.is_empty());
            } else {
                proptest::prop_assert_eq!(found, expected, "{}", text);
            }
        }

        /// An index that is not one the scan wrote (a forged entry) is refused or read in
        /// bounds: it never panics, reserves no more than it holds, and skips rules in order.
        #[test]
        fn any_index_reads_in_bounds(words in proptest::collection::vec(0u32..6, 0..40), tail in 0usize..4) {
            let mut bytes: Vec<u8> = std::iter::once(0).chain(words).flat_map(|w: u32| w.to_le_bytes()).collect();
            bytes.truncate(bytes.len().saturating_sub(tail));
            if let Some(u) = UnreadRules::from_index(Whole::Read(Arc::new(Vec::new()), 0..0), &bytes) {
                let u = u.index;
                proptest::prop_assert!(u.nodes.windows(2).all(|w| w[0] < w[1]));
                proptest::prop_assert!(u.left.iter().all(|l| !l.globs.is_empty() && l.globs.end <= u.globs.len()));
            }
        }
    }
}
