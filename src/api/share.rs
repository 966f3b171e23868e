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
    events::EventStream,
    ApiJson, ApiPath, BoardPath, Envelope, PinPath, SharePath,
};
use crate::{
    app::AppState,
    auth::{Auth, BoardAuth, PinsShare, Principal},
    error::{Error, Result},
    events::Resume,
    limits::{client_address, count_share_request, guarded_authenticate},
    pinboards::{
        sharing::{self, ShareBody, ShareRecord},
        signed_in,
    },
    pins::rendered,
    render::{self, Page, View},
};

/// The value of `name` in the request's query string, if present.
fn query_value(request: &Parts, name: &str) -> Option<String> {
    let query = request.uri.query()?;
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("sharing")
}

/// The settings routes, part of the authenticated API.
pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/pins/{id}/share",
            get_with(get_pin, |op| {
                doc(op, "Read a pin's share settings").id("getPinShare")
            })
            .put_with(put_pin, |op| {
                doc(op, "Change a pin's share settings").id("putPinShare")
            }),
        )
        .api_route(
            "/pinboards/{id}/share",
            get_with(get_board, |op| {
                doc(op, "Read a pinboard's share settings").id("getPinboardShare")
            })
            .put_with(put_board, |op| {
                doc(op, "Change a pinboard's share settings").id("putPinboardShare")
            }),
        )
}

/// The share pages: HTML for anyone, no credential, and their live streams.
pub fn pages() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/share/{id}",
            get_with(page, |op| {
                doc(
                    op,
                    "The share page of a public pin or pinboard (HTML; a credential only for sign-in-only pages)",
                )
                .id("getSharePage")
            }),
        )
        .api_route(
            "/share/{id}/fragment",
            get_with(fragment, |op| {
                doc(
                    op,
                    "The body of a share page alone (header, main, footer; HTML), which the page's script swaps in when the item changes",
                )
                .id("getSharePageFragment")
            }),
        )
        // The page script: its content hash is in its name, so it is cached for good.
        .route("/assets/{name}", axum::routing::get(asset))
        .api_route(
            "/share/{id}/events",
            get_with(share_events, |op| {
                doc(
                    op,
                    "Follow a public pin or pinboard as it changes (Server-Sent Events, no credential)",
                )
                .id("followSharedItem")
            }),
        )
}

/// `GET /share/{id}/events`: the stream of a public pin (its own changes) or board (its
/// changes and those of the pins placed on it), carrying only what the share page shows,
/// ending when the item stops being public; the 404 page like `/share/{id}` otherwise. At
/// most `events.max_share_streams_per_address` per client address.
async fn share_events(
    State(state): State<AppState>,
    id: std::result::Result<Path<SharePath>, PathRejection>,
    request: Parts,
) -> ShareStream {
    if let Err(limited) = count_share_request(&state, &request.headers, &request.extensions) {
        return ShareStream(Err(limited));
    }
    let Ok(Path(SharePath { id })) = id else {
        return ShareStream(Ok(None));
    };
    ShareStream(open_share_stream(&state, &request, &id).await)
}

async fn open_share_stream(
    state: &AppState,
    request: &Parts,
    id: &str,
) -> Result<Option<axum::body::Body>> {
    let Some(ws) = state.store.shared_workspace(id).await? else {
        return Ok(None);
    };
    let guard = &state.settings.rate_limits.auth_failures.client_ip_header;
    let address = client_address(&request.headers, &request.extensions, guard)
        .map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    let hub = &state.events;
    let admission = hub.admit(
        format!("address:{address}"),
        hub.settings().max_share_streams_per_address,
    )?;
    let resume = Resume::requested_in(&request.headers, request.uri.query());
    Ok(Some(hub.share_stream(&ws, id, resume, admission).await?))
}

/// A share stream, the 404 page, or the error envelope (429 past the address's limit).
struct ShareStream(Result<Option<axum::body::Body>>);

