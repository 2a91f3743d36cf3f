//! A policy's kept command rules, left in a stored layer's entry when one judgement's load read
//! the policy: the judgement reads only those whose first word is a program its step runs, so a
//! thousand kept commands cost the index stored beside the policy's tree, and a look at each
//! first word, until a step names one.

use super::index_words;
use super::parsed::Whole;
use crate::built::Tree;
use crate::format::{ActRuleFile, PolicyFile, Spanned};

/// The kept command rules a load left unread of one policy's document.
pub(crate) struct UnreadActs {
    /// The policy's tree whole in the layer's entry, read when a step names one of them.
    whole: Whole,
    index: Index,
}

/// Which of a policy's act rules are command rules: found in its tree when the tree is stored
/// ([`Index::scan`]), and kept beside it ([`UnreadActs::index`]).
#[derive(Debug, Clone, PartialEq)]
struct Index {
    /// The nodes of the command rules left unread, in order (what the load leaves out).
    nodes: Vec<u32>,
    /// Of each of those, its place among the policy's act rules and where its first word ends
    /// in `firsts`.
    left: Vec<(u32, u32)>,
    /// Each of those commands' first word, one after the other: the word a step's program must
    /// be for the rule to name it.
    firsts: String,
    /// The places among the policy's act rules of those read with it (paths, domains), in order.
    read: Vec<u32>,
}

impl std::fmt::Debug for UnreadActs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UnreadActs({} commands)", self.index.left.len())
    }
}

impl Index {
    /// The command rules of the policy whose stored tree is `tree` (`Tree::acts`); `None` when
    /// it has none.
    fn scan(tree: &[u8]) -> Option<Index> {
        let (tree, root) = Tree::stored_again(tree)?;
        let (mut nodes, mut left, mut read) = (Vec::new(), Vec::new(), Vec::new());
        let mut firsts = String::new();
        for (place, (node, command)) in (0u32..).zip(tree.acts(root)) {
            let first = command.and_then(|(at, len)| tree.string(at, len)?.split_whitespace().next());
            match first {
                Some(first) => {
                    firsts.push_str(first);
                    nodes.push(node);
                    left.push((place, u32::try_from(firsts.len()).ok()?));
                }
                None => read.push(place),
            }
        }
        (!nodes.is_empty()).then_some(Index {
            nodes,
            left,
            firsts,
            read,
        })
    }

    /// The first word of the `nth` rule left unread.
    fn first(&self, nth: usize) -> Option<&str> {
        index_words::piece(&self.firsts, nth, |i| Some(self.left.get(i)?.1))
    }
}

impl UnreadActs {
    /// The index an entry keeps beside a policy's tree, made when the tree is stored, and the
    /// places of the rules it leaves unread (`None` where none is): the scan of [`Index::scan`]
    /// written out, so a load reads it instead of walking a thousand rules. Words,
    /// little-endian: the tree's length in bytes, the counts of rules left and of rules read,
    /// the length of the first words; each rule left as its node, place and the end of its
    /// first word; each rule read as its place; then the first words.
    pub(crate) fn index(tree: &[u8]) -> Option<(Vec<u8>, Vec<u32>)> {
        let found = Index::scan(tree)?;
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let mut words = vec![
            count(found.left.len()),
            count(found.read.len()),
            count(found.firsts.len()),
        ];
        for (node, (place, end)) in found.nodes.iter().zip(&found.left) {
            words.extend([*node, *place, *end]);
        }
        words.extend(&found.read);
        let bytes = index_words::write(tree.len(), &words, &found.firsts);
        Some((bytes, found.left.iter().map(|(place, _)| *place).collect()))
    }

