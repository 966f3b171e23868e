//! `GET /boards` and `GET /boards/{id}`: a signed-in user's boards (their workspace's and
//! those shared with them as a collaborator) and each board's page, drawn as a share page
//! is, with the user's access (kiosk included), live through `/boards/{id}/events` and
//! `/boards/{id}/fragment` (what the page script follows). Without a session the pages go
//! to `/login?next=...`; the script's routes are the 404 page.

use std::{
    collections::{HashMap, HashSet},
    time::Duration,
};

use futures_util::StreamExt;

use axum::{
    extract::{OriginalUri, Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};

use super::{html, not_found, see_other, session::MaybeSignedIn, SignedIn};
use crate::{
    api::events::EventStream,
    app::AppState,
    auth::{on_board, Principal, Scope, Subject},
    error::Result,
    events::{Filter, Resume},
    pins::rendered,
    render::{self, View},
    store::BoardQuery,
};

/// Most boards listed (each source).
const LISTED: i64 = 500;

/// To sign-in and back to `uri`, or the 404 page while sign-in is off.
fn to_login(state: &AppState, uri: &axum::http::Uri) -> Response {
    if state.oidc.is_none() {
        return not_found();
    }
    let here = uri.path_and_query().map_or("/boards", |p| p.as_str());
    let next: String = url::form_urlencoded::byte_serialize(here.as_bytes()).collect();
    see_other(&format!("/login?next={next}"))
}

pub(super) async fn list(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    OriginalUri(uri): OriginalUri,
) -> Response {
    let Some(who) = who else {
        return to_login(&state, &uri);
    };
    match readable_boards(&state, &who).await {
        Ok(boards) => html(render::boards_page(&who.name, &boards), StatusCode::OK),
        Err(e) => e.into_response(),
    }
}

/// The workspace's boards (when the role reads boards) and the collaborator boards, most
/// recently changed first.
async fn readable_boards(state: &AppState, who: &SignedIn) -> Result<Vec<crate::store::Pinboard>> {
    let me = &who.principal;
    let mut boards = Vec::new();
    if me.scopes.allows(Scope::PinboardsRead) {
        let query = BoardQuery {
            limit: LISTED,
            before_seq: None,
        };
        let own = state.store.list_pinboards(&me.workspace_id, &query).await?;
        boards.extend(own.into_iter().map(|(_, board)| board));
    }
    if let Subject::User(user_id) = &me.subject {
        let mut seen: HashSet<String> = boards.iter().map(|b| b.id.clone()).collect();
        for board in state.store.collaborator_boards(user_id, LISTED).await? {
            if seen.insert(board.id.clone()) {
                boards.push(board);
            }
        }
    }
    boards.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then_with(|| a.id.cmp(&b.id))
    });
    Ok(boards)
}

pub(super) async fn board(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    OriginalUri(uri): OriginalUri,
    Path(id): Path<String>,
) -> Response {
    let Some(who) = who else {
        return to_login(&state, &uri);
    };
    let kiosk = uri
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .any(|(k, v)| k == "kiosk" && (v == "1" || v == "true"))
        })
        .unwrap_or(false);
    match board_page(&state, who, &id, kiosk).await {
        Ok(Some(page)) => html(page, StatusCode::OK),
        Ok(None) => not_found(),
        Err(e) => e.into_response(),
    }
}

/// `GET /boards/{id}/fragment`: the page's body alone, which the page script swaps in; the
/// 404 page's body when the board is gone or the session ended.
pub(super) async fn fragment(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
) -> Response {
    let found = match who {
        Some(who) => board_page(&state, who, &id, false).await,
        None => Ok(None),
    };
    match found {
        Ok(page) => {
            let mut page = page.unwrap_or_else(render::not_found_page);
            page.html = std::mem::take(&mut page.fragment);
            html(page, StatusCode::NOT_FOUND)
        }
        Err(e) => e.into_response(),
    }
}

/// `GET /boards/{id}/events`: the board's events (its changes and those of its pins) for a
/// user who may read it, counted against their streams like the API's; the 404 page
/// otherwise.
pub(super) async fn events(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    OriginalUri(uri): OriginalUri,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(who) = who else {
        return not_found();
    };
    match open_events(&state, who, &id, &headers, &uri).await {
        Ok(Some(body)) => EventStream::new(while_allowed(state, headers, id, body)).into_response(),
        Ok(None) => not_found(),
        Err(e) => e.into_response(),
    }
}

