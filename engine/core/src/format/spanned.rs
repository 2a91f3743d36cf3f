//! A value with the place in its file it was written at: `toml::Spanned`, which also keeps its
//! place when a parsed layer is stored in the compact form (`bundle::parsed`), so diagnostics
//! from a stored layer point where the TOML's would.

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeTuple, Serializer};
use std::ops::{Deref, Range};

/// A value and its byte range in the TOML it was read from. Written back as people read it
/// (TOML, JSON) it is the value alone; in the compact form it is `(start, end, value)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Spanned<T>(toml::Spanned<T>);

impl<T> Spanned<T> {
    /// A value at a byte range.
    pub fn new(span: Range<usize>, value: T) -> Spanned<T> {
        Spanned(toml::Spanned::new(span, value))
    }

    /// The value.
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

impl<T> Deref for Spanned<T> {
    type Target = toml::Spanned<T>;

    fn deref(&self) -> &toml::Spanned<T> {
        &self.0
    }
}

impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return self.0.get_ref().serialize(serializer);
        }
        let span = self.0.span();
        let mut tuple = serializer.serialize_tuple(3)?;
        tuple.serialize_element(&span.start)?;
        tuple.serialize_element(&span.end)?;
        tuple.serialize_element(self.0.get_ref())?;
        tuple.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Spanned<T>, D::Error> {
        if deserializer.is_human_readable() {
            return toml::Spanned::<T>::deserialize(deserializer).map(Spanned);
        }
        let (start, end, value) = <(usize, usize, T)>::deserialize(deserializer)?;
        Ok(Spanned::new(start..end, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize, serde::Serialize)]
    struct Doc {
        name: Spanned<String>,
    }

    #[test]
    fn the_place_survives_the_compact_form_and_not_the_readable_one() {
        let doc: Doc = toml::from_str("# c\nname = \"x\"\n").unwrap();
        assert_eq!(doc.name.span(), 11..14);
        let mut bytes = Vec::new();
        ciborium::into_writer(&doc, &mut bytes).unwrap();
        let back: Doc = ciborium::from_reader(bytes.as_slice()).unwrap();
        assert_eq!(back.name.span(), 11..14);
        assert_eq!(back, doc);
        assert_eq!(serde_json::to_string(&doc).unwrap(), r#"{"name":"x"}"#);
    }
}
