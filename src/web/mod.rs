//! The signed-in web (CONTRACT.md 13, 16): sign-in with the identity provider (`/login`,
//! `/login/provider`, `/auth/callback`, `/logout`, in `login.rs`) or with a password (the
//! form on `/login`, posted to `/login`, and the owner's setup link `/setup/{token}`, in
//! `local.rs`, their pages in `forms.rs`), the pages of a signed-in user (`/boards`,
//! `/boards/{id}`, in `boards.rs`, and the board editor's routes in `editor.rs`), the pages
//! of playlists and embeds (`/play/{id}`, `/share/playlist/{id}`, `/embed/{id}`, in
//! `play.rs`), the owners'
//! settings (`/settings/keys` in `keys.rs`, `/settings/people` in `people.rs`) and an
//! invitation's page (`/invite/{token}`, in `people.rs`), and the documentation (`/docs`,
//! `/docs/pin-types`, in `docs.rs`). The app's own pages share their
//! shell (`layout.rs`). The session cookie is read here and only here: the API
//! under `/v1` never looks at cookies, so it stays bearer-only.

mod boards;
mod docs;
mod editor;
mod forms;
mod keys;
mod layout;
mod local;
mod login;
mod people;
mod play;
mod session;

use axum::{
    http::{header, Extensions, HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, Version},
    response::{IntoResponse, Response},
    routing::{get, post},
    Router,
};
use tower_http::{
    compression::{
        predicate::{Predicate, SizeAbove},
        CompressionLayer,
    },
    CompressionLevel,
};

pub(crate) use session::session_principal;
pub use session::{safe_next, SESSION_COOKIE};

use crate::{app::AppState, render::Page};

/// The routes of the signed-in web, outside the API and its rate limits. Like share pages,
/// every page, fragment and stream (and starting and finishing a sign-in, which need no
/// credential) counts per client address (`rate_limits.share.per_minute`, the same minute
/// as share pages), before its session is looked up; a signed-in user's requests count
/// per user too (`session::MaybeSignedIn`). Signing out is never refused.
pub fn routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/login", get(login::login).post(local::password))
        .route("/login/provider", get(login::provider))
        .route("/setup/{token}", get(local::setup_form).post(local::setup))
        .route("/auth/callback", get(login::callback))
        .route("/boards", get(boards::list).post(editor::create))
        .merge(watched())
        .merge(editor::routes())
        .route("/settings/keys", get(keys::page).post(keys::generate))
        .route("/settings/keys/{id}/revoke", post(keys::revoke))
        .route("/settings/people", get(people::page).post(people::invite))
        .route(
            "/settings/people/invitations/{id}/revoke",
            post(people::revoke),
        )
        .route(
            "/invite/{token}",
            get(people::invitation).post(people::join),
        )
        .route_layer(axum::middleware::from_fn_with_state(state, per_address))
        .route("/logout", post(login::logout))
        .merge(docs::assets())
}

/// The pages people watch and read, with their fragments and streams: the front door, a
/// board, a playlist, an embed, the limits, the documentation. Compressed ([`compression`]);
/// none shows a secret.
fn watched() -> Router<AppState> {
    Router::new()
        .route("/", get(home))
        .route("/upgrade", get(upgrade))
        .route("/boards/{id}", get(boards::board))
        .route(
            "/boards/{id}/fragment",
            get(boards::fragment).layer(compression(CompressionLevel::Fastest)),
        )
        .route("/boards/{id}/events", get(boards::events))
        .route("/play/{id}", get(play::play))
        .route("/share/playlist/{id}", get(play::shared))
        .route("/embed/{id}", get(play::embed))
        .merge(docs::pages())
        .layer(compression(CompressionLevel::Default))
}

/// Gzip for the browsers that take it (`Accept-Encoding`, answered with `Vary`), on HTML,
/// CSS and JavaScript over 1 KiB: a board of 20 pins is 32 kB of HTML, 8.3 kB gzipped, and
/// a live page fetches the board's body (20 kB) again after each change.
/// Layered on the routes of pages people watch (share, board, playlist and embed pages,
/// their fragments, the front door, the documentation) and of their assets (Redoc's bundle,
/// 1.1 MB, is gzipped once by `docs.rs` instead). Not on the API
/// (JSON to automations, mostly on the same network, where compressing each answer costs
/// more than it saves; a proxy in front can), streams (never `text/event-stream`: an event
/// would wait in the encoder), nor the pages that take a password or show a secret once (a
/// new key, an invitation): compressed beside text someone else chose, a secret leaks by
/// the size (BREACH).
///
/// `level`: zlib's default (6) for pages and assets, loaded once; `Fastest` (1) for
/// fragments, which every viewer fetches after each change: a 20-pin board's fragment is
/// 4.2 kB at 6 and 5.6 kB at 1, which costs a third of the CPU (the fragment route served
/// 0.68x the requests of plain at 6, 0.83-0.92x at 1; bench/README).
pub(crate) fn compression(level: CompressionLevel) -> CompressionLayer<impl Predicate> {
    let text = |_: StatusCode, _: Version, headers: &HeaderMap, _: &Extensions| {
        let kind = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        ["text/html", "text/css", "text/javascript"]
            .iter()
            .any(|text| kind.starts_with(text))
    };
    CompressionLayer::new()
        .quality(level)
        .compress_when(SizeAbove::new(1024).and(text))
}

