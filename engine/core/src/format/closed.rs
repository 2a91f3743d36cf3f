//! Unknown keys refused in a table that flattens another one in.

use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, MapAccess, Visitor};
use std::fmt;

/// The keys of a table left once its fields are read: any is an error naming it. A table that
/// flattens [`crate::effects::EffectFields`] in holds one of these, because
/// `#[serde(deny_unknown_fields)]` does not combine with `#[serde(flatten)]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoOtherKeys;

impl<'de> Deserialize<'de> for NoOtherKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<NoOtherKeys, D::Error> {
        deserializer.deserialize_map(Refuse)
    }
}

struct Refuse;

impl<'de> Visitor<'de> for Refuse {
    type Value = NoOtherKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no other keys")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoOtherKeys, A::Error> {
        match map.next_key::<String>()? {
            // INVARIANT (fail closed): a misspelt key is an error, never a silently ignored condition.
            Some(key) => Err(A::Error::custom(format!("unknown field `{key}`"))),
            None => {
                // Nothing left; drain defensively so a deserializer that counts entries is content.
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(NoOtherKeys)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::format::ToolFile;

    #[test]
    fn a_flattened_table_still_refuses_unknown_keys() {
        let tool: ToolFile = toml::from_str("reads = [\"{file_path}\"]\ncommand = \"c\"").unwrap();
        assert_eq!(tool.effects.reads, Some(vec!["{file_path}".to_string()]));
        assert_eq!(tool.command.as_deref(), Some("c"));
        let err = toml::from_str::<ToolFile>("writez = []").unwrap_err();
        assert!(err.message().contains("unknown field `writez`"), "{err}");
    }
}
