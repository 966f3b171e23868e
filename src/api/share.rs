//! Sharing: the share settings routes (`/pins/{id}/share`, `/pinboards/{id}/share`, scope
//! `pins:share`) and the share pages at each `shareable_url` (`/share/{id}`), which need no
//! credential (but accept one for pages shared with `require_sign_in`) and are served
//! outside the API router and its rate limits.

use axum::{
    extract::{rejection::PathRejection, Path, State},
    http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
    Router,
};

use super::{ApiJson, ApiPath, Envelope};
use crate::{
    app::AppState,
    auth::{Auth, BoardAuth, PinsShare, Principal},
    error::{Error, Result},
    pinboards::{
        sharing::{self, ShareBody},
        signed_in,
    },
    render::{self, Page},
};

/// The settings routes, part of the authenticated API.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/pins/{id}/share", get(get_pin).put(put_pin))
        .route("/pinboards/{id}/share", get(get_board).put(put_board))
}

/// The share pages: HTML for anyone, no credential.
pub fn pages() -> Router<AppState> {
    Router::new().route("/share/{id}", get(page))
}

async fn get_pin(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    ApiPath(id): ApiPath<String>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        sharing::get_pin(&state, &auth.principal, &id).await?,
    ))
}

async fn put_pin(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body, _): ApiJson<ShareBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        sharing::put_pin(&state, &auth.principal, &id, body).await?,
    ))
}

async fn get_board(
    State(state): State<AppState>,
    auth: BoardAuth<PinsShare>,
    ApiPath(id): ApiPath<String>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        sharing::get_board(&state, &auth.principal, &id).await?,
    ))
}

async fn put_board(
    State(state): State<AppState>,
    auth: BoardAuth<PinsShare>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body, _): ApiJson<ShareBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        sharing::put_board(&state, &auth.principal, &id, body).await?,
    ))
}

/// What `/share/{id}` shows: a public pin, a public board, or the 404 page, chosen by the
/// id's prefix (`p-` pins, `pb-` boards). The store admits only what anyone may see; a page
/// shared for signed-in visitors only is shown to a bearer credential that may read it.
async fn lookup(state: &AppState, headers: &HeaderMap, id: &str) -> Result<Page> {
    let page = if id.starts_with("pb-") {
        let board = match state.store.shared_board(id).await? {
            Some(found) => Some(found),
            None => match visitor(state, headers).await {
                Some(who) => signed_in::board(state, who, id).await?,
                None => None,
            },
        };
        board.map(|(board, pins)| render::board_page(&board, &pins))
    } else if id.starts_with("p-") {
        let pin = match state.store.shared_pin(id).await? {
            Some(found) => Some(found),
            None => match visitor(state, headers).await {
                Some(who) => signed_in::pin(state, &who, id).await?,
                None => None,
            },
        };
        pin.map(|pin| render::pin_page(&pin))
    } else {
        None
    };
    Ok(page.unwrap_or_else(render::not_found_page))
}

/// The visitor's credential, when one is sent and valid; a page never says why not.
async fn visitor(state: &AppState, headers: &HeaderMap) -> Option<Principal> {
    if !headers.contains_key(header::AUTHORIZATION) {
        return None;
    }
    crate::auth::authenticate(headers, state).await.ok()
}

async fn page(
    State(state): State<AppState>,
    headers: HeaderMap,
    id: std::result::Result<Path<String>, PathRejection>,
) -> Result<Response> {
    let page = match id {
        Ok(Path(id)) => lookup(&state, &headers, &id).await?,
        Err(_) => render::not_found_page(),
    };
    let status = if page.found {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    let mut response = (status, page.html).into_response();
    let headers = response.headers_mut();
    let fixed = [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (HeaderName::from_static("x-robots-tag"), "noindex"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    // Never a page without its policy.
    let csp = HeaderValue::from_str(&page.csp).map_err(|e| Error::Internal(e.to_string()))?;
    headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    Ok(response)
}
