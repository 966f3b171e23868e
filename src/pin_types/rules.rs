//! Checks shared by several pin types' [`PinConfig::check`](super::PinConfig::check), and by
//! the checks of block bodies (`blocks::body`).
//!
//! Each returns the [`ConfigError`] naming the offending path; paths are built
//! lazily (`impl FnOnce() -> String`) so valid configurations allocate nothing.

use chrono::{DateTime, NaiveDate};

use super::ConfigError;

/// Longest accepted URL (`image`'s `url`, `list` items' `url`, image blocks' `url`), in
/// characters.
pub(crate) const MAX_URL_CHARS: usize = 2048;

/// What [`date`] accepts, for error messages.
pub(super) const DATE_EXPECTED: &str = "an ISO 8601 date: RFC 3339 date-time or YYYY-MM-DD";

/// The part of [`web_url`]'s rule a schema can state: an `http` or `https` scheme (any
/// case, after the blanks and control characters a URL parser skips), then more text. The
/// rest (a host, a parseable URL) is checked by the service.
pub(crate) const WEB_URL_PATTERN: &str = "^[\\x01-\\x20]*[Hh][Tt][Tt][Pp][Ss]?:[^\\x00]+$";

/// What [`web_url`] accepts, for error messages.
pub(crate) const URL_EXPECTED: &str = "an absolute http or https URL";

/// Refuses `text` when it is longer than `max` characters.
pub(crate) fn max_chars(
    path: impl FnOnce() -> String,
    text: &str,
    max: usize,
) -> Result<(), ConfigError> {
    if text.chars().count() > max {
        return Err(ConfigError::new(
            path(),
            format!("at most {max} characters"),
        ));
    }
    Ok(())
}

/// Refuses `text` when it is longer than `max` bytes.
pub(crate) fn max_bytes(
    path: impl FnOnce() -> String,
    text: &str,
    max: usize,
) -> Result<(), ConfigError> {
    if text.len() > max {
        return Err(ConfigError::new(path(), format!("at most {max} bytes")));
    }
    Ok(())
}

/// [`max_chars`] for several `(field, text, max)` of one object whose path is
/// `prefix` ("" for the root, "items[2]" for an element); absent texts pass.
pub(super) fn max_chars_each<const N: usize>(
    prefix: &str,
    fields: [(&str, Option<&str>, usize); N],
) -> Result<(), ConfigError> {
    for (name, text, max) in fields {
        if let Some(text) = text {
            max_chars(|| join(prefix, name), text, max)?;
        }
    }
    Ok(())
}

/// Refuses a list longer than `max`; `what` names its elements ("series").
pub(super) fn max_items(
    path: impl FnOnce() -> String,
    len: usize,
    max: usize,
    what: &str,
) -> Result<(), ConfigError> {
    if len > max {
        return Err(ConfigError::new(path(), format!("at most {max} {what}")));
    }
    Ok(())
}

/// Refuses NaN and the infinities. Plain `serde_json` cannot produce them, but a
/// number out of `f64` range turns into one under serde_json's
/// `arbitrary_precision` feature, and a renderer must never see one.
pub(super) fn finite(path: impl FnOnce() -> String, value: f64) -> Result<(), ConfigError> {
    if !value.is_finite() {
        return Err(ConfigError::new(path(), "a finite number"));
    }
    Ok(())
}

/// [`finite`] for every number of a list whose path is `path` (`series[1].data`);
/// `None` (JSON null, a gap) passes.
pub(super) fn all_finite(
    path: impl Fn() -> String,
    values: impl IntoIterator<Item = Option<f64>>,
) -> Result<(), ConfigError> {
    for (i, value) in values.into_iter().enumerate() {
        if let Some(value) = value {
            finite(|| format!("{}[{i}]", path()), value)?;
        }
    }
    Ok(())
}

/// Refuses `url` unless it is a web URL ([`parse_web_url`]) of at most [`MAX_URL_CHARS`]
/// characters.
pub(crate) fn web_url(path: impl Fn() -> String, url: &str) -> Result<(), ConfigError> {
    max_chars(&path, url, MAX_URL_CHARS)?;
    if !is_web_url(url) {
        return Err(ConfigError::new(path(), URL_EXPECTED));
    }
    Ok(())
}

/// Refuses `text` unless it is an RFC 3339 date-time or a `YYYY-MM-DD` date.
pub(super) fn date(path: impl FnOnce() -> String, text: &str) -> Result<(), ConfigError> {
    if !is_date(text) {
        return Err(ConfigError::new(path(), DATE_EXPECTED));
    }
    Ok(())
}

