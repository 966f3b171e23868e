//! What a page shows of one board or pin (CONTRACT.md 12, 13): the share pages
//! (`/share/{id}`), the signed-in board pages (`/boards/{id}`), their fragments and their
//! streams, and the board list of `/boards`, all ask here. Here and only here is decided
//! who may see what ([`reader`], [`sign_in_only`]); the answer is typed: the board with its
//! placed pins (or the pin) resolved for drawing and where to follow it from, or
//! nothing to show, or sign-in first.

use std::{
    collections::{HashMap, HashSet},
    future::{ready, IntoFuture, Ready},
};

use crate::{
    app::AppState,
    auth::{authorize, Access, Principal, Scope, Subject},
    error::{Error, Result},
    pins::rendered::{self, Resolved},
    store::{BoardQuery, Pin, Pinboard, PlacedPin, Sharing},
};

/// Most boards listed on `/boards` (each source).
const LISTED: i64 = 500;

/// Who looks at a page.
pub enum Viewer {
    /// No credential and no web session.
    Public,
    /// A credential was sent and refused: shown what anyone is shown, and never sent to sign
    /// in (a client that brings its own credential would not use a session).
    Refused,
    /// A bearer credential or a web session's user.
    SignedIn(Principal),
}

/// A viewer already known is answered at once: [`page`] takes a viewer or a future of one.
impl IntoFuture for Viewer {
    type Output = Result<Viewer>;
    type IntoFuture = Ready<Result<Viewer>>;

    fn into_future(self) -> Self::IntoFuture {
        ready(Ok(self))
    }
}

/// Where a board or pin is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Door {
    /// `/share/{id}`: a pin or board shared with anyone, or, shared for signed-in visitors,
    /// to a viewer who may read it.
    Share,
    /// `/boards/{id}`: any board a signed-in viewer may read, shared or not.
    Board,
}

/// What a page of a viewer shows.
pub enum Shown<T> {
    Found(T),
    /// Nothing this viewer may see (missing, private, another workspace's): the 404 page,
    /// the same whatever the reason.
    NotFound,
    /// Shown only after sign-in, to a viewer who has not signed in (web sign-in on).
    SignIn,
}

/// A board or pin as a page draws it.
pub struct PageView {
    pub content: Content,
    /// Where the page's stream resumes, when the page follows it live: the newest event of
    /// the item's workspace, read before the content (so a change committed while the page
    /// renders is not missed). At the share door the token of it (`events/token.rs`: an
    /// anonymous page shows no event id, which would tell other workspaces' write volume),
    /// at the board door the id itself, as `/v1/events` shows the same reader. A page shown
    /// only after sign-in at the share link is drawn once: it has no public stream to follow.
    pub since: Option<String>,
}

pub enum Content {
    Board(BoardView),
    Pin(PinView),
}

/// A board with its placed pins in grid order, their templates resolved.
pub struct BoardView {
    pub board: Pinboard,
    pub placed: Vec<PlacedPin>,
    /// Each pin's evaluated blocks as HTML, by pin id.
    pub blocks: HashMap<String, String>,
}

/// A pin, its templates resolved, with its evaluated blocks as HTML.
pub struct PinView {
    pub pin: Pin,
    pub blocks: String,
}

/// What a share link or board page can name: `pb-` boards, `p-` pins.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Board,
    Pin,
}

impl Kind {
    fn of(id: &str) -> Option<Kind> {
        if id.contains('\0') {
            None
        } else if id.starts_with("pb-") {
            Some(Kind::Board)
        } else if id.starts_with("p-") {
            Some(Kind::Pin)
        } else {
            None
        }
    }
}

/// The one answer to "may `who` read item `id`": `who` as they act on it (a board's
/// collaborator role applied) when their scopes let them read it.
async fn reader(
    state: &AppState,
    who: Principal,
    kind: Kind,
    id: &str,
) -> Result<Option<Principal>> {
    let access = match kind {
        Kind::Board => Access::board(Scope::PinboardsRead),
        Kind::Pin => Access::workspace(Scope::PinsRead),
    };
    match authorize(state, who, access, Some(id)).await {
        Ok(me) => Ok(Some(me)),
        Err(Error::ScopeRequired(_) | Error::Forbidden(_)) => Ok(None),
        Err(other) => Err(other),
    }
}

