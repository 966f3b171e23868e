//! Sharing: the share settings routes (`/pins/{id}/share`, `/pinboards/{id}/share`, scope
//! `pins:share`) and the share pages at each `shareable_url` (`/share/{id}`), which need no
//! credential (but accept one for pages shared with `require_sign_in`) and are served
//! outside the API router and its rate limits.

use aide::{
    axum::{routing::get_with, ApiRouter},
    generate::GenContext,
    openapi::{MediaType, Operation, Response as AideResponse},
    transform::TransformOperation,
    OperationOutput,
};
use axum::{
    extract::{rejection::PathRejection, Path, State},
    http::{header, request::Parts, HeaderName, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};

use super::{
    docs::{self, One},
    ApiJson, ApiPath, BoardPath, Envelope, PinPath, SharePath,
};
use crate::{
    app::AppState,
    auth::{Auth, BoardAuth, PinsShare, Principal},
    error::{Error, Result},
    limits::guarded_authenticate,
    pinboards::{
        sharing::{self, ShareBody, ShareRecord},
        signed_in,
    },
    render::{self, Page},
};

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("sharing")
}

/// The settings routes, part of the authenticated API.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/pins/{id}/share",
            get_with(get_pin, |op| doc(op, "Read a pin's share settings"))
                .put_with(put_pin, |op| doc(op, "Change a pin's share settings")),
        )
        .api_route(
            "/pinboards/{id}/share",
            get_with(get_board, |op| doc(op, "Read a pinboard's share settings"))
                .put_with(put_board, |op| {
                    doc(op, "Change a pinboard's share settings")
                }),
        )
}

/// The share pages: HTML for anyone, no credential.
pub fn pages() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/share/{id}",
        get_with(page, |op| {
            doc(
                op,
                "The share page of a public pin or pinboard (HTML; a credential only for sign-in-only pages)",
            )
        }),
    )
}

async fn get_pin(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
) -> Result<Envelope<One<ShareRecord>>> {
    Ok(Envelope::new(
        sharing::get_pin(&state, &auth.principal, &id).await?,
    ))
}

async fn put_pin(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiJson(body, _): ApiJson<ShareBody>,
) -> Result<Envelope<One<ShareRecord>>> {
    Ok(Envelope::new(
        sharing::put_pin(&state, &auth.principal, &id, body).await?,
    ))
}

async fn get_board(
    State(state): State<AppState>,
    auth: BoardAuth<PinsShare>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
) -> Result<Envelope<One<ShareRecord>>> {
    Ok(Envelope::new(
        sharing::get_board(&state, &auth.principal, &id).await?,
    ))
}

async fn put_board(
    State(state): State<AppState>,
    auth: BoardAuth<PinsShare>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
    ApiJson(body, _): ApiJson<ShareBody>,
) -> Result<Envelope<One<ShareRecord>>> {
    Ok(Envelope::new(
        sharing::put_board(&state, &auth.principal, &id, body).await?,
    ))
}

/// What `/share/{id}` shows: a public pin, a public board, or the 404 page, chosen by the
/// id's prefix (`p-` pins, `pb-` boards). The store admits only what anyone may see; a page
/// shared for signed-in visitors only is shown to a bearer credential that may read it.
async fn lookup(state: &AppState, request: &Parts, id: &str) -> Result<Page> {
    let page = if id.contains('\0') {
        None
    } else if id.starts_with("pb-") {
        let board = match state.store.shared_board(id).await? {
            Some(found) => Some(found),
            None => match visitor(state, request).await {
                Some(who) => signed_in::board(state, who, id).await?,
                None => None,
            },
        };
        board.map(|(board, pins)| render::board_page(&board, &pins))
    } else if id.starts_with("p-") {
        let pin = match state.store.shared_pin(id).await? {
            Some(found) => Some(found),
            None => match visitor(state, request).await {
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

/// The visitor's credential, when one is sent and valid; a page never says why not. Behind
/// the brute-force guard, like the API: a page is no oracle for guessing credentials.
async fn visitor(state: &AppState, request: &Parts) -> Option<Principal> {
    if !request.headers.contains_key(header::AUTHORIZATION) {
        return None;
    }
    guarded_authenticate(state, &request.headers, &request.extensions)
        .await
        .ok()
}

async fn page(
    State(state): State<AppState>,
    id: std::result::Result<Path<SharePath>, PathRejection>,
    request: Parts,
) -> SharePage {
    SharePage(match id {
        Ok(Path(SharePath { id })) => lookup(&state, &request, &id).await,
        Err(_) => Ok(render::not_found_page()),
    })
}

/// A rendered share page with its security headers: 200, or 404 with the same page for
/// anything private or missing; the error envelope when the store fails.
struct SharePage(Result<Page>);

impl IntoResponse for SharePage {
    fn into_response(self) -> Response {
        let page = match self.0 {
            Ok(page) => page,
            Err(e) => return e.into_response(),
        };
        let status = if page.found {
            StatusCode::OK
        } else {
            StatusCode::NOT_FOUND
        };
        // Never a page without its policy.
        let Ok(csp) = HeaderValue::from_str(&page.csp) else {
            return Error::Internal("share page policy is not a header value".into())
                .into_response();
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
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
        response
    }
}

impl OperationOutput for SharePage {
    type Inner = String;

    fn inferred_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<u16>, AideResponse)> {
        let html = |description: &str| AideResponse {
            description: description.to_owned(),
            content: [("text/html".to_owned(), MediaType::default())]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        vec![
            (Some(200), html("The rendered pin or pinboard")),
            (
                Some(404),
                html("The same page for a private, missing or sign-in-only item"),
            ),
            (Some(500), docs::error_response(ctx, docs::INTERNAL)),
            (Some(503), docs::error_response(ctx, docs::UNAVAILABLE)),
        ]
    }
}
