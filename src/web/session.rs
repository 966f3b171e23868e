//! The session cookie: a session's id (`auth::sessions`) in an `HttpOnly`, `SameSite=Lax`
//! cookie; a request's cookie becomes the signed-in user of its session.

use axum::{
    extract::FromRequestParts,
    http::{header, request::Parts, HeaderMap},
};

use crate::{
    app::AppState,
    auth::sessions::{self, SignedIn},
    error::Result,
};

pub const SESSION_COOKIE: &str = "corkboard_session";

/// The value of cookie `name` in the request, if sent.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim())
}

/// A `Set-Cookie` value: `HttpOnly`, `SameSite=Lax`, `Secure` when the service is on https.
pub(crate) fn set_cookie(
    state: &AppState,
    name: &str,
    value: &str,
    path: &str,
    max_age: i64,
) -> String {
    let secure = if state.public_base().starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    format!("{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}")
}

/// Ends the session of the request's cookie, if any.
pub(crate) async fn end(state: &AppState, headers: &HeaderMap) -> Result<()> {
    match cookie(headers, SESSION_COOKIE) {
        Some(id) => sessions::end(state, id).await,
        None => Ok(()),
    }
}

/// The signed-in user of the request's session cookie, or `None` without a valid session
/// (or when web sign-in is off).
pub(crate) async fn session_principal(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<SignedIn>> {
    match cookie(headers, SESSION_COOKIE) {
        Some(id) => sessions::signed_in(state, id).await,
        None => Ok(None),
    }
}

/// The request's session, if any: pages decide what to do without one. A signed-in
/// user's request counts against their minute of pages (429 past it), every session of
/// theirs together: more sessions buy no more.
pub(crate) struct MaybeSignedIn(pub Option<SignedIn>);

impl FromRequestParts<AppState> for MaybeSignedIn {
    type Rejection = crate::Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self> {
        let who = session_principal(state, &parts.headers).await?;
        if let Some(who) = &who {
            crate::limits::count_user_request(state, &who.principal)?;
        }
        Ok(MaybeSignedIn(who))
    }
}

/// `next` when it is a path of this site (`/...`, not `//host` or `/\host`), else
/// `/boards`: no open redirect.
pub fn safe_next(next: Option<&str>) -> String {
    let fallback = || "/boards".to_owned();
    let Some(next) = next else {
        return fallback();
    };
    let plain = next.starts_with('/')
        && !next.starts_with("//")
        && !next.contains('\\')
        && next.len() <= 2048
        && !next.chars().any(|c| c.is_control() || c.is_whitespace());
    if !plain {
        return fallback();
    }
    // Also as a browser reads it: resolved against this site, it stays on this site.
    let base = url::Url::parse("http://corkboard.invalid/").ok();
    match base.and_then(|b| b.join(next).ok()) {
        Some(url) if url.host_str() == Some("corkboard.invalid") => next.to_owned(),
        _ => fallback(),
    }
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(
            safe_next(Some("/boards/pb-1?kiosk=1")),
            "/boards/pb-1?kiosk=1"
        );
        assert_eq!(safe_next(Some("/share/pb-1")), "/share/pb-1");
        for bad in [
            "https://evil.test/",
            "//evil.test/x",
            "/\\evil.test",
            "\\\\evil.test",
            "/%0d%0a",
            "javascript:alert(1)",
            "/a b",
            "evil.test",
            "",
        ] {
            assert_eq!(
                safe_next(Some(bad)),
                if bad == "/%0d%0a" { bad } else { "/boards" },
                "{bad}"
            );
        }
        assert_eq!(safe_next(None), "/boards");
    }
}