/// True for an RFC 3339 date-time or a real `YYYY-MM-DD` calendar date.
pub(super) fn is_date(s: &str) -> bool {
    let plain_date = s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    DateTime::parse_from_rfc3339(s).is_ok()
        || (plain_date && NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok())
}

/// `text` as a URL, normalised (anything unusual percent-encoded), when it is an absolute
/// `http` or `https` URL; None for anything else (`javascript:`, `data:`, `ftp:`, relative
/// paths, text that isn't a URL). The one test of a web URL: configurations, blocks,
/// provenance sources and the links and pictures of pages all ask it.
pub fn parse_web_url(text: &str) -> Option<url::Url> {
    url::Url::parse(text)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
}

/// True for a web URL ([`parse_web_url`]).
pub(super) fn is_web_url(text: &str) -> bool {
    parse_web_url(text).is_some()
}

/// "items[2]" + "title" gives "items[2].title"; "" + "title" gives "title".
pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_refuses_nan_and_infinities() {
        for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = finite(|| "value".into(), value).unwrap_err();
            assert_eq!(err, ConfigError::new("value", "a finite number"));
        }
        assert_eq!(finite(|| "value".into(), -1e308), Ok(()));
        let err = all_finite(|| "data".into(), [Some(1.0), None, Some(f64::NAN)]).unwrap_err();
        assert_eq!(err.path, "data[2]");
    }

    #[test]
    fn dates_and_urls() {
        for ok in [
            "2024-02-29",
            "2024-03-01T10:00:00Z",
            "2024-03-01T10:00:00.5+02:00",
        ] {
            assert!(is_date(ok), "{ok}");
        }
        for bad in [
            "2024-02-30",
            "2024-1-05",
            "yesterday",
            "2024-03-01 10:00",
            "",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
        assert!(is_web_url("https://example.com/a?b=c") && is_web_url("http://x.org"));
        for bad in [
            "javascript:alert(1)",
            "/relative",
            "ftp://x.org",
            "data:text/html,x",
        ] {
            assert!(!is_web_url(bad), "{bad}");
        }
        let long = format!("https://x.org/{}", "a".repeat(MAX_URL_CHARS));
        let err = web_url(|| "url".into(), &long).unwrap_err();
        assert_eq!(err.expected, "at most 2048 characters");
    }

    #[test]
    fn web_urls_are_absolute_http_or_https() {
        for (text, normalised) in [
            ("https://example.com/a?b=c", "https://example.com/a?b=c"),
            ("http://x.org", "http://x.org/"),
            ("HTTPS://Example.COM/A", "https://example.com/A"),
            ("https://x.org/a b\"<>", "https://x.org/a%20b%22%3C%3E"),
            (" https://x.org/ ", "https://x.org/"),
            ("http://[::1]:8080/p", "http://[::1]:8080/p"),
            ("https://user@x.org", "https://user@x.org/"),
            ("http:x.org", "http://x.org/"),
        ] {
            let url = parse_web_url(text).map(String::from);
            assert_eq!(url.as_deref(), Some(normalised), "{text}");
            assert!(is_web_url(text), "{text}");
        }
        for text in [
            "",
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:image/png;base64,AA",
            "ftp://x.org/a",
            "file:///etc/passwd",
            "mailto:a@x.org",
            "//x.org/a",
            "/img.png",
            "x.org",
            "https://",
            "http://exa mple.com",
        ] {
            assert_eq!(parse_web_url(text), None, "{text}");
            assert!(!is_web_url(text), "{text}");
        }
    }

    #[test]
    fn max_bytes_counts_bytes() {
        assert_eq!(max_bytes(|| "text".into(), "éé", 4), Ok(()));
        let err = max_bytes(|| "text".into(), "éé", 3);
        assert_eq!(err, Err(ConfigError::new("text", "at most 3 bytes")));
    }

    #[test]
    fn joins_and_caps() {
        assert_eq!(join("", "title"), "title");
        assert_eq!(join("items[2]", "title"), "items[2].title");
        let err = max_items(|| "series".into(), 51, 50, "series").unwrap_err();
        assert_eq!(err, ConfigError::new("series", "at most 50 series"));
        let err = max_chars_each("items[0]", [("a", Some("xx"), 2), ("b", Some("xxx"), 2)]);
        assert_eq!(
            err,
            Err(ConfigError::new("items[0].b", "at most 2 characters"))
        );
    }
}