    /// The kept command rules left unread of the policy whose tree whole is `whole`, as its
    /// `index` says; `None` when it leaves none, or is not one [`UnreadActs::index`] could have
    /// made of that tree (the policy is then read whole).
    pub(crate) fn from_index(whole: Whole, index: &[u8]) -> Option<UnreadActs> {
        let mut reader = index_words::Reader::of(index, &whole)?;
        let (lefts, reads, written) = (
            reader.word()? as usize,
            reader.word()? as usize,
            reader.word()? as usize,
        );
        if lefts == 0 || !reader.holds(lefts.checked_mul(3)?.checked_add(reads)?, written) {
            return None;
        }
        let (mut nodes, mut left) = (Vec::with_capacity(lefts), Vec::with_capacity(lefts));
        let mut from = 0;
        for _ in 0..lefts {
            let (node, place, end) = (reader.word()?, reader.word()?, reader.word()?);
            // In order, as the load skips them; each a word of its own.
            if nodes.last().is_some_and(|last| *last >= node) || end as usize <= from {
                return None;
            }
            nodes.push(node);
            left.push((place, end));
            from = end as usize;
        }
        let read = reader.words(reads)?;
        let index = Index {
            nodes,
            left,
            firsts: reader.text()?.to_string(),
            read,
        };
        // Each first word where the text has one.
        if (0..index.left.len()).any(|nth| index.first(nth).is_none()) {
            return None;
        }
        // The places of the two, in order each, are every place among the policy's act rules
        // once: what the order of a rule read later is taken from.
        let (mut l, mut r) = (
            index.left.iter().map(|(place, _)| *place).peekable(),
            index.read.iter().copied().peekable(),
        );
        for place in 0..u32::try_from(lefts + reads).ok()? {
            match (l.peek(), r.peek()) {
                (Some(at), _) if *at == place => l.next(),
                (_, Some(at)) if *at == place => r.next(),
                _ => return None,
            };
        }
        Some(UnreadActs { whole, index })
    }

    /// How many of the policy's act rules are read with it.
    pub(crate) fn read_count(&self) -> usize {
        self.index.read.len()
    }

    /// The nodes the load leaves out.
    pub(crate) fn nodes(&self) -> &[u32] {
        &self.index.nodes
    }

    /// The place among all the policy's act rules of the `nth` read with it.
    pub(crate) fn place_of_read(&self, nth: usize) -> u32 {
        self.index.read.get(nth).copied().unwrap_or(u32::MAX)
    }

    /// Those whose first word is one of `programs`, with their places and commands: from the
    /// policy's tree whole, or, where the tree does not hold them (a torn or forged entry), from
    /// the policy's TOML `text`, as a whole load reads them. An error when neither holds them.
    pub(crate) fn naming(&self, programs: &[&str], text: &str) -> Result<Vec<(u32, Spanned<ActRuleFile>, String)>, ()> {
        let which: Vec<usize> = (0..self.index.left.len())
            // INVARIANT (fail closed): a first word that cannot be read is read with its rule.
            .filter(|&nth| self.index.first(nth).is_none_or(|first| programs.contains(&first)))
            .collect();
        if which.is_empty() {
            return Ok(Vec::new());
        }
        let found = |files: Vec<Spanned<ActRuleFile>>| -> Option<Vec<(u32, Spanned<ActRuleFile>, String)>> {
            which
                .iter()
                .zip(files)
                .map(|(&nth, file)| {
                    let command = self.command(nth, file.get_ref())?;
                    Some((self.index.left.get(nth)?.0, file, command))
                })
                .collect()
        };
        if let Some(found) = self.in_tree(&which).and_then(found) {
            return Ok(found);
        }
        let policy: PolicyFile = toml::from_str(text).map_err(|_| ())?;
        if policy.acts.len() != self.index.left.len() + self.index.read.len() {
            return Err(());
        }
        which
            .iter()
            .map(|&nth| policy.acts.get(self.index.left.get(nth)?.0 as usize).cloned())
            .collect::<Option<Vec<_>>>()
            .and_then(found)
            .ok_or(())
    }

    /// The rules left unread at `which`, as the policy's tree whole holds them, when it holds as
    /// many act rules as the index counts.
    fn in_tree(&self, which: &[usize]) -> Option<Vec<Spanned<ActRuleFile>>> {
        let (tree, root) = Tree::stored_again(self.whole.bytes()?)?;
        let count = tree.top_array(root, "acts")?.len();
        if count != self.index.left.len() + self.index.read.len() {
            return None;
        }
        which
            .iter()
            .map(|&nth| tree.item(*self.index.nodes.get(nth)?))
            .collect()
    }

