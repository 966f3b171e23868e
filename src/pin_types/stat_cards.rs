//! `stat-cards`: a row of 1 to 12 headline numbers.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::max_chars_each;
use super::{ConfigError, PinConfig};

/// Most cards in one pin.
const MAX_CARDS: usize = 12;

/// A row of 1 to 12 headline numbers.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatCardsConfig {
    /// The cards, 1 to 12, shown in order.
    #[schemars(length(min = 1, max = MAX_CARDS))]
    pub cards: Vec<Card>,
}

/// One headline number.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Card {
    /// Label above the value, at most 200 characters.
    #[schemars(length(max = 200))]
    pub title: String,
    /// The value, already formatted (e.g. "€1.2M"), at most 200 characters.
    #[schemars(length(max = 200))]
    pub value: String,
    /// Change against a previous period (e.g. "+4%"), at most 50 characters.
    #[schemars(length(max = 50))]
    pub change: Option<String>,
    /// Direction of the change.
    pub trend: Option<Trend>,
    /// Which direction of the change is good, drawn green (default up; down for a
    /// latency or an error count).
    pub trend_good: Option<TrendGood>,
    /// Longer explanation, at most 1000 characters.
    #[schemars(length(max = 1000))]
    pub description: Option<String>,
}

/// Direction of a change (`stat-cards`, `kpi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Trend {
    /// Going up.
    Up,
    /// Going down.
    Down,
    /// Unchanged.
    Flat,
}

/// Which direction of a change is good (`stat-cards`, `kpi`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TrendGood {
    /// A rise is good (the default).
    #[default]
    Up,
    /// A fall is good.
    Down,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"cards": [
        {"title": "Revenue", "value": "€1.2M", "change": "+4%", "trend": "up",
         "description": "Month to date"},
        {"title": "Open tickets", "value": "17", "change": "-3", "trend": "down",
         "trend_good": "down"}
    ]})
}

impl PinConfig for StatCardsConfig {
    fn check(&self) -> Result<(), ConfigError> {
        if !(1..=MAX_CARDS).contains(&self.cards.len()) {
            return Err(ConfigError::new("cards", "1 to 12 cards"));
        }
        for (i, card) in self.cards.iter().enumerate() {
            max_chars_each(
                &format!("cards[{i}]"),
                [
                    ("title", Some(&*card.title), 200),
                    ("value", Some(&*card.value), 200),
                    ("change", card.change.as_deref(), 50),
                    ("description", card.description.as_deref(), 1000),
                ],
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::pin_types::{validate, ConfigError, PinType};
    use serde_json::{json, Value};

    fn card() -> Value {
        json!({"title": "Revenue", "value": "€1.2M", "change": "+4%", "trend": "up",
               "description": "Month to date"})
    }

    fn with_card(edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
        let mut card = card();
        if let Value::Object(map) = &mut card {
            edit(map);
        }
        json!({"cards": [{"title": "Users", "value": "42"}, card]})
    }

    fn refused(config: Value) -> ConfigError {
        validate(PinType::StatCards, &config).unwrap_err()
    }

    #[test]
    fn accepts_valid_config() {
        let minimal = json!({"cards": [{"title": "Users", "value": "42"}]});
        assert_eq!(validate(PinType::StatCards, &minimal), Ok(()));
        assert_eq!(validate(PinType::StatCards, &with_card(|_| ())), Ok(()));
        let twelve = json!({"cards": vec![card(); 12]});
        assert_eq!(validate(PinType::StatCards, &twelve), Ok(()));
    }

    #[test]
    fn card_count_is_1_to_12() {
        for cards in [vec![], vec![card(); 13]] {
            let err = refused(json!({ "cards": cards }));
            assert_eq!(err, ConfigError::new("cards", "1 to 12 cards"));
        }
    }

    #[test]
    fn unknown_fields_are_refused() {
        let err = refused(with_card(|c| {
            c.insert("colour".into(), json!("red"));
        }));
        assert_eq!(err.path, "cards[1].colour");
        assert_eq!(
            err.expected,
            "no such field (allowed: title, value, change, trend, trend_good, description)"
        );
        let err = refused(json!({"cards": [card()], "title": "x"}));
        assert_eq!(
            err,
            ConfigError::new("title", "no such field (allowed: cards)")
        );
    }

    #[test]
    fn missing_fields_are_reported_at_the_field() {
        let err = refused(with_card(|c| {
            c.remove("value");
        }));
        assert_eq!(
            err,
            ConfigError::new("cards[1].value", "a string (required)")
        );
        let err = refused(json!({}));
        assert_eq!(err, ConfigError::new("cards", "a JSON array (required)"));
    }

    #[test]
    fn wrong_types_are_refused() {
        let err = refused(with_card(|c| {
            c.insert("value".into(), json!(5));
        }));
        assert_eq!(err, ConfigError::new("cards[1].value", "a string"));
        let err = refused(json!({"cards": [card(), 5]}));
        assert_eq!(err, ConfigError::new("cards[1]", "a JSON object"));
        let err = refused(json!({"cards": {}}));
        assert_eq!(err, ConfigError::new("cards", "a JSON array"));
    }

    #[test]
    fn trend_must_be_a_known_variant() {
        for trend in [json!("sideways"), json!(5), json!("Up")] {
            let err = refused(with_card(|c| {
                c.insert("trend".into(), trend);
            }));
            assert_eq!(
                err,
                ConfigError::new("cards[1].trend", "one of up, down, flat")
            );
        }
    }

    #[test]
    fn trend_good_is_up_or_down() {
        let ok = with_card(|c| {
            c.insert("trend_good".into(), json!("down"));
        });
        assert_eq!(validate(PinType::StatCards, &ok), Ok(()));
        let err = refused(with_card(|c| {
            c.insert("trend_good".into(), json!("flat"));
        }));
        assert_eq!(err, ConfigError::new("cards[1].trend_good", "up or down"));
    }

    #[test]
    fn texts_are_length_limited() {
        for (field, max) in [
            ("title", 200),
            ("value", 200),
            ("change", 50),
            ("description", 1000),
        ] {
            let ok = with_card(|c| {
                c.insert(field.into(), json!("é".repeat(max)));
            });
            assert_eq!(validate(PinType::StatCards, &ok), Ok(()));
            let err = refused(with_card(|c| {
                c.insert(field.into(), json!("x".repeat(max + 1)));
            }));
            assert_eq!(err.path, format!("cards[1].{field}"));
            assert_eq!(err.expected, format!("at most {max} characters"));
        }
    }
}
