//! Board collaborators (`/pinboards/{id}/collaborators`, scope `pinboards:invite`): a user,
//! of this workspace or another, given a role on one board, named by id or by email. An
//! email that has no user yet is kept pending (CONTRACT.md 16): it binds, as a collaborator
//! of that role, at the first sign-in of a user with that email (an accepted invitation's
//! password account, or an identity provider's user whose email it verified). Until then
//! the email names it where a user id would.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    app::AppState,
    auth::{local::normal_email, roles, Principal},
    clock,
    error::{Error, Result},
    store::{Collaborator, PendingCollaborator, UserRow},
};

/// `POST /pinboards/{id}/collaborators` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddBody {
    /// A user id (`usr-...`) or an email: of exactly one user, or of nobody yet (then the
    /// invitation is pending until a user of that email first signs in). An unknown id is
    /// a 404.
    #[schemars(length(min = 1, max = 254))]
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
    /// The user's id; for a pending invitation, the invited email (which names it in
    /// `PATCH` and `DELETE` until it binds).
    pub user_id: String,
    pub email: Option<String>,
    pub role: String,
    /// ISO 8601.
    pub added_at: String,
    /// Invited by an email that has no user yet: binds at that user's first sign-in.
    pub pending: bool,
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
            pending: false,
        }
    }
}

impl From<PendingCollaborator> for CollaboratorRecord {
    fn from(c: PendingCollaborator) -> Self {
        CollaboratorRecord {
            user_id: c.email.clone(),
            email: Some(c.email),
            role: c.role,
            added_at: clock::iso(c.added_at),
            pending: true,
        }
    }
}

/// The email a collaborator's path names when it is a pending one (it holds an `@`, which
/// no user id does).
fn pending_email(user_id: &str) -> Option<String> {
    user_id
        .contains('@')
        .then(|| normal_email(user_id))
        .flatten()
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
    let role = match pending_email(user_id) {
        Some(email) => state
            .store
            .pending_collaborators(&who.workspace_id, board_id)
            .await?
            .into_iter()
            .find(|c| c.email == email)
            .map(|c| c.role),
        None => state
            .store
            .collaborators(&who.workspace_id, board_id)
            .await?
            .into_iter()
            .find(|c| c.user_id == user_id)
            .map(|c| c.role),
    }
    .ok_or_else(collaborator_missing)?;
    let scopes = roles::scopes_of(&state.store, &who.workspace_id, &role).await?;
    roles::check_grant(who, scopes)
}

async fn find_user(state: &AppState, user: &str) -> Result<Option<UserRow>> {
    // Emails are stored in lower case (see `auth::jwt`); ids are taken as sent.
    let user = if user.contains('@') {
        user.to_lowercase()
    } else {
        user.to_owned()
    };
    let mut found = state.store.find_users(&user).await?;
    match (found.pop(), found.is_empty()) {
        (Some(one), true) => Ok(Some(one)),
        (Some(_), false) => Err(Error::Conflict(
            "several users have this email; name the user by id".into(),
        )),
        (None, _) => Ok(None),
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
    let Some(user) = find_user(state, &body.user).await? else {
        return add_pending(state, who, board_id, &body).await;
    };
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

/// Keeps `body.user`, an email of nobody yet, pending on the board; 404 for an unknown id.
async fn add_pending(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    body: &AddBody,
) -> Result<CollaboratorRecord> {
    let Some(email) = pending_email(&body.user) else {
        return Err(Error::NotFound {
            what: "user",
            index: None,
        });
    };
    let pending = PendingCollaborator {
        email,
        role: body.role.clone(),
        added_at: clock::now_ms(),
    };
    if !state
        .store
        .add_pending_collaborator(&who.workspace_id, board_id, &pending)
        .await?
    {
        return Err(board_missing());
    }
    Ok(pending.into())
}

/// The board's collaborators, first added first, then its pending ones.
pub async fn list(
    state: &AppState,
    who: &Principal,
    board_id: &str,
) -> Result<Vec<CollaboratorRecord>> {
    ensure_board(state, who, board_id).await?;
    let ws = &who.workspace_id;
    let all = state.store.collaborators(ws, board_id).await?;
    let pending = state.store.pending_collaborators(ws, board_id).await?;
    Ok(all
        .into_iter()
        .map(Into::into)
        .chain(pending.into_iter().map(Into::into))
        .collect())
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
    let ws = &who.workspace_id;
    let changed = match pending_email(user_id) {
        Some(email) => {
            state
                .store
                .set_pending_role(ws, board_id, &email, &body.role)
                .await?
        }
        None => {
            state
                .store
                .set_collaborator_role(ws, board_id, user_id, &body.role)
                .await?
        }
    };
    if !changed {
        return Err(collaborator_missing());
    }
    let named = pending_email(user_id).unwrap_or_else(|| user_id.to_owned());
    list(state, who, board_id)
        .await?
        .into_iter()
        .find(|c| c.user_id == named)
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
    let ws = &who.workspace_id;
    let removed = match pending_email(user_id) {
        Some(email) => {
            state
                .store
                .remove_pending_collaborator(ws, board_id, &email)
                .await?
        }
        None => {
            state
                .store
                .remove_collaborator(ws, board_id, user_id)
                .await?
        }
    };
    if removed {
        Ok(Removed {
            user_id: user_id.to_owned(),
            removed: true,
        })
    } else {
        Err(collaborator_missing())
    }
}