    /// The command of `file`, the `nth` rule left unread, when it is the command rule the index
    /// says it is (compiling makes a command rule of exactly these: `compile::acts`).
    fn command(&self, nth: usize, file: &ActRuleFile) -> Option<String> {
        let command = file
            .command
            .as_ref()
            .filter(|_| file.path.is_none() && file.domain.is_none())?;
        (command.split_whitespace().next() == Some(self.index.first(nth)?)).then(|| command.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    proptest::proptest! {
        /// The load leaves unread exactly the act rules compiling makes command rules of, so
        /// every other one (and every one compiling reports) is read, and reported, with it; the
        /// index stored with the policy's tree says what the scan of the tree says.
        #[test]
        fn the_rules_left_unread_are_the_command_rules(
            acts in proptest::collection::vec(
                (
                    proptest::option::of("[ a\t\u{a0}]{0,3}"),
                    proptest::option::of("[a/*]{0,2}"),
                    proptest::option::of("[a.]{0,2}"),
                    proptest::bool::ANY,
                ),
                0..6,
            )
        ) {
            let mut text = String::from("id = \"kept\"\n");
            for (i, (command, path, domain, modes)) in acts.iter().enumerate() {
                text.push_str(&format!("\n[[acts]]\nid = \"a{i}\"\ndecision = \"allow\"\n"));
                if *modes {
                    text.push_str("modes = [\"ask\"]\n");
                }
                // Not in the order the format lists them: the tree keeps them as written.
                for (key, value) in [("domain", domain), ("command", command), ("path", path)] {
                    if let Some(value) = value {
                        text.push_str(&format!("{key} = {}\n", toml::Value::String(value.clone())));
                    }
                }
            }
            let bytes = crate::bundle::parsed::tree_of(&text);
            let (tree, root) = Tree::stored(&bytes).unwrap();
            let found: Vec<bool> = tree.acts(root).iter().map(|(_, command)| command.is_some()).collect();
            let compiled: Vec<bool> = acts
                .iter()
                .map(|(command, path, domain, _)| {
                    matches!((command, path, domain), (Some(c), None, None) if !c.trim().is_empty())
                })
                .collect();
            proptest::prop_assert_eq!(&found, &compiled);
            let index = UnreadActs::index(&bytes);
            let read = index
                .as_ref()
                .and_then(|(index, _)| UnreadActs::from_index(Whole::Read(Arc::new(Vec::new()), 0..bytes.len()), index));
            let scanned = Index::scan(&bytes);
            proptest::prop_assert_eq!(read.as_ref().map(|u| &u.index), scanned.as_ref());
            let commands: Vec<u32> = (0u32..).zip(&compiled).filter(|(_, c)| **c).map(|(place, _)| place).collect();
            proptest::prop_assert_eq!(index.map(|(_, left)| left).unwrap_or_default(), commands);
        }

        /// An index that is not one the scan wrote (a forged entry) is refused or read in
        /// bounds: it never panics, reserves no more than it holds, skips rules in order, and
        /// places each rule once.
        #[test]
        fn any_index_reads_in_bounds(words in proptest::collection::vec(0u32..6, 0..30), tail in 0usize..4, firsts in "[a é]{0,6}") {
            let mut bytes: Vec<u8> = std::iter::once(0).chain(words).flat_map(|w: u32| w.to_le_bytes()).collect();
            bytes.truncate(bytes.len().saturating_sub(tail));
            bytes.extend_from_slice(firsts.as_bytes());
            if let Some(u) = UnreadActs::from_index(Whole::Read(Arc::new(Vec::new()), 0..0), &bytes) {
                let u = u.index;
                proptest::prop_assert!(u.nodes.windows(2).all(|w| w[0] < w[1]));
                proptest::prop_assert!((0..u.left.len()).all(|nth| u.first(nth).is_some_and(|w| !w.is_empty())));
                let mut places: Vec<u32> = u.left.iter().map(|(place, _)| *place).chain(u.read.iter().copied()).collect();
                places.sort_unstable();
                proptest::prop_assert!(places.iter().copied().eq(0..u32::try_from(places.len()).unwrap()));
            }
        }
    }
}
