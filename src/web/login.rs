//! `GET /login`, `GET /login/provider`, `GET /auth/callback` and `POST /logout`. `/login`
//! is the sign-in page while local accounts are on (the password form, posted to
//! `web::local`, and the provider's button when there is one), else straight to the
//! provider. From `/login/provider` to the callback, the browser keeps the sign-in's state,
//! nonce, PKCE verifier and `next` in an `HttpOnly` cookie scoped to `/auth/callback`, which
//! the callback always clears: a sign-in can be finished once, by the browser that started
//! it.

use axum::{
    extract::{Query, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use serde::Deserialize;
use subtle::ConstantTimeEq;

use super::{
    forms::{self, LoginForm},
    not_found, see_other,
    session::{self, cookie, set_cookie},
};
use crate::{
    app::AppState,
    auth::{
        local::Started,
        sessions::{self, SessionId},
        sign_in, Pending, DEFAULT_WORKSPACE,
    },
    error::Error,
    render,
};

const LOGIN_COOKIE: &str = "corkboard_login";
const LOGIN_PATH: &str = "/auth/callback";
/// A sign-in must come back from the provider within this many seconds.
const LOGIN_SECS: i64 = 600;

#[derive(Deserialize)]
pub(super) struct LoginQuery {
    next: Option<String>,
}

/// `GET /login?next=`: with local accounts on, the sign-in page (the password form, and the
/// provider's button when there is a provider); else to the provider (404 without one).
pub(super) async fn login(
    State(state): State<AppState>,
    Query(query): Query<LoginQuery>,
) -> Response {
    if state.settings.auth.local.enabled {
        let next = super::safe_next(query.next.as_deref());
        let form = LoginForm {
            next: &next,
            error: None,
            provider: state.oidc.is_some(),
        };
        return super::html(forms::login_page(&form), StatusCode::OK);
    }
    provider(State(state), Query(query)).await
}

/// `GET /login/provider?next=`: to the provider's authorization endpoint (404 without one).
pub(super) async fn provider(
    State(state): State<AppState>,
    Query(query): Query<LoginQuery>,
) -> Response {
    let Some(oidc) = &state.oidc else {
        return not_found();
    };
    let next = super::safe_next(query.next.as_deref());
    let (url, pending) = match oidc.start(next).await {
        Ok(started) => started,
        Err(e) => return failed(&state, e),
    };
    let Ok(value) = serde_json::to_vec(&pending).map(|json| URL_SAFE_NO_PAD.encode(json)) else {
        return not_found();
    };
    with_cookie(
        see_other(&url),
        &set_cookie(&state, LOGIN_COOKIE, &value, LOGIN_PATH, LOGIN_SECS),
    )
}

#[derive(Deserialize)]
pub(super) struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
}

/// `GET /auth/callback`: checks state, exchanges the code with its PKCE verifier, checks the
/// ID token as the API does (and its nonce), enrolls the user, starts a session and goes to
/// `next`. Any refusal is a page saying sign-in failed, with a link to try again.
pub(super) async fn callback(
    State(state): State<AppState>,
    Query(query): Query<CallbackQuery>,
    headers: HeaderMap,
) -> Response {
    let clear = set_cookie(&state, LOGIN_COOKIE, "", LOGIN_PATH, 0);
    let answer = match finish(&state, &query, &headers).await {
        Ok((id, next, ttl_ms)) => with_cookie(
            see_other(&next),
            &session_cookie(&state, &Started { id, ttl_ms }),
        ),
        Err(e) => failed(&state, e),
    };
    with_cookie(answer, &clear)
}

async fn finish(
    state: &AppState,
    query: &CallbackQuery,
    headers: &HeaderMap,
) -> Result<(SessionId, String, i64), Error> {
    let (Some(oidc), Some(jwt)) = (&state.oidc, &state.jwt) else {
        return Err(Error::NotFound {
            what: "route",
            index: None,
        });
    };
    let pending: Pending = cookie(headers, LOGIN_COOKIE)
        .and_then(|v| URL_SAFE_NO_PAD.decode(v).ok())
        .and_then(|json| serde_json::from_slice(&json).ok())
        .ok_or(Error::Unauthorized)?;
    let (Some(code), Some(returned)) = (&query.code, &query.state) else {
        return Err(Error::Unauthorized);
    };
    if !bool::from(returned.as_bytes().ct_eq(pending.state.as_bytes())) {
        tracing::debug!("sign-in state does not match");
        return Err(Error::Unauthorized);
    }
    let identity = oidc
        .finish(jwt, &state.settings.auth.jwt.audience, code, &pending)
        .await?;
    let subject = identity.subject.clone();
    let workspace = identity
        .workspace
        .clone()
        .unwrap_or_else(|| DEFAULT_WORKSPACE.to_owned());
    sign_in(state, identity).await?;
    let ttl_ms = oidc.session_ms();
    let id = sessions::create(state, &subject, &workspace, ttl_ms).await?;
    Ok((id, super::safe_next(Some(&pending.next)), ttl_ms))
}

/// `POST /logout`: from this site only (`Origin`), ends the session in the store and goes
/// to `/`.
pub(super) async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(refused) = refuse_cross_site(&state, &headers) {
        return refused;
    }
    if let Err(e) = session::end(&state, &headers).await {
        return e.into_response();
    }
    with_cookie(
        see_other("/"),
        &set_cookie(&state, session::SESSION_COOKIE, "", "/", 0),
    )
}

/// The 403 for a state-changing page request whose `Origin` is not this site's (or
/// missing); `None` for one from our own pages.
pub(super) fn refuse_cross_site(state: &AppState, headers: &HeaderMap) -> Option<Response> {
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    (origin != Some(own_origin(state).as_str()))
        .then(|| crate::Error::Forbidden("cross-site request refused".into()).into_response())
}

/// `scheme://host[:port]` of `public_url`: what a browser sends as `Origin` from our pages.
fn own_origin(state: &AppState) -> String {
    url::Url::parse(state.public_base())
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_default()
}

/// The session cookie of a session just started (CONTRACT.md 13), whichever way the user
/// signed in.
pub(super) fn session_cookie(state: &AppState, started: &Started) -> String {
    set_cookie(
        state,
        session::SESSION_COOKIE,
        started.id.as_str(),
        "/",
        started.ttl_ms / 1000,
    )
}

pub(super) fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// The page of a sign-in that failed: 401 for refusals, 503 when the provider can't be
/// reached, the error envelope for a store failure.
fn failed(_state: &AppState, e: Error) -> Response {
    let status = match e {
        Error::Unauthorized | Error::InvalidToken | Error::Forbidden(_) => StatusCode::UNAUTHORIZED,
        Error::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Error::NotFound { .. } => return not_found(),
        other => return other.into_response(),
    };
    super::html(render::sign_in_failed_page(), status)
}
