//! The shipped bundle as the build made it (`build.rs`): its files, what a selection reads of
//! each, and its documents parsed into a tree of integer nodes and the strings they hold, read
//! into the formats without parsing TOML again. Imports nothing of the crate, so the bundle, the
//! classifier and `shipped` all read it.
//!
//! It answers serde as toml's own deserializer answers for the same document (the same spans,
//! the same enum and option rules), so a document read from it is the one its TOML gives; the
//! core's tests check that for every shipped document. Anything it cannot answer is an error,
//! and the document is then parsed from its text.

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use std::fmt;
use std::ops::Range;

include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// What a selection reads of a file's text: its written id (`None` when unsure) and whether it
/// may add to the whole bundle (`bundle::written`).
pub(crate) type Facts = (Option<&'static str>, bool);

mod kinds;
use kinds::{ARRAY, BOOL, FLOAT, INT, STR, TABLE};

pub(crate) mod make;

/// Deepest nesting a stored tree may hold (a document's tables and arrays); deeper is refused,
/// so reading one never exhausts the stack.
const MAX_DEPTH: u8 = 128;

/// A built tree: nodes `[kind, a, b, span start, span end]` and their strings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tree<'a> {
    nodes: Nodes<'a>,
    strings: &'a str,
}

/// A tree's nodes: the shipped ones as the build wrote them, or a stored layer's read in place
/// from its bytes (five little-endian `u32`s a node).
#[derive(Debug, Clone, Copy)]
enum Nodes<'a> {
    Built(&'a [[u32; 5]]),
    Stored(&'a [u8]),
}

/// The bytes of one stored node.
const NODE_BYTES: usize = 20;

impl Nodes<'_> {
    fn len(&self) -> usize {
        match self {
            Nodes::Built(nodes) => nodes.len(),
            Nodes::Stored(bytes) => bytes.len() / NODE_BYTES,
        }
    }

    /// Whether `count` nodes from `first` are all in the tree: a range read from a tree not yet
    /// checked ([`Tree::stored_again`]) is walked only when it is.
    fn holds(&self, first: u32, count: usize) -> bool {
        (first as usize).checked_add(count).is_some_and(|end| end <= self.len())
    }

    fn get(&self, at: usize) -> Option<[u32; 5]> {
        match self {
            Nodes::Built(nodes) => nodes.get(at).copied(),
            Nodes::Stored(bytes) => {
                let start = at.checked_mul(NODE_BYTES)?;
                let node: &[u8; NODE_BYTES] = bytes.get(start..start.checked_add(NODE_BYTES)?)?.try_into().ok()?;
                // Five words at fixed places of a fixed-size node: no bound is checked at run time.
                let word = |i: usize| Some(u32::from_le_bytes(node.get(i..i + 4)?.try_into().ok()?));
                Some([word(0)?, word(4)?, word(8)?, word(12)?, word(16)?])
            }
        }
    }
}

impl<'a> Tree<'a> {
    /// The document at `root`, when it reads as `T`.
    pub(crate) fn document<T: DeserializeOwned>(self, root: u32) -> Option<T> {
        self.document_without(root, Leave::default())
    }

    /// The document at `root` without what `leave` names (left to its defaults), when it reads
    /// as `T`.
    pub(crate) fn document_without<T: DeserializeOwned>(self, root: u32, leave: Leave<'_>) -> Option<T> {
        let reading = Reading::new(leave, self);
        T::deserialize(Node {
            tree: self,
            at: root as usize,
            reading: &reading,
            within: Within::Root,
        })
        .ok()
    }

