//! [`BoardAuth`]: the extractor of routes on one pinboard (`/pinboards/{id}...`), where a
//! user may also act through a collaborator role on that board, from any workspace.

use std::marker::PhantomData;

use axum::{
    extract::{FromRequestParts, RawPathParams},
    http::request::Parts,
};

use super::{extract::require, roles, Principal, RequiredScope, Subject};
use crate::{app::AppState, Error};

/// An authenticated caller holding scope `S` on the board named by the path's `{id}`.
/// A key, or a user without a role on the board, is checked as by [`super::Auth`]. A user
/// with a role on the board acts in the board's workspace with that role's scopes (added to
/// their own role's when it is their workspace). Everything else stays isolated: the board
/// role opens this board's routes, not the rest of its workspace.
pub struct BoardAuth<S> {
    pub principal: Principal,
    scope: PhantomData<S>,
}

impl<S: RequiredScope + Send + Sync> FromRequestParts<AppState> for BoardAuth<S> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Error> {
        let mut principal = parts
            .extensions
            .get::<Principal>()
            .cloned()
            .ok_or(Error::Unauthorized)?;
        if let Subject::User(user_id) = &principal.subject {
            let board_id = RawPathParams::from_request_parts(parts, state)
                .await
                .ok()
                .and_then(|params| {
                    params
                        .iter()
                        .find(|(name, _)| *name == "id")
                        .map(|(_, value)| value.to_owned())
                });
            let grant = match board_id {
                Some(board_id) => state.store.board_grant(&board_id, user_id).await?,
                None => None,
            };
            if let Some((workspace_id, role)) = grant {
                let scopes = roles::scopes_of(&state.store, &workspace_id, &role).await?;
                principal.scopes = if workspace_id == principal.workspace_id {
                    principal.scopes.union(scopes)
                } else {
                    scopes
                };
                principal.workspace_id = workspace_id;
            }
        }
        Ok(BoardAuth {
            principal: require(principal, S::SCOPE)?,
            scope: PhantomData,
        })
    }
}
