//! The index an entry keeps beside a tree whose rules one judgement's load leaves unread
//! (`UnreadRules::index`, `UnreadActs::index`): little-endian words, the first the tree's length
//! in bytes, then a text. Written when the tree is stored, read at every load of it, and
//! untrusted like the rest of the entry.

use super::parsed::Whole;

/// The index of a tree `tree_len` bytes long: `words`, then `text`.
pub(crate) fn write(tree_len: usize, words: &[u32], text: &str) -> Vec<u8> {
    let len = u32::try_from(tree_len).unwrap_or(u32::MAX);
    let mut bytes: Vec<u8> = std::iter::once(&len)
        .chain(words)
        .flat_map(|w| w.to_le_bytes())
        .collect();
    bytes.extend_from_slice(text.as_bytes());
    bytes
}

/// The `nth` of the pieces `text` is cut into, the `i`th ending at `end(i)`: a rule's first word,
/// a glob's literal start.
pub(crate) fn piece(text: &str, nth: usize, end: impl Fn(usize) -> Option<u32>) -> Option<&str> {
    let from = match nth.checked_sub(1) {
        Some(before) => end(before)? as usize,
        None => 0,
    };
    text.get(from..end(nth)? as usize)
}

/// An index being read, word by word.
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// The index `index`, when it was made for a tree as long as `whole`: a tree cut or grown
    /// since (a torn or forged entry) is not the one indexed.
    pub(crate) fn of(index: &'a [u8], whole: &Whole) -> Option<Reader<'a>> {
        let mut reader = Reader { rest: index };
        (reader.word()? as usize == whole.len()).then_some(reader)
    }

    /// The next word.
    pub(crate) fn word(&mut self) -> Option<u32> {
        let (word, rest) = self.rest.split_first_chunk::<4>()?;
        self.rest = rest;
        Some(u32::from_le_bytes(*word))
    }

    /// The next `count` words.
    pub(crate) fn words(&mut self, count: usize) -> Option<Vec<u32>> {
        // Bounded by what is left before anything is reserved.
        if count > self.rest.len() / 4 {
            return None;
        }
        (0..count).map(|_| self.word()).collect()
    }

    /// Whether exactly `words` words and a text of `text` bytes are left: checked before a
    /// count read from the index reserves anything.
    pub(crate) fn holds(&self, words: usize, text: usize) -> bool {
        words.checked_mul(4).and_then(|bytes| bytes.checked_add(text)) == Some(self.rest.len())
    }

    /// The text after the words, when it is UTF-8.
    pub(crate) fn text(self) -> Option<&'a str> {
        std::str::from_utf8(self.rest).ok()
    }
}