    /// The tree in these bytes, its nodes not checked: a document is read from it with checks as
    /// it goes ([`Reading`]), and [`Tree::acts`] and the other scans walk only ranges the tree
    /// holds, one node at a time, without descending.
    pub(crate) fn stored_again(bytes: &'a [u8]) -> Option<(Tree<'a>, u32)> {
        let word = |at: usize| -> Option<u32> { Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?)) };
        let (root, count) = (word(0)?, word(4)? as usize);
        let end = 8usize.checked_add(count.checked_mul(NODE_BYTES)?)?;
        let tree = Tree {
            nodes: Nodes::Stored(bytes.get(8..end)?),
            strings: std::str::from_utf8(bytes.get(end..)?).ok()?,
        };
        Some((tree, root))
    }

    /// The items of the top-level `acts` array of the document at `root`, in order: each item's
    /// node, and where its command is in the strings when it is a command rule (an act rule
    /// with a `command` that is not blank, and neither a `path` nor a `domain`: `compile::acts`
    /// makes a command rule of exactly these).
    pub(crate) fn acts(self, root: u32) -> Vec<(u32, Option<(u32, u32)>)> {
        self.top_array(root, "acts")
            .map(|items| items.map(|at| (at, self.command_act(at))).collect())
            .unwrap_or_default()
    }

    /// The item nodes of the top-level array `key` of the document at `root`, when it has one
    /// and the tree holds them all.
    pub(crate) fn top_array(self, root: u32, key: &str) -> Option<Range<u32>> {
        let reading = Reading::new(Leave::default(), self);
        let array = self.node(root as usize, &reading).entry(key)?.at;
        self.items(u32::try_from(array).ok()?)
    }

    /// The item nodes of the array at `at`, when it is one and the tree holds them all.
    pub(crate) fn items(self, at: u32) -> Option<Range<u32>> {
        match self.nodes.get(at as usize)? {
            [ARRAY, first, count, _, _] if self.nodes.holds(first, count as usize) => Some(first..first + count),
            _ => None,
        }
    }

    /// The keys and value nodes of the table at `at`, when it is one whose keys are strings the
    /// tree holds; read straight from the nodes, for a scan over thousands of items.
    pub(crate) fn entries(self, at: u32) -> Option<impl Iterator<Item = Option<(&'a str, u32)>> + 'a> {
        let [TABLE, first, count, _, _] = self.nodes.get(at as usize)? else {
            return None;
        };
        if !self.nodes.holds(first, (count as usize).checked_mul(2)?) {
            return None;
        }
        Some((0..count).map(move |i| {
            let key = first + 2 * i;
            Some((self.text(key)?, key + 1))
        }))
    }

    /// The string at the node `at`, when it is one.
    pub(crate) fn text(self, at: u32) -> Option<&'a str> {
        match self.nodes.get(at as usize)? {
            [STR, a, b, _, _] => self.string(a, b),
            _ => None,
        }
    }

    /// Where the command of the act rule at `at` is in the strings, when it names one and
    /// nothing else. Read straight from the nodes: a layer may keep thousands.
    fn command_act(self, at: u32) -> Option<(u32, u32)> {
        let mut command = None;
        for entry in self.entries(at)? {
            let (key, value) = entry?;
            match key {
                "path" | "domain" => return None,
                "command" => match self.nodes.get(value as usize)? {
                    [STR, a, b, _, _] if !self.string(a, b)?.trim().is_empty() => command = Some((a, b)),
                    _ => return None,
                },
                _ => {}
            }
        }
        command
    }

    /// The string at `at`, `len` bytes long.
    pub(crate) fn string(self, at: u32, len: u32) -> Option<&'a str> {
        self.strings.get(at as usize..(at as usize).checked_add(len as usize)?)
    }

    /// The node at `at`, when it reads as `T`.
    pub(crate) fn item<T: DeserializeOwned>(self, at: u32) -> Option<T> {
        let reading = Reading::new(Leave::default(), self);
        T::deserialize(self.node(at as usize, &reading)).ok()
    }

    fn node<'n>(self, at: usize, reading: &'n Reading<'n>) -> Node<'a, 'n> {
        Node {
            tree: self,
            at,
            reading,
            within: Within::All,
        }
    }

    /// A tree stored as [`make::Built::stored`] writes it, and its root; `None` unless it is well
    /// formed: every string and child in range, each node the child of at most one node placed
    /// before it, no deeper than [`MAX_DEPTH`]. Checked whole where a tree is made, before it is
    /// stored; a load reads a stored one with the same bounds checked as it goes ([`Reading`]).
    pub(crate) fn stored(bytes: &'a [u8]) -> Option<(Tree<'a>, u32)> {
        let (tree, root) = Tree::stored_again(bytes)?;
        let count = tree.nodes.len();
        // Each node's depth plus one once a node has claimed it (0: not claimed); the root is at 0.
        let mut claimed = vec![0u8; count];
        *claimed.get_mut(root as usize)? = 1;
        for at in 0..count {
            let [kind, a, b, _, _] = tree.nodes.get(at)?;
            let children = match kind {
                STR => {
                    tree.strings.get(a as usize..(a as usize).checked_add(b as usize)?)?;
                    0
                }
                INT | FLOAT | BOOL => 0,
                ARRAY => b as usize,
                TABLE => (b as usize).checked_mul(2)?,
                _ => return None,
            };
            if children == 0 {
                // A leaf's `a` is no child: a string's start, or a number.
                claimed
                    .get(at)?
                    .max(&1)
                    .checked_add(1)
                    .filter(|d| *d <= MAX_DEPTH + 1)?;
                continue;
            }
            let first = a as usize;
            if first <= at || first.checked_add(children)? > count {
                return None;
            }
            // A node no one claimed is never read; its children count as one level down.
            let below = claimed
                .get(at)?
                .max(&1)
                .checked_add(1)
                .filter(|d| *d <= MAX_DEPTH + 1)?;
            // The children as one slice: checked once, not each child's bound.
            let slots = claimed.get_mut(first..first.checked_add(children)?)?;
            if slots.iter().any(|slot| *slot != 0) {
                return None;
            }
            slots.fill(below);
        }
        Some((tree, root))
    }
}