impl IntoResponse for ShareStream {
    fn into_response(self) -> Response {
        match self.0 {
            Ok(Some(body)) => EventStream::new(body).into_response(),
            Ok(None) => SharePage(Ok(render::not_found_page())).into_response(),
            Err(e) => e.into_response(),
        }
    }
}

impl OperationOutput for ShareStream {
    type Inner = Self;

    fn inferred_responses(
        ctx: &mut GenContext,
        op: &mut Operation,
    ) -> Vec<(Option<u16>, AideResponse)> {
        let mut responses = EventStream::inferred_responses(ctx, op);
        responses.extend(
            SharePage::inferred_responses(ctx, op)
                .into_iter()
                .filter(|(status, _)| *status != Some(200)),
        );
        responses
    }
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
    let mut view = View {
        kiosk: query_value(request, "kiosk").is_some_and(|v| v == "1" || v == "true"),
        live: None,
    };
    // The newest event id before the state is read: the page's script follows the stream
    // from there, so a change committed while the page renders is not missed.
    let since = || async { Ok::<_, Error>(state.store.event_bounds().await?.1) };
    let page = if id.contains('\0') {
        None
    } else if id.starts_with("pb-") {
        let newest = since().await?;
        let board = match state.store.shared_board(id).await? {
            Some(found) => {
                // Public: live. (A sign-in-only page has no public stream to follow.)
                view.live = Some((id.to_owned(), newest));
                Some(found)
            }
            None => match visitor(state, request).await {
                Some(who) => signed_in::board(state, who, id).await?,
                None => None,
            },
        };
        match board {
            Some((board, mut placed)) => {
                let pins = placed.iter().map(|p| p.pin.clone()).collect();
                let mut blocks = std::collections::HashMap::new();
                for resolved in rendered::for_page(state, id, pins).await? {
                    blocks.insert(resolved.pin.id.clone(), resolved.blocks_html());
                    if let Some(slot) = placed.iter_mut().find(|p| p.pin.id == resolved.pin.id) {
                        slot.pin = resolved.pin;
                    }
                }
                Some(render::board_page(&board, &placed, &blocks, &view))
            }
            None => None,
        }
    } else if id.starts_with("p-") {
        let newest = since().await?;
        let pin = match state.store.shared_pin(id).await? {
            Some(found) => {
                view.live = Some((id.to_owned(), newest));
                Some(found)
            }
            None => match visitor(state, request).await {
                Some(who) => signed_in::pin(state, &who, id).await?,
                None => None,
            },
        };
        match pin {
            Some(pin) => {
                let resolved = rendered::for_page(state, id, vec![pin]).await?;
                resolved
                    .first()
                    .map(|r| render::pin_page(&r.pin, &r.blocks_html(), &view))
            }
            None => None,
        }
    } else {
        None
    };
    Ok(page.unwrap_or_else(render::not_found_page))
}

/// The visitor's credential, when one is sent and valid, else their web session's user; a
/// page never says why not. Behind the brute-force guard, like the API: a page is no oracle
/// for guessing credentials.
async fn visitor(state: &AppState, request: &Parts) -> Option<Principal> {
    if !request.headers.contains_key(header::AUTHORIZATION) {
        let session = crate::web::session_principal(state, &request.headers).await;
        return session.ok().flatten().map(|who| who.principal);
    }
    guarded_authenticate(state, &request.headers, &request.extensions)
        .await
        .ok()
}

async fn page(
    State(state): State<AppState>,
    id: std::result::Result<Path<SharePath>, PathRejection>,
    request: Parts,
) -> ShareAnswer {
    let answer = shown(&state, id, &request).await;
    match (&answer.0, path_id(&request)) {
        (Ok(page), Some(id)) if !page.found => match to_sign_in(&state, &request, id).await {
            Ok(Some(login)) => ShareAnswer::SignIn(login),
            Ok(None) => ShareAnswer::Page(answer),
            Err(e) => ShareAnswer::Page(SharePage(Err(e))),
        },
        _ => ShareAnswer::Page(answer),
    }
}