/// The one answer to "is this shown only after sign-in": shared, for signed-in visitors.
fn sign_in_only(sharing: Sharing) -> bool {
    sharing.is_public && sharing.require_sign_in
}

/// Whether `door` shows a reader an item shared as `sharing`: the share link what is shared
/// for signed-in visitors (what is shared with anyone it shows everyone before asking who
/// looks), a board page whatever the sharing.
fn shows_reader(door: Door, sharing: Sharing) -> bool {
    match door {
        Door::Share => sign_in_only(sharing),
        Door::Board => true,
    }
}

/// What a viewer without a session gets where a sign-in could show more: sign-in while web
/// sign-in is on, else nothing.
fn sign_in_first<T>(state: &AppState) -> Shown<T> {
    if state.web_sign_in() {
        Shown::SignIn
    } else {
        Shown::NotFound
    }
}

/// What `viewer` sees of pin or board `id` at `door`. `viewer` is awaited only when it
/// matters (not for what is shared with anyone), so a public page costs no credential or
/// session check.
pub async fn page(
    state: &AppState,
    door: Door,
    id: &str,
    viewer: impl IntoFuture<Output = Result<Viewer>>,
) -> Result<Shown<PageView>> {
    match door {
        Door::Share => {
            let Some(kind) = Kind::of(id) else {
                return Ok(Shown::NotFound);
            };
            if let Some(ws) = state.store.shared_workspace(id).await? {
                let since = state.events.share_since(&ws).await?;
                if let Some(content) = shared_with_anyone(state, kind, id).await? {
                    return Ok(found(Some(content), Some(since)));
                }
            }
            match viewer.await? {
                Viewer::SignedIn(who) => Ok(match reader(state, who, kind, id).await? {
                    Some(me) => found(read(state, door, &me, kind, id).await?, None),
                    None => Shown::NotFound,
                }),
                Viewer::Public if asks_sign_in(state, kind, id).await? => Ok(sign_in_first(state)),
                Viewer::Public | Viewer::Refused => Ok(Shown::NotFound),
            }
        }
        Door::Board => match viewer.await? {
            Viewer::SignedIn(who) => {
                let Some(Kind::Board) = Kind::of(id) else {
                    return Ok(Shown::NotFound);
                };
                let Some(me) = reader(state, who, Kind::Board, id).await? else {
                    return Ok(Shown::NotFound);
                };
                let since = state.store.newest_event_of(&me.workspace_id).await?;
                Ok(found(
                    read(state, door, &me, Kind::Board, id).await?,
                    Some(since.to_string()),
                ))
            }
            Viewer::Public => Ok(sign_in_first(state)),
            Viewer::Refused => Ok(Shown::NotFound),
        },
    }
}

fn found(content: Option<Content>, since: Option<String>) -> Shown<PageView> {
    match content {
        Some(content) => Shown::Found(PageView { content, since }),
        None => Shown::NotFound,
    }
}

/// The item when it is shared with anyone (the store's query decides), resolved in its
/// workspace.
async fn shared_with_anyone(state: &AppState, kind: Kind, id: &str) -> Result<Option<Content>> {
    Ok(match kind {
        Kind::Board => match state.store.shared_board(id).await? {
            Some((board, placed)) => Some(board_view(state, None, id, board, placed).await?),
            None => None,
        },
        Kind::Pin => match state.store.shared_pin(id).await? {
            Some(pin) => pin_view(rendered::for_page(state, id, vec![pin]).await?),
            None => None,
        },
    })
}

/// The item of `me`'s workspace when `door` shows it to them, resolved.
async fn read(
    state: &AppState,
    door: Door,
    me: &Principal,
    kind: Kind,
    id: &str,
) -> Result<Option<Content>> {
    let ws = &me.workspace_id;
    Ok(match kind {
        Kind::Board => match state.store.get_pinboard(ws, id).await? {
            Some(board) if shows_reader(door, board.sharing) => {
                let placed = state.store.placed_pins(ws, id).await?;
                Some(board_view(state, Some(ws), id, board, placed).await?)
            }
            _ => None,
        },
        Kind::Pin => {
            let found = state.store.get_pins(ws, &[id.to_owned()]).await?;
            match found.into_iter().next() {
                Some(pin) if shows_reader(door, pin.sharing()) => {
                    pin_view(rendered::resolve(state, ws, vec![pin]).await?)
                }
                _ => None,
            }
        }
    })
}

