//! `GET /boards` and `GET /boards/{id}`: a signed-in user's boards (their workspace's and
//! those shared with them as a collaborator) and each board's page, drawn as a share page
//! is, with the user's access (kiosk included), live through `/boards/{id}/events` and
//! `/boards/{id}/fragment` (what the page script follows). What each shows is
//! `pinboards::view`'s answer; without a session the pages go to `/login?next=...`, the
//! script's routes are the 404 page. A user who may change the board also gets the
//! editor's tools (`editor.rs`): `?edit=1` for the layout, `?share=1` opens the share dialog.

use std::time::Duration;

use futures_util::StreamExt;

use axum::{
    extract::{OriginalUri, Path, State},
    http::{HeaderMap, StatusCode, Uri},
    response::{IntoResponse, Response},
};

use super::{editor, html, not_found, session::MaybeSignedIn, to_login};
use crate::{
    api::events::EventStream,
    app::AppState,
    auth::{sessions::SignedIn, Scope},
    error::Result,
    events::{Filter, Resume},
    pinboards::view::{self, BoardView, Content, Door, Followed, PageView, Shown, Viewer},
    render,
};

fn viewer(who: Option<&SignedIn>) -> Viewer {
    who.map_or(Viewer::Public, |who| {
        Viewer::SignedIn(who.principal.clone())
    })
}

pub(super) async fn list(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    OriginalUri(uri): OriginalUri,
) -> Response {
    match view::boards(&state, &viewer(who.as_ref())).await {
        Ok(Shown::Found(boards)) => {
            let creates = who
                .as_ref()
                .is_some_and(|who| who.principal.scopes.allows(Scope::PinboardsWrite));
            let form = creates.then(|| editor::new_board_form(boards.is_empty()));
            let owner = who.as_ref().is_some_and(owns);
            let name = who.map(|who| who.name).unwrap_or_default();
            html(
                render::boards_page(&name, owner, &boards, form.as_deref()),
                StatusCode::OK,
            )
        }
        Ok(Shown::SignIn) => to_login(&uri),
        Ok(Shown::NotFound) => not_found(),
        Err(e) => e.into_response(),
    }
}

pub(super) async fn board(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    OriginalUri(uri): OriginalUri,
    Path(id): Path<String>,
) -> Response {
    let kiosk = flag(&uri, "kiosk");
    let shown = match view::page(&state, Door::Board, &id, viewer(who.as_ref())).await {
        Ok(Shown::Found(shown)) => shown,
        Ok(Shown::SignIn) => return to_login(&uri),
        Ok(Shown::NotFound) => return not_found(),
        Err(e) => return e.into_response(),
    };
    let tools = match (&who, &shown.content, kiosk) {
        (Some(who), Content::Board(b), false) => match tools(&state, who, b, &id, &uri).await {
            Ok(tools) => tools,
            Err(e) => return e.into_response(),
        },
        _ => None,
    };
    let page = render::paged(
        board_page(&shown, &id, who, kiosk),
        state.settings.kiosk.page_secs,
    );
    match tools {
        Some(tools) => html(render::with_tools(page, &tools), StatusCode::OK),
        None => html(page, StatusCode::OK),
    }
}

/// Whether `uri`'s query has `name=1`.
fn flag(uri: &Uri, name: &str) -> bool {
    uri.query().is_some_and(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .any(|(k, v)| k == name && (v == "1" || v == "true"))
    })
}

/// The editor's tools of board `b` for `who` (HTML), when they may change anything of it.
async fn tools(
    state: &AppState,
    who: &SignedIn,
    b: &BoardView,
    id: &str,
    uri: &Uri,
) -> Result<Option<String>> {
    let rights = editor::Rights::of(state, &who.principal, id).await?;
    if !rights.any() {
        return Ok(None);
    }
    let editing = rights.edit && flag(uri, "edit");
    let search = editor::search_of(uri);
    let choices = if editing {
        let me = editor::editor_of(state, &who.principal, id).await?;
        editor::choices(state, &me, id, &search).await?
    } else {
        Vec::new()
    };
    let collaborators = if rights.invite {
        editor::collaborators_of(state, &who.principal, id).await?
    } else {
        Vec::new()
    };
    let version = crate::clock::iso(b.board.updated_at);
    let tools = editor::Tools {
        id,
        title: &b.board.title,
        description: b.board.description.as_deref().unwrap_or_default(),
        version: &version,
        sharing: b.board.sharing,
        share_url: crate::pins::shareable_url(state.public_base(), id),
        rights,
        editing,
        share_open: flag(uri, "share"),
        search: &search,
        choices,
        collaborators,
    };
    Ok(Some(tools.render()))
}

/// `GET /boards/{id}/fragment`: the page's body alone, which the page script swaps in; the
/// 404 page's body when the board is gone or the session ended.
pub(super) async fn fragment(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
) -> Response {
    let mut page = match view::page(&state, Door::Board, &id, viewer(who.as_ref())).await {
        Ok(Shown::Found(shown)) => board_page(&shown, &id, who, false),
        Ok(Shown::SignIn | Shown::NotFound) => render::not_found_page(),
        Err(e) => return e.into_response(),
    };
    page.html = std::mem::take(&mut page.fragment);
    html(page, StatusCode::NOT_FOUND)
}

/// The board's page for its reader: following `/boards/{id}`, with their account bar.
fn board_page(shown: &PageView, id: &str, who: Option<SignedIn>, kiosk: bool) -> render::Page {
    let page = render::following(
        render::view_page(shown, id, kiosk),
        &format!("/boards/{id}"),
    );
    let owner = who.as_ref().is_some_and(owns);
    let name = who.map(|who| who.name).unwrap_or_default();
    render::with_account(page, &name, owner)
}

/// Whether the bar offers `who` the owners' sections (People, Keys), as the settings
/// pages' bar does.
fn owns(who: &SignedIn) -> bool {
    who.principal.scopes.allows(Scope::All)
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
    match open_events(&state, viewer(who.as_ref()), &id, &headers, &uri).await {
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
        Ok(Some(who)) => matches!(view::still_reads(state, who.principal, id).await, Ok(true)),
        _ => false,
    }
}

async fn open_events(
    state: &AppState,
    viewer: Viewer,
    id: &str,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<Option<axum::body::Body>> {
    let Some(Followed::Read(me)) = view::follow(state, Door::Board, id, viewer).await? else {
        return Ok(None);
    };
    let resume = Resume::requested_in(headers, uri.query());
    let hub = &state.events;
    let admission = hub.admit(me.subject.id(), &me.workspace_id)?;
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
