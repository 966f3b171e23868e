//! The pages of playlists and embeds (CONTRACT.md 17), each one board's (or pin's) page as
//! the share and board pages draw it, through `pinboards::view`:
//!
//! - `/play/{id}?at=<n>`: for a signed-in member who may read boards, the playlist's n-th
//!   board in kiosk mode, live as `/boards/{id}` is (following `/boards/{board}/...`);
//! - `/share/playlist/{id}?at=<n>`: the same for anyone while every board of the playlist is
//!   shared with anyone, live as `/share/{board}` is; the 404 page otherwise;
//!
//! each with `assets/play.js`, which opens the next board's page after the board's
//! `seconds` (`data-next`, `data-seconds` on `<body>`); and
//!
//! - `/embed/{id}`: the live share page of a pin or board shared with anyone, without its
//!   header and footer, which only the item's `embed_origins` may frame
//!   ([`super::framed_html`]).

use axum::{
    extract::{OriginalUri, Path, State},
    http::{StatusCode, Uri},
    response::{IntoResponse, Response},
};

use super::{framed_html, html, not_found, session::MaybeSignedIn, to_login};
use crate::{
    app::AppState,
    pinboards::{
        sharing,
        view::{self, Door, Shown, Viewer},
    },
    playlists::ops as playlists,
    render::{self, Turn, View},
    store::{Playlist, PlaylistItem},
};

/// The value of `name` in `uri`'s query, if sent.
fn query_value(uri: &Uri, name: &str) -> Option<String> {
    url::form_urlencoded::parse(uri.query()?.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// The turn `?at=` asks for (from 0, around the playlist; anything else is the first), its
/// item and the turn after it; `None` for a playlist without boards.
fn turn<'p>(playlist: &'p Playlist, uri: &Uri) -> Option<(&'p PlaylistItem, usize)> {
    let len = playlist.items.len();
    let at = query_value(uri, "at")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let at = at.checked_rem(len)?;
    Some((&playlist.items[at], (at + 1) % len))
}

/// How a playlist's turn is shown: kiosk mode (a board too long for the screen turning
/// its pages every `page_secs`, as `kiosk.page_secs` says), with the script that opens
/// `next` after `seconds`.
fn turning(next: String, seconds: i64, page_secs: u64) -> View {
    View {
        kiosk: true,
        page_secs: Some(page_secs),
        scripts: vec![render::assets::PLAY.path().to_owned()],
        turn: Some(Turn { next, seconds }),
        ..View::default()
    }
}

/// The page of a playlist without boards (all of them deleted).
fn nothing_to_play() -> Response {
    let page = render::message_page(
        "Nothing to play",
        "This playlist has no boards left. Add boards to it to play it.",
        "/boards",
    );
    html(page, StatusCode::OK)
}

/// `GET /play/{id}`: the playlist's turn `?at=` for a signed-in reader; without a session,
/// sign-in and back (while web sign-in is on); the 404 page for anyone who may not read it.
pub(super) async fn play(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    OriginalUri(uri): OriginalUri,
    Path(id): Path<String>,
) -> Response {
    let Some(who) = who else {
        return if state.web_sign_in() {
            to_login(&uri)
        } else {
            not_found()
        };
    };
    let playlist = match playlists::to_play(&state, who.principal.clone(), &id).await {
        Ok(Some(playlist)) => playlist,
        Ok(None) => return not_found(),
        Err(e) => return e.into_response(),
    };
    let Some((item, next)) = turn(&playlist, &uri) else {
        return nothing_to_play();
    };
    let board = &item.pinboard_id;
    match view::page(&state, Door::Board, board, Viewer::SignedIn(who.principal)).await {
        Ok(Shown::Found(shown)) => {
            let how = View {
                base: Some(format!("/boards/{board}")),
                ..turning(
                    format!("/play/{}?at={next}", playlist.id),
                    item.seconds,
                    state.settings.kiosk.page_secs,
                )
            };
            html(render::shown_page(&shown, board, how), StatusCode::OK)
        }
        Ok(Shown::NotFound | Shown::SignIn) => not_found(),
        Err(e) => e.into_response(),
    }
}

/// `GET /share/playlist/{id}`: the playlist's turn `?at=` for anyone while every board of it
/// is shared with anyone; the 404 page otherwise.
pub(super) async fn shared(
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path(id): Path<String>,
) -> Response {
    let playlist = match playlists::shared(&state, &id).await {
        Ok(Some(playlist)) => playlist,
        Ok(None) => return not_found(),
        Err(e) => return e.into_response(),
    };
    let Some((item, next)) = turn(&playlist, &uri) else {
        return not_found();
    };
    let board = &item.pinboard_id;
    match view::page(&state, Door::Share, board, Viewer::Public).await {
        Ok(Shown::Found(shown)) => {
            let next = format!("/share/playlist/{}?at={next}", playlist.id);
            let page = render::shown_page(
                &shown,
                board,
                turning(next, item.seconds, state.settings.kiosk.page_secs),
            );
            html(page, StatusCode::OK)
        }
        Ok(Shown::NotFound | Shown::SignIn) => not_found(),
        Err(e) => e.into_response(),
    }
}

/// `GET /embed/{id}`: the live share page of a pin or board shared with anyone (kiosk with
/// `?kiosk=1`), without header or footer, framable by its `embed_origins` alone; the 404
/// page (which refuses every frame) for anything else, also what is shared only after
/// sign-in: a frame on another site carries no session.
pub(super) async fn embed(
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path(id): Path<String>,
) -> Response {
    let shown = match view::page(&state, Door::Share, &id, Viewer::Public).await {
        Ok(Shown::Found(shown)) => shown,
        Ok(Shown::NotFound | Shown::SignIn) => return not_found(),
        Err(e) => return e.into_response(),
    };
    let origins = match sharing::embed_origins_shown(&state, &id).await {
        Ok(origins) => origins,
        Err(e) => return e.into_response(),
    };
    let kiosk = query_value(&uri, "kiosk").is_some_and(|v| v == "1" || v == "true");
    let how = View {
        kiosk,
        bare: true,
        ..View::default()
    };
    let page = render::shown_page(&shown, &id, how);
    framed_html(page, StatusCode::OK, &origins)
}
