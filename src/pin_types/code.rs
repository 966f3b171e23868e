//! `code`: source code with a language for highlighting.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::max_chars;
use super::{ConfigError, PinConfig};

/// Longest code, in characters (see `markdown`'s text for the reasoning).
const MAX_CODE: usize = 50_000;
/// What a language name may be (also the schema's `pattern`).
const LANGUAGE_PATTERN: &str = "^[A-Za-z0-9+#._-]{1,50}$";

/// Source code with a language for highlighting.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeConfig {
    /// Language name for highlighting, e.g. "rust", "c++", "text" for none: 1 to
    /// 50 of A-Z, a-z, 0-9, `+`, `#`, `.`, `_`, `-`.
    #[schemars(regex(pattern = LANGUAGE_PATTERN))]
    pub language: String,
    /// The code, shown verbatim, at most 50000 characters.
    #[schemars(length(max = MAX_CODE))]
    pub code: String,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"language": "rust", "code": "fn main() {\n    println!(\"hello\");\n}\n"})
}

impl PinConfig for CodeConfig {
    fn check(&self) -> Result<(), ConfigError> {
        let language = &self.language;
        let allowed = |b: u8| b.is_ascii_alphanumeric() || b"+#._-".contains(&b);
        if !(1..=50).contains(&language.len()) || !language.bytes().all(allowed) {
            let expected = "1 to 50 of A-Z, a-z, 0-9, +, #, ., _, -";
            return Err(ConfigError::new("language", expected));
        }
        max_chars(|| "code".to_owned(), &self.code, MAX_CODE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::tests::assert_refusals;
    use crate::pin_types::{validate, PinType};

    #[test]
    fn accepts_languages() {
        for language in ["c++", "C#", "objective-c", "text", "x".repeat(50).as_str()] {
            let config = json!({"language": language, "code": ""});
            assert_eq!(validate(PinType::Code, &config), Ok(()), "{language}");
        }
    }

    #[test]
    fn refusals() {
        let long = "x".repeat(MAX_CODE + 1);
        let mut cases = vec![
            ("/code", Some(json!(null)), "code", "a string"),
            ("/code", None, "code", "a string (required)"),
            (
                "/code",
                Some(json!(long)),
                "code",
                "at most 50000 characters",
            ),
            ("/language", None, "language", "a string (required)"),
            (
                "/lines",
                Some(json!(true)),
                "lines",
                "no such field (allowed: language, code)",
            ),
        ];
        for language in ["", "c plus", "<b>", "é", &"x".repeat(51)] {
            cases.push((
                "/language",
                Some(json!(language)),
                "language",
                "1 to 50 of A-Z",
            ));
        }
        assert_refusals(PinType::Code, cases);
    }
}
