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
    http::{header, request::Parts, StatusCode, Uri},
    response::{IntoResponse, Response},
};
use tower_http::CompressionLevel;

use super::{
    docs::{self, One},
    events::EventStream,
    ApiJson, ApiPath, BoardPath, Envelope, PinPath, SharePath,
};
use crate::{
    app::AppState,
    auth::{Auth, BoardAuth, PinsShare, Reuse},
    error::{Error, Result},
    events::Resume,
    limits::{client_address, count_share_request, guarded_authenticate},
    pinboards::{
        sharing::{self, ShareBody, ShareRecord},
        view::{self, Door, Followed, PageView, Shown, Viewer},
    },
    render::{self, Page},
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
            })
            .layer(crate::web::compression(CompressionLevel::Fastest)),
        )
        // The pages' scripts: their content hash is in their names, so they are cached for good.
        .route("/assets/{name}", axum::routing::get(asset))
        .route("/favicon.ico", axum::routing::get(favicon))
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
        .layer(crate::web::compression(CompressionLevel::Default))
}

/// `GET /share/{id}/events`: the stream of a public pin (its own changes) or board (its
/// changes and those of the pins placed on it), carrying only what the share page shows,
/// ending when the item stops being public; the 404 page like `/share/{id}` otherwise. Its
/// `id:` lines are tokens of the workspace's position, never event ids (`events/token.rs`),
/// and it resumes by them (`Last-Event-ID`, or `?last_event_id=` from the page's
/// `data-since`). At most `events.max_share_streams_per_address` per client address.
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
    let Some(Followed::Shared { workspace_id }) =
        view::follow(state, Door::Share, id, Viewer::Public).await?
    else {
        return Ok(None);
    };
    let guard = &state.settings.rate_limits.auth_failures.client_ip_header;
    let address = client_address(&request.headers, &request.extensions, guard)
        .map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    let hub = &state.events;
    let admission = hub.admit_share(&address)?;
    let resume = Resume::requested_in(&request.headers, request.uri.query());
    Ok(Some(
        hub.share_stream(&workspace_id, id, resume, admission)
            .await?,
    ))
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
    Envelope::of(&sharing::get_pin(&state, &auth.principal, &id).await?)
}

async fn put_pin(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiJson(body, _): ApiJson<ShareBody>,
) -> Result<Envelope<One<ShareRecord>>> {
    Envelope::of(&sharing::put_pin(&state, &auth.principal, &id, body).await?)
}

async fn get_board(
    State(state): State<AppState>,
    auth: BoardAuth<PinsShare>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
) -> Result<Envelope<One<ShareRecord>>> {
    Envelope::of(&sharing::get_board(&state, &auth.principal, &id).await?)
}

async fn put_board(
    State(state): State<AppState>,
    auth: BoardAuth<PinsShare>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
    ApiJson(body, _): ApiJson<ShareBody>,
) -> Result<Envelope<One<ShareRecord>>> {
    Envelope::of(&sharing::put_board(&state, &auth.principal, &id, body).await?)
}

/// The visitor of a share page as `pinboards::view` asks for them, only when the item is
/// not shared with anyone: their credential when one is sent (refused when not valid: a page
/// never says why not), else their web session's user. Behind the brute-force guard, like
/// the API: a page is no oracle for guessing credentials.
async fn visitor(state: &AppState, request: &Parts) -> Result<Viewer> {
    if !request.headers.contains_key(header::AUTHORIZATION) {
        let session = crate::web::session_principal(state, &request.headers).await?;
        return Ok(session.map_or(Viewer::Public, |who| Viewer::SignedIn(who.principal)));
    }
    Ok(
        match guarded_authenticate(state, &request.headers, &request.extensions, Reuse::No).await {
            Ok(authenticated) => Viewer::SignedIn(authenticated.principal),
            Err(_) => Viewer::Refused,
        },
    )
}