/// What is read of one table or array.
#[derive(Debug, Clone, Copy)]
enum Within<'n> {
    All,
    /// The document's own table: all but what the read's `Leave` leaves out.
    Root,
    /// Of a table, this entry.
    Only(&'n str),
    /// Of an array, the items but those at these nodes (in order).
    AllBut(&'n [u32]),
}

/// One read of a tree, shared by its nodes: what it leaves out of the document, and how much
/// more it may descend. A stored tree is untrusted (a file in the user's cache) and is checked
/// as it is read rather than whole first, so a load pays for the nodes it reads, not for the
/// thousand rules it leaves in the tree: each step down goes to a node placed after its parent
/// (no cycle), no deeper than [`MAX_DEPTH`] (the stack), and the read takes at most one step per
/// node of the tree (a tree that shares a node among parents, read in exponential time, runs
/// out); every node and string is bounds-checked where it is read.
#[derive(Debug)]
pub(crate) struct Reading<'n> {
    leave: Leave<'n>,
    /// Whether the steps are counted: a stored tree's; the build's own was checked when built.
    counted: bool,
    steps: std::cell::Cell<usize>,
    depth: std::cell::Cell<u8>,
}

impl<'n> Reading<'n> {
    fn new(leave: Leave<'n>, tree: Tree<'_>) -> Reading<'n> {
        Reading {
            leave,
            counted: matches!(tree.nodes, Nodes::Stored(_)),
            steps: std::cell::Cell::new(tree.nodes.len().saturating_add(1)),
            depth: std::cell::Cell::new(0),
        }
    }

    /// One step down, undone when the returned guard drops; an error past the bounds.
    fn descend(&self) -> Result<Descent<'_>, Error> {
        if !self.counted {
            return Ok(Descent(None));
        }
        self.step()?;
        let depth = self.depth.get();
        if depth >= MAX_DEPTH {
            return Err(Error("a built tree nested too deep".into()));
        }
        self.depth.set(depth + 1);
        Ok(Descent(Some(&self.depth)))
    }

    /// One node looked at; an error once the read has looked at more than the tree holds.
    fn step(&self) -> Result<(), Error> {
        if !self.counted {
            return Ok(());
        }
        let left = self.steps.get().checked_sub(1).ok_or_else(malformed)?;
        self.steps.set(left);
        Ok(())
    }
}

/// A step down the tree, climbed back when dropped (none where steps are not counted).
struct Descent<'r>(Option<&'r std::cell::Cell<u8>>);

impl Drop for Descent<'_> {
    fn drop(&mut self) {
        if let Some(depth) = self.0 {
            depth.set(depth.get().saturating_sub(1));
        }
    }
}

/// What one judgement's read leaves out of a document (the file's examples and rows, which only
/// a whole load compiles; of a provider's tool map, every tool but the one called).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Leave<'n> {
    /// Top-level keys left out.
    pub(crate) keys: &'n [&'n str],
    /// Of the top-level table `.0`, every entry but `.1`.
    pub(crate) all_but: Option<(&'n str, &'n str)>,
    /// Of the top-level array `.0`, the items at the nodes `.1`, in order: a policy's kept
    /// command rules (`acts`, read when a step names them: `bundle::unread_acts::UnreadActs`), a mode's
    /// rules of place globs alone (`rules`, read when a step's place reaches them:
    /// `bundle::unread_rules::UnreadRules`).
    pub(crate) items: Option<(&'n str, &'n [u32])>,
}