/// How often an open board stream checks that its session still holds and may read the
/// board: a sign-out, an expired session or lost access ends it within this.
const RECHECK: Duration = Duration::from_secs(5);

/// `body`, ended once the session in `headers` no longer reads board `id`.
fn while_allowed(
    state: AppState,
    headers: HeaderMap,
    id: String,
    body: axum::body::Body,
) -> axum::body::Body {
    let mut tick = tokio::time::interval(RECHECK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let frames = body.into_data_stream();
    let checked = futures_util::stream::unfold(
        (frames, tick, state, headers, id),
        |(mut frames, mut tick, state, headers, id)| async move {
            loop {
                tokio::select! {
                    frame = frames.next() => {
                        return frame.map(|f| (f, (frames, tick, state, headers, id)));
                    }
                    _ = tick.tick() => {
                        if !still_allowed(&state, &headers, &id).await {
                            return None;
                        }
                    }
                }
            }
        },
    );
    axum::body::Body::from_stream(checked)
}

async fn still_allowed(state: &AppState, headers: &HeaderMap, id: &str) -> bool {
    match super::session_principal(state, headers).await {
        Ok(Some(who)) => matches!(readable(state, who.principal, id).await, Ok(Some(_))),
        _ => false,
    }
}

async fn open_events(
    state: &AppState,
    who: SignedIn,
    id: &str,
    headers: &HeaderMap,
    uri: &axum::http::Uri,
) -> Result<Option<axum::body::Body>> {
    let Some(me) = readable(state, who.principal, id).await? else {
        return Ok(None);
    };
    if state
        .store
        .get_pinboard(&me.workspace_id, id)
        .await?
        .is_none()
    {
        return Ok(None);
    }
    let resume = Resume::requested_in(headers, uri.query());
    let hub = &state.events;
    let admission = hub.admit(
        format!("credential:{}", me.subject.id()),
        hub.settings().max_streams_per_key,
    )?;
    let filter = Filter {
        pinboard_ids: vec![id.to_owned()],
        dataset_notices: true,
        ..Filter::default()
    };
    Ok(Some(
        hub.stream(&me.workspace_id, filter, resume, admission)
            .await?,
    ))
}

/// The user as they act on board `id`, when they may read it.
async fn readable(state: &AppState, who: Principal, id: &str) -> Result<Option<Principal>> {
    if !id.starts_with("pb-") || id.contains('\0') {
        return Ok(None);
    }
    let me = on_board(state, who, id).await?;
    Ok(me.scopes.allows(Scope::PinboardsRead).then_some(me))
}

/// The board's page when `who` may read it (their role, or a collaborator role on it).
async fn board_page(
    state: &AppState,
    who: SignedIn,
    id: &str,
    kiosk: bool,
) -> Result<Option<render::Page>> {
    let Some(me) = readable(state, who.principal, id).await? else {
        return Ok(None);
    };
    // The newest event id before the state is read: the page's script follows the stream
    // from there, so a change committed while the page renders is not missed.
    let since = state.store.event_bounds().await?.1;
    let Some(board) = state.store.get_pinboard(&me.workspace_id, id).await? else {
        return Ok(None);
    };
    let mut placed = state.store.placed_pins(&me.workspace_id, id).await?;
    let pins = placed.iter().map(|p| p.pin.clone()).collect();
    let mut blocks = HashMap::new();
    for resolved in rendered::for_page(state, id, pins).await? {
        blocks.insert(resolved.pin.id.clone(), resolved.blocks_html());
        if let Some(slot) = placed.iter_mut().find(|p| p.pin.id == resolved.pin.id) {
            slot.pin = resolved.pin;
        }
    }
    let view = View {
        kiosk,
        live: Some((id.to_owned(), since)),
    };
    let page = render::board_page(&board, &placed, &blocks, &view);
    let page = render::following(page, &format!("/boards/{id}"));
    Ok(Some(render::with_account(page, &who.name)))
}