/// `GET /share/{id}`: what the view shows the visitor (a public pin or board, or one shared
/// for signed-in visitors who may read it), the 404 page, or, for a sign-in-only item and a
/// visitor not signed in (web sign-in on), `/login?next=<this page>`. `/share/{id}.png` (one
/// path segment for the router) is the page's link preview (`super::preview`).
async fn page(
    State(state): State<AppState>,
    id: std::result::Result<Path<SharePath>, PathRejection>,
    request: Parts,
) -> ShareAnswer {
    if let Ok(Path(SharePath { id })) = &id {
        if let Some(item) = id.strip_suffix(".png") {
            return ShareAnswer::Picture(super::preview::png(&state, item, &request).await);
        }
    }
    let public_url = &state.settings.public_url;
    let page_secs = state.settings.kiosk.page_secs;
    match shown(&state, id, &request).await {
        Ok(Shown::SignIn) => ShareAnswer::SignIn(request.uri),
        Ok(Shown::Found((id, view))) if view.since.is_some() => {
            // Shared with anyone: the tags of its link preview.
            let card = render::preview::LinkCard::of(&view, &id, public_url);
            let page = draw(Shown::Found((id, view)), &request, page_secs);
            ShareAnswer::Page(SharePage(Ok(render::preview::with_link_card(page, &card))))
        }
        answer => ShareAnswer::Page(SharePage(
            answer.map(|shown| draw(shown, &request, page_secs)),
        )),
    }
}

/// What the share page of the request shows its visitor, counted against the address's
/// share limit.
async fn shown(
    state: &AppState,
    id: std::result::Result<Path<SharePath>, PathRejection>,
    request: &Parts,
) -> Result<Shown<(String, PageView)>> {
    count_share_request(state, &request.headers, &request.extensions)?;
    let Ok(Path(SharePath { id })) = id else {
        return Ok(Shown::NotFound);
    };
    Ok(
        match view::page(state, Door::Share, &id, visitor(state, request)).await? {
            Shown::Found(view) => Shown::Found((id, view)),
            Shown::NotFound => Shown::NotFound,
            Shown::SignIn => Shown::SignIn,
        },
    )
}

/// The page of what is shown (kiosk with `?kiosk=1` or `true`, paged every `page_secs`),
/// else the 404 page.
fn draw(shown: Shown<(String, PageView)>, request: &Parts, page_secs: u64) -> Page {
    match shown {
        Shown::Found((id, view)) => {
            let kiosk = query_value(request, "kiosk").is_some_and(|v| v == "1" || v == "true");
            render::paged(render::view_page(&view, &id, kiosk), page_secs)
        }
        Shown::NotFound | Shown::SignIn => render::not_found_page(),
    }
}

/// A share page, or (for a sign-in-only item and a visitor not signed in) the way to sign in
/// and back to this page.
enum ShareAnswer {
    Page(SharePage),
    SignIn(Uri),
    /// `/share/{id}.png`: the picture, or the 404 page.
    Picture(Response),
}

impl IntoResponse for ShareAnswer {
    fn into_response(self) -> Response {
        match self {
            ShareAnswer::Page(page) => page.into_response(),
            ShareAnswer::SignIn(here) => crate::web::to_login(&here),
            ShareAnswer::Picture(picture) => picture,
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
        if let Some((_, ok)) = responses
            .iter_mut()
            .find(|(status, _)| *status == Some(200))
        {
            ok.description = "The rendered pin or pinboard; for `/share/{id}.png`, its link preview (1200x630 PNG)".to_owned();
            ok.content
                .insert("image/png".to_owned(), MediaType::default());
        }
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
    SharePage(shown(&state, id, &request).await.map(|shown| {
        let mut page = draw(shown, &request, state.settings.kiosk.page_secs);
        page.html = std::mem::take(&mut page.fragment);
        page
    }))
}

/// `GET /assets/<name>-<hash>.<ext>`: the pages' scripts and the web app's style sheet
/// ([`render::assets`]), embedded at build time; any other name is 404. Immutable: a new
/// asset has a new name.
async fn asset(Path(name): Path<String>) -> Response {
    let Some(asset) = render::assets::find(&format!("/assets/{name}")) else {
        return Error::NotFound {
            what: "route",
            index: None,
        }
        .into_response();
    };
    let fixed = [
        (header::CONTENT_TYPE, asset.content_type()),
        (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (fixed, asset.text()).into_response()
}

/// `GET /favicon.ico`: the icon browsers ask every site for (drawn by `assets/favicon.py`),
/// cached for a day.
async fn favicon() -> Response {
    let fixed = [
        (header::CONTENT_TYPE, "image/x-icon"),
        (header::CACHE_CONTROL, "public, max-age=86400"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (fixed, &include_bytes!("../../assets/favicon.ico")[..]).into_response()
}

/// A rendered share page with its security headers: 200, or 404 with the same page for
/// anything private or missing; the error envelope when the store fails.
struct SharePage(Result<Page>);

impl IntoResponse for SharePage {
    fn into_response(self) -> Response {
        match self.0 {
            Ok(page) => crate::web::html(page, StatusCode::NOT_FOUND),
            Err(e) => e.into_response(),
        }
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
