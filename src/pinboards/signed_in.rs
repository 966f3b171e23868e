//! What a share page shows a signed-in visitor: a pin or board shared with `is_public` and
//! `require_sign_in` is shown to a caller who may read it through the API (their workspace's
//! role or key scopes, or, for a board, a collaborator role on it).

use crate::{
    app::AppState,
    auth::{on_board, Principal, Scope},
    error::Result,
    store::{Pin, Pinboard, PlacedPin},
};

/// The board with its placed pins, when shared for signed-in visitors and `who` may read it.
pub async fn board(
    state: &AppState,
    who: Principal,
    id: &str,
) -> Result<Option<(Pinboard, Vec<PlacedPin>)>> {
    let who = on_board(state, who, id).await?;
    if !who.scopes.allows(Scope::PinboardsRead) {
        return Ok(None);
    }
    let Some(board) = state.store.get_pinboard(&who.workspace_id, id).await? else {
        return Ok(None);
    };
    if !(board.sharing.is_public && board.sharing.require_sign_in) {
        return Ok(None);
    }
    let pins = state.store.placed_pins(&who.workspace_id, id).await?;
    Ok(Some((board, pins)))
}

/// The pin, when shared for signed-in visitors and `who` may read it.
pub async fn pin(state: &AppState, who: &Principal, id: &str) -> Result<Option<Pin>> {
    if !who.scopes.allows(Scope::PinsRead) {
        return Ok(None);
    }
    let found = state
        .store
        .get_pins(&who.workspace_id, &[id.to_owned()])
        .await?;
    Ok(found
        .into_iter()
        .next()
        .filter(|pin| pin.is_public && pin.require_sign_in))
}