/// Why a built document did not read (it is then parsed from its text).
#[derive(Debug)]
pub(crate) struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(message: T) -> Error {
        Error(message.to_string())
    }
}

fn malformed() -> Error {
    Error("a malformed built node".into())
}

/// One node of the tree.
#[derive(Debug, Clone, Copy)]
struct Node<'a, 'n> {
    tree: Tree<'a>,
    at: usize,
    /// The read it is part of (what it leaves out, how far it may go on).
    /// Borrowed: a node is copied at every step down the tree, and small enough, it is copied in
    /// registers instead of by `memcpy`.
    reading: &'n Reading<'n>,
    /// What is read of this table or array: the root, all but what the read leaves out; where
    /// `all_but` names the table, its one entry; where `items` leaves items of this array out,
    /// the others.
    within: Within<'n>,
}

impl<'a, 'n> Node<'a, 'n> {
    fn raw(&self) -> Result<[u32; 5], Error> {
        self.tree.nodes.get(self.at).ok_or_else(malformed)
    }

    fn span(&self) -> Result<Range<usize>, Error> {
        let [_, _, _, start, end] = self.raw()?;
        Ok(start as usize..end as usize)
    }

    fn text(&self, at: u32, len: u32) -> Result<&'a str, Error> {
        let (at, len) = (at as usize, len as usize);
        self.tree.strings.get(at..at + len).ok_or_else(malformed)
    }

    fn child(&self, at: usize) -> Node<'a, 'n> {
        Node {
            tree: self.tree,
            at,
            reading: self.reading,
            within: Within::All,
        }
    }

    /// The first child of this table or array, placed after it as every child is (a tree read
    /// as it goes has no cycle); an error otherwise.
    fn first_child(&self, first: u32, count: u32) -> Result<usize, Error> {
        match count == 0 || first as usize > self.at {
            true => Ok(first as usize),
            false => Err(malformed()),
        }
    }

    /// The value of this table's entry `key`, if it has one.
    fn entry(&self, key: &str) -> Option<Node<'a, 'n>> {
        let [TABLE, first, count, _, _] = self.raw().ok()? else {
            return None;
        };
        if !self.tree.nodes.holds(first, (count as usize).checked_mul(2)?) {
            return None;
        }
        let first = self.first_child(first, count).ok()?;
        (0..count as usize)
            .map(|i| first + 2 * i)
            .find(|at| self.key(*at).is_ok_and(|k| k == key))
            .map(|at| self.child(at + 1))
    }

    /// The text of the key node at `at`.
    fn key(&self, at: usize) -> Result<&'a str, Error> {
        let [_, a, b, _, _] = self.child(at).raw()?;
        self.text(a, b)
    }

    /// Whether the entry whose key node is at `at` is left out.
    fn leaves(&self, at: usize) -> Result<bool, Error> {
        let (keys, only) = match self.within {
            Within::Root => (self.reading.leave.keys, None),
            Within::Only(entry) => (&[][..], Some(entry)),
            Within::All | Within::AllBut(_) => return Ok(false),
        };
        if keys.is_empty() && only.is_none() {
            return Ok(false);
        }
        let key = self.key(at)?;
        Ok(keys.contains(&key) || only.is_some_and(|only| only != key))
    }
}

fn bits(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

// Strings are lent for the tree's lifetime, so a value buffered for `flatten` keeps them borrowed.
impl<'a, 'n> de::Deserializer<'a> for Node<'a, 'n> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let [kind, a, b, _, _] = self.raw()?;
        match kind {
            STR => visitor.visit_borrowed_str(self.text(a, b)?),
            INT => visitor.visit_i64(i64::from_ne_bytes(bits(a, b).to_ne_bytes())),
            FLOAT => visitor.visit_f64(f64::from_bits(bits(a, b))),
            BOOL => visitor.visit_bool(a != 0),
            ARRAY => visitor.visit_seq(Items {
                node: self,
                next: self.first_child(a, b)?,
                end: a as usize + b as usize,
            }),
            TABLE => visitor.visit_map(Entries {
                node: self,
                next: self.first_child(a, b)?,
                end: a as usize + 2 * b as usize,
            }),
            _ => Err(malformed()),
        }
    }

    // As toml: a key that is there is `Some` (an absent one is `None`).
    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // A value with its place, in toml's protocol (`toml::Spanned`).
        if serde_spanned::de::is_spanned(name) {
            let span = self.span()?;
            return visitor.visit_map(serde_spanned::de::SpannedDeserializer::new(self, span));
        }
        self.deserialize_any(visitor)
    }

    // As toml: a string is a unit variant, a table of one key the variant named by the key.
    fn deserialize_enum<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let [kind, a, b, _, _] = self.raw()?;
        match kind {
            STR => visitor.visit_enum(self.text(a, b)?.into_deserializer()),
            TABLE if b == 1 => {
                let first = self.first_child(a, b)?;
                let _down = self.reading.descend()?;
                visitor.visit_enum(Variant {
                    key: self.child(first),
                    value: self.child(first + 1),
                })
            }
            _ => Err(Error("wanted a string or a table of one key".into())),
        }
    }

    serde::forward_to_deserialize_any! {
        <W: Visitor<'a>>
        bool u8 u16 u32 u64 i8 i16 i32 i64 i128 u128 f32 f64 char str string seq
        bytes byte_buf map unit ignored_any unit_struct tuple_struct tuple identifier
    }
}

