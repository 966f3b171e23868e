//! Pin types and the validation of their configurations.
//!
//! Each pin type lives in its own file as plain serde structs with
//! `#[serde(deny_unknown_fields)]` plus a [`PinConfig::check`] for the rules
//! serde cannot express. Adding a type means adding a file, a [`PinType`]
//! variant, its wire name and a `validate` arm.

pub mod flexible_table;
pub mod stat_cards;

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A known pin type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PinType {
    /// Row of headline numbers (`stat-cards`).
    StatCards,
    /// Table with typed columns (`flexible-table`).
    FlexibleTable,
}

impl PinType {
    /// Every known pin type, in the order they are listed to users.
    pub const ALL: &'static [PinType] = &[PinType::StatCards, PinType::FlexibleTable];

    /// The wire name, e.g. `"stat-cards"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PinType::StatCards => "stat-cards",
            PinType::FlexibleTable => "flexible-table",
        }
    }

    /// Looks a pin type up by its exact wire name.
    pub fn parse(s: &str) -> Option<PinType> {
        Self::ALL.iter().copied().find(|t| t.as_str() == s)
    }

    /// Human list of accepted names for error messages: "stat-cards, flexible-table".
    pub fn expected_list() -> String {
        let names: Vec<&str> = Self::ALL.iter().map(|t| t.as_str()).collect();
        names.join(", ")
    }
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Path inside the configuration, e.g. "cards[0].trend", "rows[2].cells.price", "" for the root.
    pub path: String,
    /// What was expected there, short human text, e.g. "one of up, down, flat".
    pub expected: String,
}

impl ConfigError {
    pub(crate) fn new(path: impl Into<String>, expected: impl Into<String>) -> Self {
        ConfigError {
            path: path.into(),
            expected: expected.into(),
        }
    }

    /// Joins `prefix` (e.g. "pin_config" or "pins[2].content") with the path:
    /// "pin_config.cards[0].trend"; an empty path gives `prefix` alone and a
    /// path starting with "[" is appended without a dot.
    pub fn field(&self, prefix: &str) -> String {
        if self.path.is_empty() {
            prefix.to_owned()
        } else if prefix.is_empty() || self.path.starts_with('[') {
            format!("{prefix}{}", self.path)
        } else {
            format!("{prefix}.{}", self.path)
        }
    }
}

/// Parses and checks a configuration for `pin_type`. Ok means it is fully valid.
pub fn validate(pin_type: PinType, config: &Value) -> Result<(), ConfigError> {
    match pin_type {
        PinType::StatCards => parse::<stat_cards::StatCardsConfig>(config)?.check(),
        PinType::FlexibleTable => parse::<flexible_table::FlexibleTableConfig>(config)?.check(),
    }
}

/// A pin type's configuration: its serde structure plus the remaining rules.
trait PinConfig: DeserializeOwned {
    /// Checks the rules the serde structure cannot express, in document order.
    fn check(&self) -> Result<(), ConfigError>;
}

/// Refuses `text` when it is longer than `max` characters.
fn max_chars(path: impl FnOnce() -> String, text: &str, max: usize) -> Result<(), ConfigError> {
    if text.chars().count() > max {
        return Err(ConfigError::new(
            path(),
            format!("at most {max} characters"),
        ));
    }
    Ok(())
}

/// One step of a path inside a configuration.
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Deserializes `T`, turning serde's error into a [`ConfigError`] that names the exact
/// path and what was expected there. Request bodies use it too.
pub(crate) fn parse<T: DeserializeOwned>(config: &Value) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(config).map_err(|err| {
        let mut path = steps(err.path());
        let message = err.inner().to_string();
        let expected = if let Some(field) = quoted(&message, "missing field `") {
            // serde points at the containing object; point at the field and ask
            // serde what it would have accepted there.
            path.push(Step::Key(field.to_owned()));
            let raw = expected_at::<T>(config, &path, Value::Null);
            let raw = raw.unwrap_or_else(|| "a value".to_owned());
            format!("{} (required)", humanize::<T>(config, &path, raw))
        } else if message.starts_with("unknown field `") {
            let allowed = message
                .rsplit_once(", expected ")
                .map_or("none", |(_, a)| a);
            let allowed = allowed.trim_start_matches("one of ").replace('`', "");
            format!("no such field (allowed: {allowed})")
        } else {
            humanize::<T>(config, &path, expected_part(&message).to_owned())
        };
        ConfigError::new(render(&path), expected)
    })
}

