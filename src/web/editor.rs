//! The board editor of the web app (CONTRACT.md 16): "New board" on `/boards`, and on
//! `/boards/{id}` moving, resizing, adding and taking off pins, renaming, describing and
//! deleting the board, its share settings and its collaborators. Every change is a
//! same-origin `POST` to a route under `/boards` (its `Origin` checked, the session cookie its
//! credential, never the bearer API) that calls the same operation as the API, after the one
//! authorisation point ([`crate::auth::authorize`]) says the session's user may: so the
//! checks, the board's `updated_at` and the events are the API's, and other viewers see the
//! change through the stream they already follow.
//!
//! Layout and board changes carry the board's version as the page showed it (its
//! `updated_at`, `version`): when the board changed since, the answer is 409 `CONFLICT` and
//! the editor shows the current layout. Forms work without the page script (each answers a
//! `303` back to the board, or a page saying what went wrong); the script (assets/editor.js)
//! sends the same forms with `Accept: application/json` and gets `{version}` or the error
//! envelope.

mod markup;

use axum::{
    body::Body,
    extract::{Path, State},
    http::{header, HeaderMap, StatusCode, Uri},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use serde::{de::DeserializeOwned, Deserialize};
use serde_json::json;

pub(super) use markup::{new_board_form, Tools};

use super::{html, login::refuse_cross_site, not_found, see_other, session::MaybeSignedIn};
use crate::{
    app::AppState,
    auth::{authorize, sessions::SignedIn, Access, Principal, Reach, Scope},
    clock,
    error::{Error, Result},
    pinboards::{
        collaborators::{self, AddBody, CollaboratorRecord, RoleBody},
        ops::{self, MoveBody, PlaceBody},
        sharing::{self, ShareBody},
        view, CreateBoardBody, UpdateBoardBody,
    },
    pins::ops::ListParams,
    render,
};

/// The largest form read: a board's description (2000 characters) fits many times over.
const FORM_BYTES: usize = 32 * 1024;
/// Longest picker search, in characters.
const QUERY_CHARS: usize = 100;
/// Most pins the picker shows, and most of the workspace's pins it looks through.
const PICKED: usize = 30;
const SCANNED_PAGES: usize = 5;

/// The routes of board changes (besides `POST /boards`, in `mod.rs` with `GET /boards`).
pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/boards/{id}/picker", get(picker))
        .route("/boards/{id}/settings", post(settings))
        .route("/boards/{id}/delete", post(delete))
        .route("/boards/{id}/share", post(share))
        .route("/boards/{id}/pins", post(place))
        .route("/boards/{id}/pins/{pin_id}", post(move_pin))
        .route("/boards/{id}/pins/{pin_id}/remove", post(unplace))
        .route("/boards/{id}/collaborators", post(invite))
        .route("/boards/{id}/collaborators/{user_id}", post(change_role))
        .route(
            "/boards/{id}/collaborators/{user_id}/remove",
            post(remove_collaborator),
        )
}

/// What the editor's user may do on one board: each answered by the one authorisation point.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Rights {
    /// `pinboards:write`: the layout, the board's name, description and deletion.
    pub edit: bool,
    /// `pins:share`: the share settings.
    pub share: bool,
    /// `pinboards:invite`: the collaborators.
    pub invite: bool,
}

impl Rights {
    pub(super) async fn of(state: &AppState, who: &Principal, id: &str) -> Result<Rights> {
        Ok(Rights {
            edit: allowed(state, who, id, Scope::PinboardsWrite).await?,
            share: allowed(state, who, id, Scope::PinsShare).await?,
            invite: allowed(state, who, id, Scope::PinboardsInvite).await?,
        })
    }

    pub(super) fn any(self) -> bool {
        self.edit || self.share || self.invite
    }
}

