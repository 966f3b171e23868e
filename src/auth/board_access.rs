//! [`BoardAuth`]: the extractor of routes on one pinboard (`/pinboards/{id}...`), where a
//! user may also act through a collaborator role on that board, from any workspace.

use std::marker::PhantomData;

use axum::{
    extract::{FromRequestParts, RawPathParams},
    http::request::Parts,
};

use super::{
    access::{authorize, Access},
    Principal, RequiredScope,
};
use crate::{app::AppState, Error};

/// An authenticated caller holding scope `S` on the board named by the path's `{id}`, as
/// [`super::authorize`] makes them: a key, or a user without a role on the board, is checked as by
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
        Ok(BoardAuth {
            principal: authorize(
                state,
                principal,
                Access::board(S::SCOPE),
                board_id.as_deref(),
            )
            .await?,
            scope: PhantomData,
        })
    }
}