/// Rewrites serde's "expected" text (e.g. "a sequence") as short human text.
fn humanize<T: DeserializeOwned>(config: &Value, path: &[Step], raw: String) -> String {
    // serde_json says "string or map" for any enum; a string placeholder makes
    // serde name the variants instead.
    let raw = match raw.as_str() {
        "string or map" => expected_at::<T>(config, path, Value::String(String::new())),
        _ => None,
    }
    .unwrap_or(raw);
    match raw.as_str() {
        "a sequence" => "a JSON array".to_owned(),
        "a map" => "a JSON object".to_owned(),
        s if s.starts_with("struct ") => "a JSON object".to_owned(),
        s => s.replace('`', ""),
    }
}

/// Raw serde "expected" text for the value at `path` once replaced (or
/// inserted) by `placeholder`; `None` if serde then fails elsewhere.
fn expected_at<T: DeserializeOwned>(
    config: &Value,
    path: &[Step],
    placeholder: Value,
) -> Option<String> {
    let mut probe = config.clone();
    let slot = path.iter().try_fold(&mut probe, |value, step| match step {
        Step::Key(key) => Some(
            value
                .as_object_mut()?
                .entry(key.as_str())
                .or_insert(Value::Null),
        ),
        Step::Index(index) => value.as_array_mut()?.get_mut(*index),
    })?;
    *slot = placeholder;
    let err = serde_path_to_error::deserialize::<_, T>(&probe).err()?;
    (steps(err.path()) == path).then(|| expected_part(&err.inner().to_string()).to_owned())
}

/// The part of a serde message after its last ", expected ", or all of it.
fn expected_part(message: &str) -> &str {
    message
        .rsplit_once(", expected ")
        .map_or(message, |(_, e)| e)
}

/// The text between `prefix` and the next backtick.
fn quoted<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    message.strip_prefix(prefix)?.split('`').next()
}

fn steps(path: &serde_path_to_error::Path) -> Vec<Step> {
    use serde_path_to_error::Segment;
    path.iter()
        .map(|segment| match segment {
            Segment::Seq { index } => Step::Index(*index),
            Segment::Map { key } | Segment::Enum { variant: key } => Step::Key(key.clone()),
            Segment::Unknown => Step::Key("?".to_owned()),
        })
        .collect()
}

/// Formats a path as "cards[0].trend"; the root is "".
fn render(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pin_type_names_round_trip() {
        for &t in PinType::ALL {
            assert_eq!(PinType::parse(t.as_str()), Some(t));
        }
        assert_eq!(PinType::parse("Stat-Cards"), None);
        assert_eq!(PinType::parse(""), None);
        assert_eq!(PinType::expected_list(), "stat-cards, flexible-table");
    }

    #[test]
    fn field_joins_prefix_and_path() {
        let err = |path: &str| ConfigError::new(path, "x");
        assert_eq!(
            err("cards[0].trend").field("pin_config"),
            "pin_config.cards[0].trend"
        );
        assert_eq!(err("").field("pins[2].content"), "pins[2].content");
        assert_eq!(err("[1]").field("pins"), "pins[1]");
        assert_eq!(err("cards").field(""), "cards");
    }

    #[test]
    fn root_must_be_an_object() {
        for pin_type in PinType::ALL {
            for config in [json!([]), json!("x"), json!(null), json!(1)] {
                let err = validate(*pin_type, &config).unwrap_err();
                assert_eq!(err, ConfigError::new("", "a JSON object"));
            }
        }
    }
}