async fn allowed(state: &AppState, who: &Principal, id: &str, scope: Scope) -> Result<bool> {
    match authorize(state, who.clone(), Access::board(scope), Some(id)).await {
        Ok(_) => Ok(true),
        Err(Error::Forbidden(_) | Error::ScopeRequired(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// `who` as they act on board `id` for `scope`. Refused: 403 for a user who may read the
/// board (they know it exists), the 404 of a missing board for anyone else.
async fn acting(state: &AppState, who: &SignedIn, id: &str, scope: Scope) -> Result<Principal> {
    match authorize(state, who.principal.clone(), Access::board(scope), Some(id)).await {
        Err(Error::Forbidden(_) | Error::ScopeRequired(_)) => {
            if view::still_reads(state, who.principal.clone(), id).await? {
                Err(Error::Forbidden(
                    "your role lets you view this board, not change it".into(),
                ))
            } else {
                Err(board_missing())
            }
        }
        other => other,
    }
}

fn board_missing() -> Error {
    Error::NotFound {
        what: "pinboard",
        index: None,
    }
}

/// The board's version: its `updated_at` as the API's record shows it.
async fn version_of(state: &AppState, me: &Principal, id: &str) -> Result<String> {
    Ok(ops::get(state, me, id).await?.board.updated_at)
}

/// The board's version a form carries (its `updated_at` as the page showed it), for the
/// operation to compare inside its write: 409 when the board moved on since.
fn since(version: &str) -> Result<Option<i64>> {
    chrono::DateTime::parse_from_rfc3339(version)
        .ok()
        .filter(|_| version.len() <= 64)
        .map(|at| Some(at.timestamp_millis()))
        .ok_or_else(|| Error::validation("version", "the board's version as the page showed it"))
}

/// What a change came to.
enum Done {
    /// The board changed: its new version, and the page a form goes back to.
    Board { version: String, back: String },
    /// The board is gone or new: where to go.
    Go(String),
}

/// One state-changing request: its user, and whether its script wants JSON.
struct Change {
    who: SignedIn,
    json: bool,
    /// The page the request came from, where a refused form's page links back to.
    back: String,
}

impl Change {
    /// The request's user when it comes from this site with a session. Refused: 403 for
    /// another origin (or none), to sign-in (then back to `back`) without a session.
    fn open(
        state: &AppState,
        who: Option<SignedIn>,
        headers: &HeaderMap,
        back: &str,
    ) -> std::result::Result<Change, Box<Response>> {
        if let Some(refused) = refuse_cross_site(state, headers) {
            return Err(Box::new(refused));
        }
        let Some(who) = who else {
            let next: String = url::form_urlencoded::byte_serialize(back.as_bytes()).collect();
            return Err(Box::new(see_other(&format!("/login?next={next}"))));
        };
        let json = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("application/json"));
        Ok(Change {
            who,
            json,
            back: back.to_owned(),
        })
    }

    /// The answer: `{version}` or `{go}` to the script, a `303` to a form; an error as the
    /// envelope to the script, to a form as a page saying what to do (the 404 page for
    /// anything not found).
    fn answer(&self, done: Result<Done>) -> Response {
        match done {
            Ok(Done::Board { version, .. }) if self.json => {
                Json(json!({ "version": version })).into_response()
            }
            Ok(Done::Go(to)) if self.json => Json(json!({ "go": to })).into_response(),
            Ok(Done::Board { back, .. } | Done::Go(back)) => see_other(&back),
            Err(e) if self.json => e.into_response(),
            Err(Error::NotFound { .. }) => not_found(),
            Err(e) => {
                let status = e.status();
                if status.is_server_error() {
                    return e.into_response();
                }
                let page = render::message_page(&refusal_title(&e), &e.to_string(), &self.back);
                html(page, status)
            }
        }
    }

    /// [`Change::open`], then the request's form (refused as the envelope or a page when
    /// it is not a form of this page).
    async fn with_form<F: DeserializeOwned>(
        state: &AppState,
        who: Option<SignedIn>,
        headers: &HeaderMap,
        back: &str,
        body: Body,
    ) -> std::result::Result<(Change, F), Box<Response>> {
        let change = Change::open(state, who, headers, back)?;
        match read_form::<F>(body).await {
            Some(form) => Ok((change, form)),
            None => {
                let refused = Error::validation("body", "a form of this page");
                Err(Box::new(change.answer(Err(refused))))
            }
        }
    }
}

fn refusal_title(e: &Error) -> String {
    match e {
        Error::Conflict(_) => "Someone else changed this board",
        Error::Forbidden(_) => "Not allowed",
        _ => "That didn't work",
    }
    .to_owned()
}

/// The request's form, or `None` when it is too large or not a form of ours.
async fn read_form<T: DeserializeOwned>(body: Body) -> Option<T> {
    let bytes = axum::body::to_bytes(body, FORM_BYTES).await.ok()?;
    serde_html_form::from_bytes(&bytes).ok()
}

fn board_path(id: &str, query: &str) -> String {
    let id: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
    format!("/boards/{id}{query}")
}

/// A form's text, `None` when only blank.
fn given(text: String) -> Option<String> {
    (!text.trim().is_empty()).then_some(text)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NewBoardForm {
    title: String,
    description: String,
}

/// `POST /boards`: a new board of the user's workspace (`pinboards:write`), as
/// `POST /v1/pinboards` makes it; on to its page, in edit mode.
pub(super) async fn create(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let (change, form) =
        match Change::with_form::<NewBoardForm>(&state, who, &headers, "/boards", body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = authorize(
            &state,
            change.who.principal.clone(),
            Access::workspace(Scope::PinboardsWrite),
            None,
        )
        .await?;
        let body = CreateBoardBody {
            title: form.title,
            description: given(form.description),
            tags: None,
            is_public: None,
        };
        let board = ops::create(&state, &me, body).await?;
        Ok::<_, Error>(Done::Go(board_path(&board.id, "?edit=1")))
    };
    change.answer(done.await)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SettingsForm {
    title: String,
    description: String,
    version: String,
}

/// `POST /boards/{id}/settings`: the board's name and description (`PATCH /v1/pinboards/{id}`).
async fn settings(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let back = board_path(&id, "?edit=1");
    let (change, form) =
        match Change::with_form::<SettingsForm>(&state, who, &headers, &back, body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinboardsWrite).await?;
        let since = since(&form.version)?;
        let update = UpdateBoardBody {
            title: Some(Some(form.title)),
            description: Some(given(form.description)),
            tags: None,
            is_public: None,
        };
        let board = ops::update(&state, &me, &id, update, since).await?;
        Ok::<_, Error>(Done::Board {
            version: board.updated_at,
            back,
        })
    };
    change.answer(done.await)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct DeleteForm {
    confirm: String,
    version: String,
}

/// `POST /boards/{id}/delete`: deletes the board (its pins stay), once `confirm` says so; on
/// to `/boards`.
async fn delete(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let back = board_path(&id, "?edit=1");
    let (change, form) =
        match Change::with_form::<DeleteForm>(&state, who, &headers, &back, body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinboardsWrite).await?;
        let since = since(&form.version)?;
        if form.confirm != "yes" {
            return Err(Error::validation(
                "confirm",
                "ticked: deleting a board can't be undone",
            ));
        }
        ops::delete(&state, &me, &id, since).await?;
        Ok::<_, Error>(Done::Go("/boards".to_owned()))
    };
    change.answer(done.await)
}

/// The share form: a ticked box is sent (`on`), an unticked one is not.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ShareForm {
    is_public: Option<String>,
    allow_edit: Option<String>,
    require_sign_in: Option<String>,
    allow_comments: Option<String>,
}

/// `POST /boards/{id}/share`: all four share settings (`PUT /v1/pinboards/{id}/share`).
async fn share(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let back = board_path(&id, "?share=1");
    let (change, form) =
        match Change::with_form::<ShareForm>(&state, who, &headers, &back, body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinsShare).await?;
        let body = ShareBody {
            is_public: Some(form.is_public.is_some()),
            allow_edit: Some(form.allow_edit.is_some()),
            require_sign_in: Some(form.require_sign_in.is_some()),
            allow_comments: Some(form.allow_comments.is_some()),
            embed_origins: None,
        };
        sharing::put_board(&state, &me, &id, body).await?;
        Ok::<_, Error>(Done::Board {
            version: version_of(&state, &me, &id).await?,
            back,
        })
    };
    change.answer(done.await)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PlaceForm {
    pin_id: String,
    version: String,
}

/// `POST /boards/{id}/pins`: puts a pin of the picker on the board at the first free slot
/// (`POST /v1/pinboards/{id}/pins`).
async fn place(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let back = board_path(&id, "?edit=1");
    let (change, form) =
        match Change::with_form::<PlaceForm>(&state, who, &headers, &back, body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinboardsWrite).await?;
        let since = since(&form.version)?;
        let body = PlaceBody {
            pin_id: form.pin_id,
            position: None,
        };
        let placed = ops::place(&state, &me, &id, body, since).await?;
        Ok::<_, Error>(Done::Board {
            version: clock::iso(placed.board_updated_at),
            back,
        })
    };
    change.answer(done.await)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct MoveForm {
    x: Option<i64>,
    y: Option<i64>,
    w: Option<i64>,
    h: Option<i64>,
    version: String,
}

/// `POST /boards/{id}/pins/{pin_id}`: moves and/or resizes a placed pin
/// (`PUT /v1/pinboards/{id}/pins/{pin_id}`).
async fn move_pin(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path((id, pin_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let back = board_path(&id, "?edit=1");
    let (change, form) =
        match Change::with_form::<MoveForm>(&state, who, &headers, &back, body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinboardsWrite).await?;
        let since = since(&form.version)?;
        let mut position = serde_json::Map::new();
        for (name, value) in [("x", form.x), ("y", form.y), ("w", form.w), ("h", form.h)] {
            if let Some(value) = value {
                position.insert(name.to_owned(), value.into());
            }
        }
        let body = MoveBody {
            position: position.into(),
        };
        let moved = ops::move_pin(&state, &me, &id, &pin_id, body, since).await?;
        Ok::<_, Error>(Done::Board {
            version: clock::iso(moved.board_updated_at),
            back,
        })
    };
    change.answer(done.await)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct VersionForm {
    version: String,
}

/// `POST /boards/{id}/pins/{pin_id}/remove`: takes the pin off the board, the pin stays
/// (`DELETE /v1/pinboards/{id}/pins/{pin_id}`).
async fn unplace(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path((id, pin_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let back = board_path(&id, "?edit=1");
    let (change, form) =
        match Change::with_form::<VersionForm>(&state, who, &headers, &back, body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinboardsWrite).await?;
        let since = since(&form.version)?;
        let removed = ops::unplace(&state, &me, &id, &pin_id, since).await?;
        Ok::<_, Error>(Done::Board {
            version: clock::iso(removed.board_updated_at),
            back,
        })
    };
    change.answer(done.await)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct InviteForm {
    email: String,
    role: String,
}

/// `POST /boards/{id}/collaborators`: gives the person with this email a role on the board
/// (`POST /v1/pinboards/{id}/collaborators`).
async fn invite(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let back = board_path(&id, "?share=1");
    let (change, form) =
        match Change::with_form::<InviteForm>(&state, who, &headers, &back, body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinboardsInvite).await?;
        let email = form.email.trim();
        if !email.contains('@') || email.chars().count() > 320 {
            return Err(Error::validation("email", "an email address"));
        }
        let body = AddBody {
            user: email.to_owned(),
            role: form.role,
        };
        collaborators::add(&state, &me, &id, body).await?;
        Ok::<_, Error>(Done::Board {
            version: version_of(&state, &me, &id).await?,
            back,
        })
    };
    change.answer(done.await)
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RoleForm {
    role: String,
}

/// `POST /boards/{id}/collaborators/{user_id}`: a collaborator's new role
/// (`PATCH /v1/pinboards/{id}/collaborators/{user_id}`).
async fn change_role(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path((id, user_id)): Path<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let back = board_path(&id, "?share=1");
    let (change, form) =
        match Change::with_form::<RoleForm>(&state, who, &headers, &back, body).await {
            Ok(opened) => opened,
            Err(refused) => return *refused,
        };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinboardsInvite).await?;
        let body = RoleBody { role: form.role };
        collaborators::update(&state, &me, &id, &user_id, body).await?;
        Ok::<_, Error>(Done::Board {
            version: version_of(&state, &me, &id).await?,
            back,
        })
    };
    change.answer(done.await)
}

/// `POST /boards/{id}/collaborators/{user_id}/remove`: takes the collaborator off the board
/// (`DELETE /v1/pinboards/{id}/collaborators/{user_id}`).
async fn remove_collaborator(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path((id, user_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let back = board_path(&id, "?share=1");
    let change = match Change::open(&state, who, &headers, &back) {
        Ok(change) => change,
        Err(refused) => return *refused,
    };
    let done = async {
        let me = acting(&state, &change.who, &id, Scope::PinboardsInvite).await?;
        collaborators::remove(&state, &me, &id, &user_id).await?;
        Ok::<_, Error>(Done::Board {
            version: version_of(&state, &me, &id).await?,
            back,
        })
    };
    change.answer(done.await)
}

/// A pin the picker offers.
pub(super) struct Choice {
    pub id: String,
    pub title: String,
    pub pin_type: String,
    pub tags: Vec<String>,
}

#[derive(Deserialize)]
struct Listed {
    id: String,
    pin_type: String,
    metadata: ListedMetadata,
}

#[derive(Deserialize)]
struct ListedMetadata {
    title: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
}

/// The workspace's pins not on board `id` whose title or a tag contains `q` (any case),
/// newest first, at most [`PICKED`], from its newest pins (`GET /v1/pins`, as `me` reads
/// them). A collaborator from another workspace sees none: they don't read its pins.
pub(super) async fn choices(
    state: &AppState,
    me: &Principal,
    id: &str,
    q: &str,
) -> Result<Vec<Choice>> {
    if me.reach != Reach::Workspace || !me.scopes.allows(Scope::PinsRead) {
        return Ok(Vec::new());
    }
    let placed: std::collections::HashSet<String> = ops::get(state, me, id)
        .await?
        .pins
        .into_iter()
        .map(|p| p.pin_id)
        .collect();
    let q = q.trim().to_lowercase();
    let mut found = Vec::new();
    let mut cursor = None;
    for _ in 0..SCANNED_PAGES {
        let params = ListParams {
            limit: Some("200".to_owned()),
            cursor: cursor.take(),
            ..ListParams::default()
        };
        let page = crate::pins::ops::list(state, me, &params).await?;
        for pin in &page.data {
            let Ok(pin) = serde_json::from_str::<Listed>(pin.as_str()) else {
                continue;
            };
            let title = pin.metadata.title.unwrap_or_default();
            let matches = q.is_empty()
                || title.to_lowercase().contains(&q)
                || pin
                    .metadata
                    .tags
                    .iter()
                    .any(|t| t.to_lowercase().contains(&q));
            if matches && !placed.contains(&pin.id) {
                found.push(Choice {
                    id: pin.id,
                    title,
                    pin_type: pin.pin_type,
                    tags: pin.metadata.tags,
                });
                if found.len() == PICKED {
                    return Ok(found);
                }
            }
        }
        match page.pagination.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(found)
}

/// The search of a picker request, cut to [`QUERY_CHARS`].
pub(super) fn search_of(uri: &Uri) -> String {
    uri.query()
        .and_then(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(k, _)| k == "q")
                .map(|(_, v)| v.chars().take(QUERY_CHARS).collect())
        })
        .unwrap_or_default()
}

/// `GET /boards/{id}/picker?q=`: the picker's list alone (HTML), which the editor script
/// swaps in as the search is typed; the 404 page to anyone who may not edit the board.
async fn picker(
    State(state): State<AppState>,
    MaybeSignedIn(who): MaybeSignedIn,
    Path(id): Path<String>,
    uri: Uri,
) -> Response {
    let Some(who) = who else {
        return not_found();
    };
    let listed = async {
        let me = acting(&state, &who, &id, Scope::PinboardsWrite).await?;
        let version = version_of(&state, &me, &id).await?;
        let found = choices(&state, &me, &id, &search_of(&uri)).await?;
        Ok::<_, Error>(markup::picker_list(&id, &version, &found))
    };
    match listed.await {
        Ok(list) => html(render::fragment_page(list), StatusCode::OK),
        Err(Error::NotFound { .. } | Error::Forbidden(_)) => not_found(),
        Err(e) => e.into_response(),
    }
}

/// The collaborators of board `id` when `who` may manage them.
pub(super) async fn collaborators_of(
    state: &AppState,
    who: &Principal,
    id: &str,
) -> Result<Vec<CollaboratorRecord>> {
    let me = authorize(
        state,
        who.clone(),
        Access::board(Scope::PinboardsInvite),
        Some(id),
    )
    .await?;
    collaborators::list(state, &me, id).await
}

/// `who` as they edit board `id` (for the picker of the board page).
pub(super) async fn editor_of(state: &AppState, who: &Principal, id: &str) -> Result<Principal> {
    authorize(
        state,
        who.clone(),
        Access::board(Scope::PinboardsWrite),
        Some(id),
    )
    .await
}
