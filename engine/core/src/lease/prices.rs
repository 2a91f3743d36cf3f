//! The price table: what a model's tokens cost, per million tokens, by model id — data in a
//! policy's `[settings.prices]` (the shipped `policies/prices.toml`), never code.

use super::Tokens;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The id of the policy that holds the shipped price table (always loaded, however little of
/// the bundle a judgement needs).
pub const POLICY: &str = "prices";

/// The settings key a policy gives its price table under.
pub const SETTING: &str = "prices";

/// One model's prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Input tokens read from the cache.
    pub cache_read: f64,
    /// Input tokens written to the cache.
    pub cache_write: f64,
}

/// A price table as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    /// The day the prices were read from the vendors' price lists.
    date: String,
    /// Prices by model id.
    #[serde(default)]
    models: BTreeMap<String, Price>,
}

/// The prices a bundle holds; a table that cannot be read prices nothing (every cents lease
/// then refuses: it is never guessed).
#[derive(Debug, Clone, Default)]
pub struct Prices {
    /// Prices by model id.
    pub models: BTreeMap<String, Price>,
    /// The dates of the tables read.
    pub dates: Vec<String>,
    /// Why a table could not be read, where one could not.
    pub broken: Option<String>,
}

impl Prices {
    /// The price tables of policies, each given by its id and its `[settings]` (a table under
    /// [`SETTING`]), in order: a later one's model replaces an earlier one's.
    pub fn of<'a>(policies: impl IntoIterator<Item = (&'a str, &'a serde_json::Value)>) -> Prices {
        let mut prices = Prices::default();
        for (id, settings) in policies {
            let Some(table) = settings.get(SETTING) else {
                continue;
            };
            match Table::deserialize(table) {
                Ok(table) => {
                    prices.dates.push(table.date);
                    prices.models.extend(table.models);
                }
                Err(e) => {
                    prices.broken = Some(format!("the price table of policy `{id}` cannot be read: {e}"));
                }
            }
        }
        prices
    }

    /// What `tokens` of `model` cost, in cents; `Err` says why that is unknown.
    ///
    /// ```
    /// use sixfold_core::lease::{prices::Price, Prices, Tokens};
    /// let mut prices = Prices::default();
    /// prices.models.insert("m".into(), Price { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 });
    /// let t = Tokens { input: 1_000_000, output: 100_000, cache_read: 0, cache_write: 0 };
    /// assert_eq!(prices.cents("m", &t), Ok(450.0));
    /// assert!(prices.cents("other", &t).is_err());
    /// ```
    pub fn cents(&self, model: &str, tokens: &Tokens) -> Result<f64, String> {
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        // INVARIANT (fail closed): a model the table does not price costs an unknown amount.
        let Some(p) = self.models.get(model) else {
            return Err(format!(
                "the model `{model}` has no price in the price table (policies/prices.toml)"
            ));
        };
        let dollars = (tokens.input as f64 * p.input
            + tokens.output as f64 * p.output
            + tokens.cache_read as f64 * p.cache_read
            + tokens.cache_write as f64 * p.cache_write)
            / 1_000_000.0;
        Ok(dollars * 100.0)
    }
}
