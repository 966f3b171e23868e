//! [`ConfigError`] and [`parse`]: serde errors turned into an exact path and short
//! human text saying what was expected there.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::strict;

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Path inside the configuration, e.g. `cards[0].trend`, `rows[2].cells.price`, "" for the root.
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

    /// Joins `prefix` (e.g. `pin_config` or `pins[2].content`) with the path:
    /// `pin_config.cards[0].trend`; an empty path gives `prefix` alone and a
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

/// One step of a path inside a configuration.
#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Deserializes `T`, turning serde's error into a [`ConfigError`] that names the exact
/// path and what was expected there. Structs must be JSON objects (see
/// [`strict`]). Request bodies use it too.
pub(crate) fn parse<T: DeserializeOwned>(config: &Value) -> Result<T, ConfigError> {
    strict::deserialize(config).map_err(|err| {
        let mut path = steps(err.path());
        let message = err.inner().to_string();
        let expected = if let Some(field) = quoted(&message, "missing field `") {
            // serde points at the containing object; point at the field and ask
            // serde what it would have accepted there.
            path.push(Step::Key(field.to_owned()));
            let raw = expected_at::<T>(config, &path, Value::Null);
            // Only a field taking any JSON value (e.g. `json`'s `data`) accepts the null.
            let raw = raw.unwrap_or_else(|| "any JSON value".to_owned());
            format!("{} (required)", humanize::<T>(config, &path, raw))
        } else if message.starts_with("unknown field `") {
            let allowed = message
                .rsplit_once(", expected ")
                .map_or("none", |(_, a)| a);
            // serde says "`a`", "`a` or `b`" or "one of `a`, `b`, `c`".
            let allowed = allowed
                .trim_start_matches("one of ")
                .replace("` or `", ", ");
            let allowed = allowed.replace('`', "");
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
        "f64" | "f32" => "a number".to_owned(),
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
    let err = strict::deserialize::<T>(&probe).err()?;
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
    fn parse_reports_paths_and_expectations() {
        let err = parse::<Vec<f64>>(&serde_json::json!([1, "x"])).unwrap_err();
        assert_eq!(err, ConfigError::new("[1]", "a number"));
    }
}
