//! `image`: a picture from an http(s) URL.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{max_chars_each, web_url};
use super::{ConfigError, PinConfig};

/// A picture from an http(s) URL with optional alt text and caption.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageConfig {
    /// Absolute `http` or `https` URL of the picture, at most 2048 characters (the
    /// pattern states the scheme; the service also checks that it parses, with a host).
    #[schemars(url, regex(pattern = super::rules::WEB_URL_PATTERN), length(max = super::rules::MAX_URL_CHARS))]
    pub url: String,
    /// Text for readers who cannot see the picture, at most 500 characters.
    #[schemars(length(max = 500))]
    pub alt: Option<String>,
    /// Caption under the picture, at most 500 characters.
    #[schemars(length(max = 500))]
    pub caption: Option<String>,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"url": "https://example.com/charts/traffic.png", "alt": "Traffic by hour",
           "caption": "Last 24 hours"})
}

impl PinConfig for ImageConfig {
    fn check(&self) -> Result<(), ConfigError> {
        web_url(|| "url".to_owned(), &self.url)?;
        let texts = [
            ("alt", self.alt.as_deref(), 500),
            ("caption", self.caption.as_deref(), 500),
        ];
        max_chars_each("", texts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::tests::assert_refusals;
    use crate::pin_types::PinType;

    #[test]
    fn refusals() {
        let mut cases = vec![
            ("/url", None, "url", "a string (required)"),
            ("/url", Some(json!({"href": "x"})), "url", "a string"),
            (
                "/alt",
                Some(json!("x".repeat(501))),
                "alt",
                "at most 500 characters",
            ),
            ("/caption", Some(json!(false)), "caption", "a string"),
            (
                "/width",
                Some(json!(100)),
                "width",
                "no such field (allowed: url, alt, caption)",
            ),
        ];
        for url in [
            "javascript:alert(1)",
            "data:image/png;base64,AA",
            "/img.png",
            "ftp://x.org/a",
        ] {
            cases.push((
                "/url",
                Some(json!(url)),
                "url",
                "an absolute http or https URL",
            ));
        }
        assert_refusals(PinType::Image, cases);
    }
}
