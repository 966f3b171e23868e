//! Board collaborators (`/pinboards/{id}/collaborators`, scope `pinboards:invite`): a user,
//! of this workspace or another, given a role on one board. The user must have signed in
//! once (that is when a user comes to exist); they are named by id or by email.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    app::AppState,
    auth::{roles, Principal},
    clock,
    error::{Error, Result},
    store::{Collaborator, UserRow},
};

/// `POST /pinboards/{id}/collaborators` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddBody {
    /// A user id (`usr-...`) or the email of exactly one user, who has signed in once
    /// (404 otherwise).
    #[schemars(length(min = 1))]
    pub user: String,
    /// `owner`, `editor`, `viewer` or a custom role of the board's workspace (400 for
    /// another name).
    #[schemars(regex(pattern = roles::NAME_PATTERN))]
    pub role: String,
}

/// `PATCH /pinboards/{id}/collaborators/{userId}` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleBody {
    /// `owner`, `editor`, `viewer` or a custom role of the board's workspace (400 for
    /// another name).
    #[schemars(regex(pattern = roles::NAME_PATTERN))]
    pub role: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CollaboratorRecord {
    pub user_id: String,
    pub email: Option<String>,
    pub role: String,
    /// ISO 8601.
    pub added_at: String,
}

/// The answer to a removal.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Removed {
    pub user_id: String,
    pub removed: bool,
}

impl From<Collaborator> for CollaboratorRecord {
    fn from(c: Collaborator) -> Self {
        CollaboratorRecord {
            user_id: c.user_id,
            email: c.email,
            role: c.role,
            added_at: clock::iso(c.added_at),
        }
    }
}

fn board_missing() -> Error {
    Error::NotFound {
        what: "pinboard",
        index: None,
    }
}

fn collaborator_missing() -> Error {
    Error::NotFound {
        what: "collaborator",
        index: None,
    }
}

/// Checks that `role` exists in the caller's workspace and grants nothing the caller lacks.
async fn check_role(state: &AppState, who: &Principal, role: &str) -> Result<()> {
    let scopes = roles::lookup(&state.store, &who.workspace_id, role)
        .await?
        .ok_or_else(|| Error::validation("role", "owner, editor, viewer or a custom role"))?;
    roles::check_grant(who, scopes)
}

/// Checks that the caller holds every scope of the role `user_id` has on the board now: a
/// collaborator can't demote or remove someone more powerful than themselves.
async fn check_current(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    user_id: &str,
) -> Result<()> {
    let current = state
        .store
        .collaborators(&who.workspace_id, board_id)
        .await?
        .into_iter()
        .find(|c| c.user_id == user_id)
        .ok_or_else(collaborator_missing)?;
    let scopes = roles::scopes_of(&state.store, &who.workspace_id, &current.role).await?;
    roles::check_grant(who, scopes)
}

async fn find_user(state: &AppState, user: &str) -> Result<UserRow> {
    // Emails are stored in lower case (see `auth::jwt`); ids are taken as sent.
    let user = if user.contains('@') {
        user.to_lowercase()
    } else {
        user.to_owned()
    };
    let mut found = state.store.find_users(&user).await?;
    match (found.pop(), found.is_empty()) {
        (Some(one), true) => Ok(one),
        (Some(_), false) => Err(Error::Conflict(
            "several users have this email; name the user by id".into(),
        )),
        (None, _) => Err(Error::NotFound {
            what: "user",
            index: None,
        }),
    }
}

async fn ensure_board(state: &AppState, who: &Principal, board_id: &str) -> Result<()> {
    match state
        .store
        .get_pinboard(&who.workspace_id, board_id)
        .await?
    {
        Some(_) => Ok(()),
        None => Err(board_missing()),
    }
}

pub async fn add(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    body: AddBody,
) -> Result<CollaboratorRecord> {
    ensure_board(state, who, board_id).await?;
    check_role(state, who, &body.role).await?;
    let user = find_user(state, &body.user).await?;
    let collaborator = Collaborator {
        user_id: user.id,
        email: user.email,
        role: body.role,
        added_at: clock::now_ms(),
    };
    if !state
        .store
        .add_collaborator(&who.workspace_id, board_id, &collaborator)
        .await?
    {
        return Err(board_missing());
    }
    Ok(collaborator.into())
}

pub async fn list(
    state: &AppState,
    who: &Principal,
    board_id: &str,
) -> Result<Vec<CollaboratorRecord>> {
    ensure_board(state, who, board_id).await?;
    let all = state
        .store
        .collaborators(&who.workspace_id, board_id)
        .await?;
    Ok(all.into_iter().map(Into::into).collect())
}

pub async fn update(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    user_id: &str,
    body: RoleBody,
) -> Result<CollaboratorRecord> {
    ensure_board(state, who, board_id).await?;
    check_role(state, who, &body.role).await?;
    check_current(state, who, board_id, user_id).await?;
    if !state
        .store
        .set_collaborator_role(&who.workspace_id, board_id, user_id, &body.role)
        .await?
    {
        return Err(collaborator_missing());
    }
    state
        .store
        .collaborators(&who.workspace_id, board_id)
        .await?
        .into_iter()
        .find(|c| c.user_id == user_id)
        .map(Into::into)
        .ok_or_else(collaborator_missing)
}

pub async fn remove(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    user_id: &str,
) -> Result<Removed> {
    ensure_board(state, who, board_id).await?;
    check_current(state, who, board_id, user_id).await?;
    if state
        .store
        .remove_collaborator(&who.workspace_id, board_id, user_id)
        .await?
    {
        Ok(Removed {
            user_id: user_id.to_owned(),
            removed: true,
        })
    } else {
        Err(collaborator_missing())
    }
}