impl<'a, 'n> IntoDeserializer<'a, Error> for Node<'a, 'n> {
    type Deserializer = Node<'a, 'n>;

    fn into_deserializer(self) -> Node<'a, 'n> {
        self
    }
}

/// An array's items.
struct Items<'a, 'n> {
    node: Node<'a, 'n>,
    next: usize,
    end: usize,
}

impl<'a, 'n> de::SeqAccess<'a> for Items<'a, 'n> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        if let Within::AllBut(skipped) = &mut self.node.within {
            while let Some((first, rest)) = skipped.split_first() {
                match (*first as usize).cmp(&self.next) {
                    std::cmp::Ordering::Less => *skipped = rest,
                    std::cmp::Ordering::Equal => {
                        *skipped = rest;
                        self.next += 1;
                    }
                    std::cmp::Ordering::Greater => break,
                }
            }
        }
        if self.next >= self.end {
            return Ok(None);
        }
        let item = self.node.child(self.next);
        self.next += 1;
        let _down = self.node.reading.descend()?;
        seed.deserialize(item).map(Some)
    }

    // Told, so a `Vec` is made at its size once instead of grown (serde caps what it trusts);
    // not where items are left out, most of them perhaps.
    fn size_hint(&self) -> Option<usize> {
        (!matches!(self.node.within, Within::AllBut(_))).then(|| self.end.saturating_sub(self.next))
    }
}

/// A table's keys and values.
struct Entries<'a, 'n> {
    node: Node<'a, 'n>,
    next: usize,
    end: usize,
}

impl<'a, 'n> de::MapAccess<'a> for Entries<'a, 'n> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        while self.next < self.end && self.node.leaves(self.next)? {
            self.next += 2;
        }
        if self.next >= self.end {
            return Ok(None);
        }
        let _down = self.node.reading.descend()?;
        seed.deserialize(self.node.child(self.next)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let mut value = self.node.child(self.next + 1);
        if let Within::Root = self.node.within {
            let leave = &self.node.reading.leave;
            if let Some((table, entry)) = leave.all_but {
                if self.node.key(self.next)? == table {
                    value.within = Within::Only(entry);
                }
            }
            if let Some((array, nodes)) = leave.items {
                if self.node.key(self.next)? == array {
                    value.within = Within::AllBut(nodes);
                }
            }
        }
        self.next += 2;
        let _down = self.node.reading.descend()?;
        seed.deserialize(value)
    }

    // An upper bound where keys are left out; serde only reserves from it.
    fn size_hint(&self) -> Option<usize> {
        Some(self.end.saturating_sub(self.next) / 2)
    }
}

/// An enum written as a table of one key.
struct Variant<'a, 'n> {
    key: Node<'a, 'n>,
    value: Node<'a, 'n>,
}

impl<'a, 'n> de::EnumAccess<'a> for Variant<'a, 'n> {
    type Error = Error;
    type Variant = Node<'a, 'n>;

    fn variant_seed<V: DeserializeSeed<'a>>(self, seed: V) -> Result<(V::Value, Node<'a, 'n>), Error> {
        Ok((seed.deserialize(self.key)?, self.value))
    }
}