async fn shown(
    state: &AppState,
    id: std::result::Result<Path<SharePath>, PathRejection>,
    request: &Parts,
) -> SharePage {
    if let Err(limited) = count_share_request(state, &request.headers, &request.extensions) {
        return SharePage(Err(limited));
    }
    SharePage(match id {
        Ok(Path(SharePath { id })) => lookup(state, request, &id).await,
        Err(_) => Ok(render::not_found_page()),
    })
}

/// The `{id}` of `/share/{id}`.
fn path_id(request: &Parts) -> Option<&str> {
    request.uri.path().strip_prefix("/share/")
}

/// For a visitor without credential or session, sign-in first when the item is shared for
/// signed-in visitors and web sign-in is on: `/login?next=<this page>`.
async fn to_sign_in(state: &AppState, request: &Parts, id: &str) -> Result<Option<String>> {
    if state.oidc.is_none()
        || request.headers.contains_key(header::AUTHORIZATION)
        || crate::web::session_principal(state, &request.headers)
            .await?
            .is_some()
    {
        return Ok(None);
    }
    let Some(ws) = state.store.workspace_of(id).await? else {
        return Ok(None);
    };
    let sign_in_only = if id.starts_with("pb-") {
        state
            .store
            .get_pinboard(&ws, id)
            .await?
            .is_some_and(|b| b.sharing.is_public && b.sharing.require_sign_in)
    } else {
        state
            .store
            .get_pins(&ws, &[id.to_owned()])
            .await?
            .first()
            .is_some_and(|p| p.is_public && p.require_sign_in)
    };
    if !sign_in_only {
        return Ok(None);
    }
    let here = request.uri.path_and_query().map_or("/", |p| p.as_str());
    let next: String = url::form_urlencoded::byte_serialize(here.as_bytes()).collect();
    Ok(Some(format!("/login?next={next}")))
}

/// A share page, or (for a sign-in-only item and a visitor not signed in) the way to sign in.
enum ShareAnswer {
    Page(SharePage),
    SignIn(String),
}

impl IntoResponse for ShareAnswer {
    fn into_response(self) -> Response {
        match self {
            ShareAnswer::Page(page) => page.into_response(),
            ShareAnswer::SignIn(location) => crate::web::see_other(&location),
        }
    }
}

impl OperationOutput for ShareAnswer {
    type Inner = String;

    fn inferred_responses(
        ctx: &mut GenContext,
        op: &mut Operation,
    ) -> Vec<(Option<u16>, AideResponse)> {
        let mut responses = SharePage::inferred_responses(ctx, op);
        responses.push((
            Some(303),
            AideResponse {
                description: "A sign-in-only item and a visitor not signed in (web sign-in on): to `/login?next=...`".to_owned(),
                ..Default::default()
            },
        ));
        responses
    }
}

/// `GET /share/{id}/fragment`: what the page script swaps in, the same page's body drawn by
/// the same functions (404 with the 404 page's body when the item is no longer shown).
/// Counted against the address's share limit like a page.
async fn fragment(
    State(state): State<AppState>,
    id: std::result::Result<Path<SharePath>, PathRejection>,
    request: Parts,
) -> SharePage {
    let mut answer = shown(&state, id, &request).await;
    if let Ok(page) = &mut answer.0 {
        page.html = std::mem::take(&mut page.fragment);
    }
    answer
}

/// `GET /assets/live-<hash>.js`: the page script, embedded at build time; any other name is
/// 404. Immutable: a new script has a new name.
async fn asset(Path(name): Path<String>) -> Response {
    if format!("/assets/{name}") != render::script_path() {
        return Error::NotFound {
            what: "route",
            index: None,
        }
        .into_response();
    }
    let fixed = [
        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
        (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (fixed, render::LIVE_JS).into_response()
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
            (
                Some(429),
                docs::error_response(
                    ctx,
                    "Too many requests to share pages from this address this minute: `RATE_LIMIT_EXCEEDED`",
                ),
            ),
            (Some(500), docs::error_response(ctx, docs::INTERNAL)),
            (Some(503), docs::error_response(ctx, docs::UNAVAILABLE)),
        ]
    }
}
