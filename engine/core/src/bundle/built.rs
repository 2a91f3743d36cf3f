//! The shipped documents as the build parsed them (`build.rs`), read into the formats without
//! parsing TOML again: a tree of integer nodes and the strings they hold, inside the binary.
//!
//! It answers serde as toml's own deserializer answers for the same document (the same spans,
//! the same enum and option rules), so a document read from it is the one its TOML gives; the
//! core's tests check that for every shipped document. Anything it cannot answer is an error,
//! and the document is then parsed from its text.

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use std::fmt;
use std::ops::Range;

const STR: u32 = 0;
const INT: u32 = 1;
const FLOAT: u32 = 2;
const BOOL: u32 = 3;
const ARRAY: u32 = 4;
const TABLE: u32 = 5;

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

#[cfg(test)]
mod tests {
    use super::super::parsed::ParsedDoc;
    use super::super::read::{built, front_matter};
    use super::super::written::{adds_to_the_whole_bundle, written_id};
    use crate::bundle::{Bundle, Needs};
    use crate::format::{ModeFile, PatternFile, PolicyFile, ProviderFile};
    use crate::shipped::{FACTS, FILES};
    use std::borrow::Cow;

    /// The text a load parses of a shipped file: a mode's front matter, the text before the
    /// command rules when they are cut, else the whole file.
    fn as_loaded<'a>(relative: &str, whole: &'a str) -> &'a str {
        if relative.ends_with(".md") {
            return front_matter(whole).unwrap().0;
        }
        match crate::classify::shipped_commands_cut() {
            Some((text, first, _)) if relative == "policies/commands.toml" && text == whole => &whole[..first],
            _ => whole,
        }
    }

    fn parsed(kind: &str, text: &str) -> Result<ParsedDoc, toml::de::Error> {
        match kind {
            "modes" => toml::from_str::<ModeFile>(text).map(ParsedDoc::Mode),
            "policies" => toml::from_str::<PolicyFile>(text).map(ParsedDoc::Policy),
            "patterns" => toml::from_str::<PatternFile>(text).map(ParsedDoc::Pattern),
            "providers" => toml::from_str::<ProviderFile>(text).map(|p| ParsedDoc::Provider(Box::new(p))),
            other => panic!("{other}"),
        }
    }

    /// The compact form holds every value with its place: equal bytes, equal documents.
    fn compact(doc: &ParsedDoc) -> Vec<u8> {
        let mut bytes = Vec::new();
        ciborium::into_writer(doc, &mut bytes).unwrap();
        bytes
    }

    /// Every shipped document is built, and reads from the build as it parses from its TOML,
    /// spans and all (so diagnostics that point into it are the same).
    #[test]
    fn every_shipped_document_reads_from_the_build_as_from_its_toml() {
        let mut documents = 0;
        for (relative, whole) in FILES {
            if relative.ends_with(".rhai") {
                continue;
            }
            let kind = relative.split('/').next().unwrap();
            let text = as_loaded(relative, whole);
            let from_build = built(kind, relative, text).unwrap_or_else(|| panic!("{relative} is not built"));
            let from_toml = parsed(kind, text).unwrap();
            assert_eq!(compact(&from_build), compact(&from_toml), "{relative}");
            assert_eq!(format!("{from_build:?}"), format!("{from_toml:?}"), "{relative}");
            // Any other text, even the same with a byte more, is parsed.
            assert!(built(kind, relative, &format!("{text}\n")).is_none(), "{relative}");
            documents += 1;
        }
        assert!(documents > 30, "{documents}");
    }

    /// What the build read of each shipped file for a selection is what a selection reads of
    /// the same text now; a changed text is read afresh.
    #[test]
    fn the_builds_reading_of_each_shipped_file_is_the_runtime_reading() {
        assert_eq!(FILES.len(), FACTS.len());
        for ((relative, text), facts) in FILES.iter().zip(FACTS) {
            assert_eq!(*facts, (written_id(text), adds_to_the_whole_bundle(text)), "{relative}");
            assert_eq!(crate::shipped::facts(relative, text), Some(*facts), "{relative}");
            // A copy, equal or not, is read as any file is.
            let copy: &'static str = Box::leak(text.to_string().into_boxed_str());
            assert_eq!(crate::shipped::facts(relative, copy), None, "{relative}");
            assert_eq!(crate::shipped::facts(relative, &text[1..]), None, "{relative}");
        }
        assert_eq!(crate::shipped::facts("modes/none.toml", ""), None);
        // A shipped source's own files are the embedded texts; one changed is owned.
        let mut shipped = crate::shipped::source();
        assert!(shipped.files.values().all(|t| matches!(t, Cow::Borrowed(_))));
        shipped
            .files
            .insert("modes/ask.toml".into(), String::from("id = \"ask\"").into());
        assert!(matches!(shipped.files.get("modes/ask.toml"), Some(Cow::Owned(_))));
    }

    /// A shipped source whose files were changed (a test's, an embedder's) loads what its files
    /// say, never what the build read of the embedded ones: a changed mode, a policy that now adds
    /// to the whole bundle.
    #[test]
    fn a_changed_shipped_file_is_read_from_its_text() {
        let mut shipped = crate::shipped::source();
        let ask = shipped.files.get("modes/ask.toml").unwrap().clone();
        let changed = ask.replacen("description = ", "description = \"changed\"\nx_description = ", 1);
        assert_ne!(changed, ask);
        shipped.files.insert("modes/ask.toml".into(), changed.into());
        let (_, diagnostics) = Bundle::load_for(&[shipped.clone()], &Needs::mode("ask"));
        assert!(
            diagnostics.iter().any(|d| d.to_string().contains("x_description")),
            "{diagnostics:?}"
        );
        // Stays ok: the same source unchanged loads clean.
        let (bundle, diagnostics) = Bundle::load_for(&[crate::shipped::source()], &Needs::mode("ask"));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert!(bundle.mode("ask").is_some());

        // A policy no mode includes, changed to add command rules: read, and its rule applies.
        let (relative, text) = FILES
            .iter()
            .zip(FACTS)
            .find(|((path, _), (id, whole))| {
                path.starts_with("policies/") && path.ends_with(".toml") && id.is_some() && !whole
            })
            .map(|(file, _)| *file)
            .unwrap();
        let mut shipped = crate::shipped::source();
        shipped.files.insert(
            relative.to_string(),
            format!("{text}\n[[commands]]\nid = \"added-here\"\nprefix = [\"zzz-added\"]\nreaches = true\n").into(),
        );
        let (bundle, _) = Bundle::load_for(&[shipped], &Needs::mode("ask"));
        let classified = bundle.classify("zzz-added now", std::path::Path::new("/tmp"));
        assert!(format!("{classified:?}").contains("added-here"), "{classified:?}");
    }
}
