//! CORS on the API (CONTRACT.md 18): the pages of the origins in `http.cors_origins` may call
//! `/v1` from a browser. Preflights allow the headers our writes use; the answers expose the
//! ones clients read (`ETag` for If-Match, `Retry-After` and `X-RateLimit-*` for pacing,
//! `X-Request-Id` for support). No credentials mode: the API takes bearer tokens, not cookies.

use std::time::Duration;

use axum::http::{header, HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// What a preflight may ask to send.
const ALLOWED: [HeaderName; 4] = [
    header::AUTHORIZATION,
    header::CONTENT_TYPE,
    header::IF_MATCH,
    HeaderName::from_static("idempotency-key"),
];

/// What a page's script may read of an answer, besides the CORS-safelisted headers.
const EXPOSED: [HeaderName; 10] = [
    header::ETAG,
    header::RETRY_AFTER,
    HeaderName::from_static("x-request-id"),
    HeaderName::from_static("x-ratelimit-limit-minute"),
    HeaderName::from_static("x-ratelimit-remaining-minute"),
    HeaderName::from_static("x-ratelimit-reset-minute"),
    HeaderName::from_static("x-ratelimit-limit-hour"),
    HeaderName::from_static("x-ratelimit-remaining-hour"),
    HeaderName::from_static("x-ratelimit-reset-hour"),
    HeaderName::from_static("x-ratelimit-token-cost"),
];

/// The layer for `origins` (`*` for any), or none when the list is empty. An origin is
/// `scheme://host[:port]`, as browsers send it: anything else is a configuration error.
pub fn layer(origins: &[String]) -> Result<Option<CorsLayer>, String> {
    if origins.is_empty() {
        return Ok(None);
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        let values = origins
            .iter()
            .map(|origin| parse_origin(origin))
            .collect::<Result<Vec<_>, _>>()?;
        AllowOrigin::list(values)
    };
    Ok(Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ])
            .allow_headers(ALLOWED)
            .expose_headers(EXPOSED)
            .max_age(Duration::from_secs(3600)),
    ))
}

fn parse_origin(origin: &str) -> Result<HeaderValue, String> {
    let refuse =
        || format!("http.cors_origins: `{origin}` is not an origin (scheme://host[:port], or *)");
    let url = url::Url::parse(origin).map_err(|_| refuse())?;
    let bare = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some()
        && url.path() == "/"
        && !origin.ends_with('/')
        && url.query().is_none()
        && url.fragment().is_none()
        && url.username().is_empty();
    if !bare {
        return Err(refuse());
    }
    HeaderValue::from_str(origin).map_err(|_| refuse())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        let list = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(layer(&[]).unwrap().is_none());
        assert!(layer(&list(&["*"])).unwrap().is_some());
        assert!(layer(&list(&[
            "https://dash.example.com",
            "http://localhost:3000"
        ]))
        .unwrap()
        .is_some());
        for bad in [
            "dash.example.com",
            "https://a.example/",
            "https://a.example/x",
            "ftp://a.example",
        ] {
            assert!(layer(&list(&[bad])).is_err(), "{bad}");
        }
    }
}
