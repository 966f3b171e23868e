//! `markdown`: text in Markdown, rendered sanitised.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::max_chars;
use super::{ConfigError, PinConfig};

/// Longest text, in characters: at 4 UTF-8 bytes each at most 200 000 bytes,
/// within the 256 KiB limit on a whole configuration.
const MAX_TEXT: usize = 50_000;

/// Markdown text, rendered sanitised: raw HTML never reaches a page.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkdownConfig {
    /// CommonMark text, at most 50000 characters.
    #[schemars(length(max = MAX_TEXT))]
    pub text: String,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"text": "## Deploy checklist\n\n- [x] Migrations\n- [ ] Feature flag\n\nSee the \
                    [runbook](https://example.com/runbook)."})
}

impl PinConfig for MarkdownConfig {
    fn check(&self) -> Result<(), ConfigError> {
        max_chars(|| "text".to_owned(), &self.text, MAX_TEXT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::tests::assert_refusals;
    use crate::pin_types::{validate, PinType};

    #[test]
    fn accepts_empty_html_and_longest_text() {
        for text in [
            String::new(),
            "<script>x</script>".into(),
            "é".repeat(MAX_TEXT),
        ] {
            assert_eq!(
                validate(PinType::Markdown, &json!({ "text": text })),
                Ok(())
            );
        }
    }

    #[test]
    fn refusals() {
        let long = "x".repeat(MAX_TEXT + 1);
        assert_refusals(
            PinType::Markdown,
            vec![
                ("/text", Some(json!(1)), "text", "a string"),
                ("/text", None, "text", "a string (required)"),
                (
                    "/text",
                    Some(json!(long)),
                    "text",
                    "at most 50000 characters",
                ),
                (
                    "/html",
                    Some(json!("<b>")),
                    "html",
                    "no such field (allowed: text)",
                ),
            ],
        );
    }
}