/// `/upgrade`: the limits of this server and who can raise them (see
/// [`crate::render::rate_limits_page`]).
async fn upgrade(axum::extract::State(state): axum::extract::State<AppState>) -> Response {
    let limits = &state.settings.rate_limits;
    let tiers: Vec<(&str, u32, u32)> = [
        crate::auth::Tier::Starter,
        crate::auth::Tier::Professional,
        crate::auth::Tier::Team,
    ]
    .into_iter()
    .map(|tier| {
        let of = limits.tier(tier);
        (tier.as_str(), of.per_minute, of.per_hour)
    })
    .collect();
    let writes = (
        limits.write_bucket.capacity,
        limits.write_bucket.window_secs,
    );
    html(
        crate::render::rate_limits_page(&tiers, writes),
        StatusCode::OK,
    )
}

async fn per_address(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    match crate::limits::count_share_request(&state, req.headers(), req.extensions()) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

/// `/`: the front door, where sign-out lands. With web sign-in on, the board list for a
/// signed-in visitor and a sign-in link otherwise; always the links to the API reference.
async fn home(
    axum::extract::State(state): axum::extract::State<AppState>,
    session::MaybeSignedIn(who): session::MaybeSignedIn,
) -> Response {
    if who.is_some() && state.web_sign_in() {
        return see_other("/boards");
    }
    html(
        crate::render::signed_out_page(state.web_sign_in()),
        StatusCode::OK,
    )
}

/// Every HTML page's response (share pages, signed-in pages, the 404 page, sign-in pages):
/// `status` when the page shows nothing, and the one set of security headers. The page's
/// own CSP and referrer policy (`same-origin` on pages with the sign-out form: under
/// `no-referrer` a browser sends `Origin: null` with it); never cached or indexed; never in
/// a frame (`X-Frame-Options: DENY` and `frame-ancestors 'none'`: clickjacking; embedding
/// is for a page of its own, [`framed_html`]).
pub(crate) fn html(page: Page, status: StatusCode) -> Response {
    respond(page, status, None)
}

/// An embed page's response (`/embed/{id}`): [`html`]'s, but framable by the pages of
/// `origins` alone (`frame-ancestors` lists them; `'none'` when there are none) and without
/// `X-Frame-Options`, whose `DENY` would refuse them too.
pub(crate) fn framed_html(page: Page, status: StatusCode, origins: &[String]) -> Response {
    respond(page, status, Some(origins))
}

/// The response of a page that may be framed by `framers` (`None`: by no one).
fn respond(mut page: Page, status: StatusCode, framers: Option<&[String]>) -> Response {
    let ancestors = match framers {
        Some(origins) if !origins.is_empty() => origins.join(" "),
        _ => "'none'".to_owned(),
    };
    page.csp = format!("{}; frame-ancestors {ancestors}", page.csp);
    let Ok(csp) = HeaderValue::from_str(&page.csp) else {
        return crate::Error::internal("page policy is not a header value").into_response();
    };
    let status = if page.found { StatusCode::OK } else { status };
    let mut response = (status, page.html).into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, page.referrer),
        (header::CACHE_CONTROL, "no-store"),
        (HeaderName::from_static("x-robots-tag"), "noindex"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if framers.is_none() {
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    response
}

/// The 404 page: what a visitor sees for anything they may not read.
pub(crate) fn not_found() -> Response {
    html(crate::render::not_found_page(), StatusCode::NOT_FOUND)
}

/// To sign-in, and back to `uri` (this page) after: `/login?next=<uri>`.
pub(crate) fn to_login(uri: &Uri) -> Response {
    let here = uri.path_and_query().map_or("/", |p| p.as_str());
    let next: String = url::form_urlencoded::byte_serialize(here.as_bytes()).collect();
    see_other(&format!("/login?next={next}"))
}

/// A `303 See Other` to `location` (a path or the provider's URL), never cached.
pub(crate) fn see_other(location: &str) -> Response {
    let Ok(value) = HeaderValue::from_str(location) else {
        return not_found();
    };
    let mut response = StatusCode::SEE_OTHER.into_response();
    response.headers_mut().insert(header::LOCATION, value);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