impl<'a, 'n> de::VariantAccess<'a> for Node<'a, 'n> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.raw()? {
            [ARRAY | TABLE, _, 0, _, _] => Ok(()),
            _ => Err(Error("wanted an empty table".into())),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'a>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'a>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.raw()? {
            [ARRAY, _, n, _, _] if n as usize == len => de::Deserializer::deserialize_seq(self, visitor),
            _ => Err(Error(format!("wanted an array of {len}"))),
        }
    }

    // As toml: a struct variant's table holds none but the variant's keys.
    fn struct_variant<V: Visitor<'a>>(self, fields: &'static [&'static str], visitor: V) -> Result<V::Value, Error> {
        if let [TABLE, first, count, _, _] = self.raw()? {
            let first = self.first_child(first, count)?;
            for i in 0..count as usize {
                // Counted: a forged tree could have many variants share one long table.
                self.reading.step()?;
                let [_, a, b, _, _] = self.child(first + 2 * i).raw()?;
                let key = self.text(a, b)?;
                if !fields.contains(&key) {
                    return Err(Error(format!("unexpected key `{key}`")));
                }
            }
        }
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}

/// What a selection reads of a shipped file, as the build read it, when `text` (borrowed from the
/// binary: a copy or a change is read as any file is) is the embedded text itself. Telling is a
/// comparison of two addresses: the text is not read. `place` is where the file is likely to be
/// in [`FILES`] (its place in a shipped source, which holds them in the same order); elsewhere
/// it is searched for.
pub(crate) fn facts(place: usize, relative: &str, text: &'static str) -> Option<Facts> {
    let at = match FILES.get(place) {
        Some((path, _)) if *path == relative => place,
        _ => file_index(relative)?,
    };
    let (_, embedded) = FILES.get(at)?;
    std::ptr::eq(*embedded, text).then_some(())?;
    FACTS.get(at).copied()
}

/// A shipped document as the build parsed it, when `text` (the whole file, a mode's front
/// matter, the text before the command rules, one command rule) is one it parsed; `None` otherwise, and the
/// text is then parsed.
pub(crate) fn document<T: DeserializeOwned>(relative: &str, text: &str) -> Option<T> {
    document_without(relative, text, Leave::default())
}

/// As [`document`], without what `leave` names (see [`Tree::document_without`]).
pub(crate) fn document_without<T: DeserializeOwned>(relative: &str, text: &str, leave: Leave<'_>) -> Option<T> {
    let (tree, root) = built_document(relative, text)?;
    tree.document_without(root, leave)
}

/// Whether the shipped document `text` of `relative`, as the build parsed it, has a top-level
/// table `table` with an entry `key` (read from the nodes, the document not read).
pub(crate) fn has_entry(relative: &str, text: &str, table: &str, key: &str) -> bool {
    let Some((tree, root)) = built_document(relative, text) else {
        return false;
    };
    let reading = Reading::new(Leave::default(), tree);
    let table = tree.node(root as usize, &reading).entry(table);
    let table = table.and_then(|t| u32::try_from(t.at).ok());
    table
        .and_then(|t| tree.entries(t))
        .is_some_and(|mut entries| entries.any(|e| e.is_some_and(|(k, _)| k == key)))
}

/// The built tree and the root of the shipped document `text` of `relative`, when `text` is one
/// the build parsed.
fn built_document(relative: &str, text: &str) -> Option<(Tree<'static>, u32)> {
    let at = file_index(relative)?;
    let (_, whole) = FILES.get(at)?;
    let first = DOCUMENTS.partition_point(|(file, ..)| *file < at);
    let (_, _, _, root) = DOCUMENTS
        .get(first..)?
        .iter()
        .take_while(|(file, ..)| *file == at)
        .find(|(_, start, end, _)| {
            // The text a load hands over is the embedded one itself: its address tells, without
            // reading it; a copy is compared.
            end - start == text.len()
                && whole
                    .get(*start..*end)
                    .is_some_and(|w| std::ptr::eq(w.as_ptr(), text.as_ptr()) || w == text)
        })?;
    let tree = Tree {
        nodes: Nodes::Built(NODES),
        strings: STRINGS,
    };
    Some((tree, *root))
}

/// Whether a shipped document of `folder` may have the id `id`: one does, or one's id was not
/// read for certain by the build.
pub(crate) fn shipped_id(folder: &str, id: &str) -> bool {
    FILES
        .iter()
        .zip(FACTS)
        .any(|((path, _), (written, _))| path.split('/').next() == Some(folder) && written.is_none_or(|w| w == id))
}

/// The index in [`FILES`] (in the order of their paths, as the build sorts them) of `relative`.
fn file_index(relative: &str) -> Option<usize> {
    FILES.binary_search_by(|(path, _)| (*path).cmp(relative)).ok()
}
