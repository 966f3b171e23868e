//! The one authorisation point. Every operation states what it needs of its caller, an
//! [`Access`]: a scope, in the caller's workspace or on one board. REST extractors
//! ([`super::Auth`], [`super::BoardAuth`]), MCP tools, event streams and pages all ask
//! [`authorize`], given who is calling (an API key, an ID token's user, a web session's
//! user), and act as the principal it answers.

use super::{roles, Principal, Reach, Scope, Subject};
use crate::{app::AppState, Error};

/// What an operation needs of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// The scope it needs (`None`: any valid credential, like `GET /pin-types`).
    pub scope: Option<Scope>,
    /// Whether it acts on one board, where a user may also hold a collaborator role.
    pub on_board: bool,
}

impl Access {
    /// Any valid credential.
    pub const ANY: Access = Access {
        scope: None,
        on_board: false,
    };

    /// `scope` in the caller's workspace.
    pub const fn workspace(scope: Scope) -> Access {
        Access {
            scope: Some(scope),
            on_board: false,
        }
    }

    /// `scope` on one board: a collaborator's role on that board counts.
    pub const fn board(scope: Scope) -> Access {
        Access {
            scope: Some(scope),
            on_board: true,
        }
    }
}

/// `who` as it may act for an operation that needs `access` (on board `board`, for an
/// operation on one board): 403 `SCOPE_REQUIRED` for a key without the scope, `FORBIDDEN`
/// for a user whose role doesn't allow it.
pub async fn authorize(
    state: &AppState,
    who: Principal,
    access: Access,
    board: Option<&str>,
) -> Result<Principal, Error> {
    let who = match (access.on_board, board) {
        (true, Some(board)) => on_board(state, who, board).await?,
        _ => who,
    };
    match access.scope {
        Some(scope) => require(who, scope),
        None => Ok(who),
    }
}

/// The principal when it holds `scope`, else the 403 that fits its kind.
pub(crate) fn require(principal: Principal, scope: Scope) -> Result<Principal, Error> {
    also_needs(&principal, scope)?;
    Ok(principal)
}

/// A further scope an operation needs for what this request asks of it (rendering
/// templates reads datasets): the 403 that fits the caller's kind unless it holds `scope`.
pub fn also_needs(principal: &Principal, scope: Scope) -> Result<(), Error> {
    if principal.scopes.allows(scope) {
        return Ok(());
    }
    Err(match principal.subject {
        Subject::Key(_) => Error::ScopeRequired(scope.as_str()),
        Subject::User(_) => Error::Forbidden(format!(
            "your role does not allow this (it needs `{}`)",
            scope.as_str()
        )),
    })
}

/// The principal as it acts on board `board_id`: a user with a role on that board acts in
/// the board's workspace with that role's scopes (added to their own role's when it is
/// their workspace); anyone else unchanged.
async fn on_board(
    state: &AppState,
    mut principal: Principal,
    board_id: &str,
) -> Result<Principal, Error> {
    let Subject::User(user_id) = &principal.subject else {
        return Ok(principal);
    };
    let Some((workspace_id, role)) = state.store.board_grant(board_id, user_id).await? else {
        return Ok(principal);
    };
    let scopes = roles::scopes_of(&state.store, &workspace_id, &role).await?;
    if workspace_id == principal.workspace_id {
        principal.scopes = principal.scopes.union(scopes);
    } else {
        principal.scopes = scopes;
        principal.reach = Reach::Board(board_id.to_owned());
    }
    principal.workspace_id = workspace_id;
    Ok(principal)
}
