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

/// The built tree: nodes `[kind, a, b, span start, span end]` and their strings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tree {
    pub(crate) nodes: &'static [[u32; 5]],
    pub(crate) strings: &'static str,
}

impl Tree {
    /// The document at `root`, when it reads as `T`.
    pub(crate) fn document<T: DeserializeOwned>(self, root: u32) -> Option<T> {
        T::deserialize(Node {
            tree: self,
            at: root as usize,
        })
        .ok()
    }
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
struct Node {
    tree: Tree,
    at: usize,
}

impl Node {
    fn raw(&self) -> Result<[u32; 5], Error> {
        self.tree.nodes.get(self.at).copied().ok_or_else(malformed)
    }

    fn span(&self) -> Result<Range<usize>, Error> {
        let [_, _, _, start, end] = self.raw()?;
        Ok(start as usize..end as usize)
    }

    fn text(&self, at: u32, len: u32) -> Result<&'static str, Error> {
        let (at, len) = (at as usize, len as usize);
        self.tree.strings.get(at..at + len).ok_or_else(malformed)
    }

    fn child(&self, at: usize) -> Node {
        Node { tree: self.tree, at }
    }
}

fn bits(a: u32, b: u32) -> u64 {
    (u64::from(a) << 32) | u64::from(b)
}

impl<'de> de::Deserializer<'de> for Node {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let [kind, a, b, _, _] = self.raw()?;
        match kind {
            STR => visitor.visit_str(self.text(a, b)?),
            INT => visitor.visit_i64(i64::from_ne_bytes(bits(a, b).to_ne_bytes())),
            FLOAT => visitor.visit_f64(f64::from_bits(bits(a, b))),
            BOOL => visitor.visit_bool(a != 0),
            ARRAY => visitor.visit_seq(Items {
                node: self,
                next: a as usize,
                end: a as usize + b as usize,
            }),
            TABLE => visitor.visit_map(Entries {
                node: self,
                next: a as usize,
                end: a as usize + 2 * b as usize,
            }),
            _ => Err(malformed()),
        }
    }

    // As toml: a key that is there is `Some` (an absent one is `None`).
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
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
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let [kind, a, b, _, _] = self.raw()?;
        match kind {
            STR => visitor.visit_enum(self.text(a, b)?.into_deserializer()),
            TABLE if b == 1 => visitor.visit_enum(Variant {
                key: self.child(a as usize),
                value: self.child(a as usize + 1),
            }),
            _ => Err(Error("wanted a string or a table of one key".into())),
        }
    }

    serde::forward_to_deserialize_any! {
        bool u8 u16 u32 u64 i8 i16 i32 i64 i128 u128 f32 f64 char str string seq
        bytes byte_buf map unit ignored_any unit_struct tuple_struct tuple identifier
    }
}

impl<'de> IntoDeserializer<'de, Error> for Node {
    type Deserializer = Node;

    fn into_deserializer(self) -> Node {
        self
    }
}

/// An array's items.
struct Items {
    node: Node,
    next: usize,
    end: usize,
}

impl<'de> de::SeqAccess<'de> for Items {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        if self.next >= self.end {
            return Ok(None);
        }
        let item = self.node.child(self.next);
        self.next += 1;
        seed.deserialize(item).map(Some)
    }
}

/// A table's keys and values.
struct Entries {
    node: Node,
    next: usize,
    end: usize,
}

impl<'de> de::MapAccess<'de> for Entries {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        if self.next >= self.end {
            return Ok(None);
        }
        seed.deserialize(self.node.child(self.next)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self.node.child(self.next + 1);
        self.next += 2;
        seed.deserialize(value)
    }
}

/// An enum written as a table of one key.
struct Variant {
    key: Node,
    value: Node,
}

impl<'de> de::EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = Node;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Node), Error> {
        Ok((seed.deserialize(self.key)?, self.value))
    }
}

impl<'de> de::VariantAccess<'de> for Node {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.raw()? {
            [ARRAY | TABLE, _, 0, _, _] => Ok(()),
            _ => Err(Error("wanted an empty table".into())),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.raw()? {
            [ARRAY, _, n, _, _] if n as usize == len => de::Deserializer::deserialize_seq(self, visitor),
            _ => Err(Error(format!("wanted an array of {len}"))),
        }
    }

    // As toml: a struct variant's table holds none but the variant's keys.
    fn struct_variant<V: Visitor<'de>>(self, fields: &'static [&'static str], visitor: V) -> Result<V::Value, Error> {
        if let [TABLE, first, count, _, _] = self.raw()? {
            for i in 0..count as usize {
                let [_, a, b, _, _] = self.child(first as usize + 2 * i).raw()?;
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
/// comparison of two addresses: the text is not read.
pub(crate) fn facts(relative: &str, text: &'static str) -> Option<Facts> {
    let at = FILES.iter().position(|(path, _)| *path == relative)?;
    let (_, embedded) = FILES.get(at)?;
    std::ptr::eq(*embedded, text).then_some(())?;
    FACTS.get(at).copied()
}

/// A shipped document as the build parsed it, when `text` (the whole file, a mode's front
/// matter, the text before the command rules, one command rule) is one it parsed; `None` otherwise, and the
/// text is then parsed.
pub(crate) fn document<T: DeserializeOwned>(relative: &str, text: &str) -> Option<T> {
    let at = FILES.iter().position(|(path, _)| *path == relative)?;
    let (_, whole) = FILES.get(at)?;
    let (_, _, _, root) = DOCUMENTS.iter().find(|(file, start, end, _)| {
        *file == at && end - start == text.len() && whole.get(*start..*end) == Some(text)
    })?;
    Tree {
        nodes: NODES,
        strings: STRINGS,
    }
    .document(*root)
}
