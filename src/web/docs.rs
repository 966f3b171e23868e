//! The documentation pages (CONTRACT.md 17): `/docs`, an HTML reference of the served
//! `/v1/openapi.json` drawn in the browser by Redoc (a pinned file from the npm registry,
//! `assets/vendor/redoc/`, embedded with its licence), and `/docs/pin-types`, the catalogue
//! drawn by the server's renderer (`render::pin_types_page`). Everything is served from the
//! binary: the page works offline.
//!
//! `/docs` has a policy of its own (docs/API-DESIGN.md, "The API reference"): Redoc styles
//! itself at run time with `<style>` elements, which the policy allows by their hashes (the
//! empty element its style library fills through the CSSOM, and Redoc's one fixed sheet),
//! never by `'unsafe-inline'`; scripts stay `'self'` only, no eval.

use std::sync::OnceLock;

use axum::{
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
    Router,
};
use base64::{engine::general_purpose::STANDARD, Engine};
use maud::{html, DOCTYPE};
use sha2::{Digest, Sha256};

use crate::{app::AppState, render::Page};

/// Redoc 2.5.4's standalone bundle, as the npm registry has it.
const REDOC: &str = include_str!("../../assets/vendor/redoc/redoc.standalone.js");

/// The one address Redoc would load by itself: its logo in the menu's footer, from its CDN.
/// Served in its place, `data:,` is no picture (the logo hides itself), so the page asks no
/// other site for anything.
const REDOC_LOGO: &str = "https://cdn.redoc.ly/redoc/logo-mini.svg";

/// The styles Redoc adds at run time, by the SHA-256 of their text: the empty `<style>`
/// its style library creates and then fills through the CSSOM, and Redoc's fixed sheet.
const REDOC_STYLES: [&str; 2] = [
    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    "QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc=",
];

/// The page's own style sheet (assets/docs.css, embedded at build time): the bar of the
/// app's pages over Redoc's layout.
const CSS: &str = include_str!("../../assets/docs.css");

/// The routes of the pages, counted per client address with the other pages.
pub(super) fn pages() -> Router<AppState> {
    Router::new()
        .route("/docs", get(reference))
        .route("/docs/pin-types", get(pin_types))
}

/// The route of Redoc's bundle, immutable like every asset (the other scripts are
/// [`crate::render::assets`]).
pub(super) fn assets() -> Router<AppState> {
    Router::new().route(redoc_path(), get(redoc))
}

/// Redoc as served: the bundle with its logo's address replaced.
fn redoc_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| REDOC.replacen(REDOC_LOGO, "data:,", 1))
}

/// [`redoc_text`] compressed once, for the clients that accept gzip (a third of the size).
fn redoc_gzip() -> &'static [u8] {
    static GZIP: OnceLock<Vec<u8>> = OnceLock::new();
    GZIP.get_or_init(|| {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing to a Vec can't fail.
        let _ = encoder.write_all(redoc_text().as_bytes());
        encoder.finish().unwrap_or_default()
    })
}

fn redoc_path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| crate::render::assets::hashed_path("redoc", "js", redoc_text()))
}

/// A script's headers: immutable (a new script has a new name).
fn js_headers() -> [(header::HeaderName, &'static str); 3] {
    [
        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
        (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ]
}

/// Whether the request's `Accept-Encoding` takes gzip (not refused with `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// `GET /assets/redoc-<hash>.js`: gzip-compressed when the client takes it.
async fn redoc(headers: HeaderMap) -> Response {
    let vary = (header::VARY, HeaderValue::from_static("accept-encoding"));
    if accepts_gzip(&headers) {
        let gzip = (header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        (js_headers(), [vary, gzip], redoc_gzip()).into_response()
    } else {
        (js_headers(), [vary], redoc_text()).into_response()
    }
}

fn style_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| STANDARD.encode(Sha256::digest(CSS.as_bytes())))
}

/// `GET /docs`: the reference. Without JavaScript, where the document is.
async fn reference() -> Response {
    let document = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                (super::layout::head_start("API reference · Corkboard", false, "no-referrer", CSS))
                script src=(redoc_path()) defer {}
                script src=(crate::render::assets::DOCS.path()) defer {}
            }
            body {
                header.bar {
                    a.brand href="/" { "Corkboard" }
                    nav aria-label="Documentation" {
                        a href="/docs" aria-current="page" { "API reference" }
                        a href="/docs/pin-types" { "Pin types" }
                        a href="/v1/openapi.json" { "OpenAPI document" }
                    }
                }
                main id="reference" data-spec="/v1/openapi.json" {
                    p.waiting {
                        "Loading the API reference. It needs JavaScript; the document itself is "
                        a href="/v1/openapi.json" { "/v1/openapi.json" } "."
                    }
                }
            }
        }
    };
    let styles: String = REDOC_STYLES
        .iter()
        .map(|hash| format!(" 'sha256-{hash}'"))
        .collect();
    super::html(
        Page::new(
            document.into_string(),
            String::new(),
            format!(
                "default-src 'none'; script-src 'self'; style-src 'sha256-{}'{styles}; \
                 img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'",
                style_hash()
            ),
            "no-referrer",
        ),
        StatusCode::OK,
    )
}

/// `GET /docs/pin-types`: every type's example beside its schema.
async fn pin_types() -> Response {
    super::html(crate::render::pin_types_page(), StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_is_the_pinned_one_and_asks_no_other_site() {
        let digest = hex::encode(Sha256::digest(REDOC.as_bytes()));
        assert_eq!(
            digest, "dcaf76612bc4a3fbcc923a8966dee2f6146a5f32e5ce1b6f02dd60cbbf89500b",
            "assets/vendor/redoc/redoc.standalone.js is Redoc 2.5.4 from the registry"
        );
        assert_eq!(REDOC.matches(REDOC_LOGO).count(), 1);
        assert!(!redoc_text().contains("cdn.redoc.ly"));
    }

    #[test]
    fn gzip_is_sent_to_those_who_take_it() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
            accepts_gzip(&headers)
        };
        assert!(with("gzip, deflate, br"));
        assert!(with("br;q=1.0, GZIP;q=0.5"));
        assert!(!with("gzip;q=0, br"));
        assert!(!with("gzip; q=0.000"));
        assert!(!with("identity"));
        assert!(!accepts_gzip(&HeaderMap::new()));
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(redoc_gzip()), &mut plain)
            .unwrap();
        assert_eq!(plain, redoc_text().as_bytes());
    }
}