/// For a visitor who has not signed in: whether item `id` is shown only after sign-in.
async fn asks_sign_in(state: &AppState, kind: Kind, id: &str) -> Result<bool> {
    if !state.web_sign_in() {
        return Ok(false);
    }
    let Some(ws) = state.store.workspace_of(id).await? else {
        return Ok(false);
    };
    Ok(match kind {
        Kind::Board => state
            .store
            .get_pinboard(&ws, id)
            .await?
            .is_some_and(|b| sign_in_only(b.sharing)),
        Kind::Pin => state
            .store
            .get_pins(&ws, &[id.to_owned()])
            .await?
            .first()
            .is_some_and(|p| sign_in_only(p.sharing())),
    })
}

/// The board with its pins resolved in workspace `ws` (or the board's own, looked up).
async fn board_view(
    state: &AppState,
    ws: Option<&str>,
    id: &str,
    board: Pinboard,
    mut placed: Vec<PlacedPin>,
) -> Result<Content> {
    let pins = placed.iter().map(|p| p.pin.clone()).collect();
    let resolved = match ws {
        Some(ws) => rendered::resolve(state, ws, pins).await?,
        None => rendered::for_page(state, id, pins).await?,
    };
    let mut blocks = HashMap::new();
    for resolved in resolved {
        blocks.insert(resolved.pin.id.clone(), resolved.blocks_html());
        if let Some(slot) = placed.iter_mut().find(|p| p.pin.id == resolved.pin.id) {
            slot.pin = resolved.pin;
        }
    }
    Ok(Content::Board(BoardView {
        board,
        placed,
        blocks,
    }))
}

/// The one pin resolved, if it still was.
fn pin_view(resolved: Vec<Resolved>) -> Option<Content> {
    resolved.into_iter().next().map(|r| {
        let blocks = r.blocks_html();
        Content::Pin(PinView { pin: r.pin, blocks })
    })
}

/// What a page's stream follows.
pub enum Followed {
    /// An item shared with anyone, of this workspace: the share stream, which carries only
    /// what the share page shows.
    Shared { workspace_id: String },
    /// A board its reader may read, as they act on it.
    Read(Principal),
}

/// What `viewer`'s stream of item `id` at `door` follows, when it may follow it. A share
/// link follows only what is shared with anyone (a page shown only after sign-in is drawn
/// once); a board page a board its reader may read.
pub async fn follow(
    state: &AppState,
    door: Door,
    id: &str,
    viewer: Viewer,
) -> Result<Option<Followed>> {
    let Some(kind) = Kind::of(id) else {
        return Ok(None);
    };
    match (door, viewer) {
        (Door::Share, _) => Ok(state
            .store
            .shared_workspace(id)
            .await?
            .map(|workspace_id| Followed::Shared { workspace_id })),
        (Door::Board, Viewer::SignedIn(who)) if kind == Kind::Board => {
            let Some(me) = reader(state, who, kind, id).await? else {
                return Ok(None);
            };
            let exists = state
                .store
                .get_pinboard(&me.workspace_id, id)
                .await?
                .is_some();
            Ok(exists.then_some(Followed::Read(me)))
        }
        (Door::Board, _) => Ok(None),
    }
}

/// Whether `who` may still read board `id`: what an open board stream checks as it runs.
pub async fn still_reads(state: &AppState, who: Principal, id: &str) -> Result<bool> {
    Ok(match Kind::of(id) {
        Some(Kind::Board) => reader(state, who, Kind::Board, id).await?.is_some(),
        _ => false,
    })
}

/// The boards `viewer` may read, for `/boards`: their workspace's (when their role reads
/// boards) and those they collaborate on, most recently changed first.
pub async fn boards(state: &AppState, viewer: &Viewer) -> Result<Shown<Vec<Pinboard>>> {
    let who = match viewer {
        Viewer::SignedIn(who) => who,
        Viewer::Public => return Ok(sign_in_first(state)),
        Viewer::Refused => return Ok(Shown::NotFound),
    };
    let mut boards = Vec::new();
    if who.scopes.allows(Scope::PinboardsRead) {
        let query = BoardQuery {
            limit: LISTED,
            before_seq: None,
        };
        let own = state
            .store
            .list_pinboards(&who.workspace_id, &query)
            .await?;
        boards.extend(own.into_iter().map(|(_, board)| board));
    }
    if let Subject::User(user_id) = &who.subject {
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
    Ok(Shown::Found(boards))
}
