//! [`BoardAuth`]: the extractor of routes on one pinboard (`/pinboards/{id}...`), where a
//! user may also act through a collaborator role on that board, from any workspace.

use std::marker::PhantomData;

use axum::{
    extract::{FromRequestParts, RawPathParams},
    http::request::Parts,
};

use super::{extract::require, roles, Principal, RequiredScope, Subject};
use crate::{app::AppState, Error};

/// An authenticated caller holding scope `S` on the board named by the path's `{id}`, as
/// [`on_board`] makes them: a key, or a user without a role on the board, is checked as by
/// [`super::Auth`]. The board role opens this board's routes, not the rest of its workspace.
pub struct BoardAuth<S> {
    pub principal: Principal,
    scope: PhantomData<S>,
}

impl<S: RequiredScope + Send + Sync> FromRequestParts<AppState> for BoardAuth<S> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let principal = parts
            .extensions
            .get::<Principal>()
            .cloned()
            .ok_or(Error::Unauthorized)?;
        let board_id = RawPathParams::from_request_parts(parts, state)
            .await
            .ok()
            .and_then(|params| {
                params
                    .iter()
                    .find(|(name, _)| *name == "id")
                    .map(|(_, value)| value.to_owned())
            });
        let principal = match board_id {
            Some(board_id) => on_board(state, principal, &board_id).await?,
            None => principal,
        };
        Ok(BoardAuth {
            principal: require(principal, S::SCOPE)?,
            scope: PhantomData,
        })
    }
}

/// The principal as it acts on board `board_id`: a user with a role on that board acts in
/// the board's workspace with that role's scopes (added to their own role's when it is
/// their workspace); anyone else unchanged.
pub async fn on_board(
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
    principal.scopes = if workspace_id == principal.workspace_id {
        principal.scopes.union(scopes)
    } else {
        scopes
    };
    principal.workspace_id = workspace_id;
    Ok(principal)
}
