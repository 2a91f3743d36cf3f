//! A TOML document built into the tree `built` reads: by the build script for the shipped
//! documents, and at run time for a stored parsed layer (`bundle::parsed`). One builder, so a
//! stored document reads exactly as a shipped one does.

use super::kinds::{ARRAY, BOOL, FLOAT, INT, STR, TABLE};
use std::collections::HashMap;
use toml::de::{DeArray, DeTable, DeValue};
use toml::Spanned;

/// Documents as parsed: nodes `[kind, a, b, span start, span end]` (a string is its place in
/// `strings`, a number its bits, an array or table the range of its children, a table's as key
/// then value; children always after their parent) and the strings they hold. Integers only, so
/// the binary carries no pointers (relocations) for the shipped ones.
#[derive(Default)]
pub(crate) struct Built {
    pub(crate) nodes: Vec<[u32; 5]>,
    pub(crate) strings: String,
    interned: HashMap<String, (u32, u32)>,
}

impl Built {
    /// A document's root node; `None` when it does not parse or holds what the built form does
    /// not carry (a date, a number out of range): it is then parsed when it loads.
    pub(crate) fn document(&mut self, text: &str) -> Option<u32> {
        self.document_without(text, "", &[])
    }

    /// As [`Built::document`], without the items at `places` (in order) of the top-level array
    /// `key`, each other node as parsed, spans and all: a mode or a policy without the rules one
    /// judgement's load leaves unread (`bundle::parsed`).
    pub(crate) fn document_without(&mut self, text: &str, key: &str, places: &[u32]) -> Option<u32> {
        let mut root = DeTable::parse(text).ok()?;
        if let (false, Some(DeValue::Array(items))) =
            (places.is_empty(), root.get_mut().get_mut(key).map(|v| v.get_mut()))
        {
            let all = std::mem::replace(items, DeArray::new());
            *items = (0u32..)
                .zip(all)
                .filter(|(place, _)| places.binary_search(place).is_err())
                .map(|(_, item)| item)
                .collect();
        }
        let slot = self.nodes.len();
        self.nodes.push([0; 5]);
        self.table(slot, root.get_ref(), root.span())?;
        u32::try_from(slot).ok()
    }

    fn string(&mut self, text: &str) -> Option<(u32, u32)> {
        if let Some(at) = self.interned.get(text) {
            return Some(*at);
        }
        let at = (u32::try_from(self.strings.len()).ok()?, u32::try_from(text.len()).ok()?);
        self.strings.push_str(text);
        self.interned.insert(text.to_string(), at);
        Some(at)
    }

    fn children(&mut self, count: usize) -> Option<(usize, u32)> {
        let first = self.nodes.len();
        self.nodes.extend(std::iter::repeat_n([0; 5], count));
        Some((first, u32::try_from(first).ok()?))
    }

    fn put(&mut self, slot: usize, kind: u32, a: u32, b: u32, span: std::ops::Range<usize>) -> Option<()> {
        let node = [
            kind,
            a,
            b,
            u32::try_from(span.start).ok()?,
            u32::try_from(span.end).ok()?,
        ];
        *self.nodes.get_mut(slot)? = node;
        Some(())
    }

    fn table(&mut self, slot: usize, table: &DeTable, span: std::ops::Range<usize>) -> Option<()> {
        let (first, at) = self.children(2 * table.len())?;
        for (i, (key, value)) in table.iter().enumerate() {
            let (a, b) = self.string(key.get_ref())?;
            self.put(first + 2 * i, STR, a, b, key.span())?;
            self.value(first + 2 * i + 1, value)?;
        }
        self.put(slot, TABLE, at, u32::try_from(table.len()).ok()?, span)
    }

    fn value(&mut self, slot: usize, value: &Spanned<DeValue>) -> Option<()> {
        let span = value.span();
        let (kind, a, b) = match value.get_ref() {
            DeValue::String(s) => {
                let (a, b) = self.string(s)?;
                (STR, a, b)
            }
            DeValue::Integer(i) => {
                let bits = i64::from_str_radix(i.as_str(), i.radix()).ok()?.to_ne_bytes();
                halves(u64::from_ne_bytes(bits))
            }
            DeValue::Float(f) => {
                let x: f64 = f.as_str().parse().ok()?;
                if !x.is_finite() {
                    return None;
                }
                let (_, a, b) = halves(x.to_bits());
                (FLOAT, a, b)
            }
            DeValue::Boolean(v) => (BOOL, u32::from(*v), 0),
            DeValue::Datetime(_) => return None,
            DeValue::Array(items) => {
                let (first, at) = self.children(items.len())?;
                for (i, item) in items.iter().enumerate() {
                    self.value(first + i, item)?;
                }
                (ARRAY, at, u32::try_from(items.len()).ok()?)
            }
            DeValue::Table(table) => return self.table(slot, table, span),
        };
        self.put(slot, kind, a, b, span)
    }
}

/// An integer node: the high and low halves of its bits.
fn halves(bits: u64) -> (u32, u32, u32) {
    let [a, b] = [bits >> 32, bits & 0xffff_ffff].map(|h| u32::try_from(h).unwrap_or_default());
    (INT, a, b)
}

impl Built {
    /// The tree as a stored parsed layer keeps it, for `built::Tree::stored` to read in place:
    /// the root, the node count, each node as five little-endian `u32`s, then the strings.
    pub(crate) fn stored(&self, root: u32) -> Option<Vec<u8>> {
        let count = u32::try_from(self.nodes.len()).ok()?;
        let mut out = Vec::with_capacity(8 + 20 * self.nodes.len() + self.strings.len());
        out.extend_from_slice(&root.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        for word in self.nodes.iter().flatten() {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend_from_slice(self.strings.as_bytes());
        Some(out)
    }
}
