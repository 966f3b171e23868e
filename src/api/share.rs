//! Sharing: the share settings routes (`/pins/{id}/share`, `/pinboards/{id}/share`, scope
//! `pins:share`).

use axum::{
    extract::{Path, State},
    routing::get,
    Router,
};

use super::{ApiJson, Envelope};
use crate::{
    app::AppState,
    auth::{Auth, PinsShare},
    error::Result,
    pinboards::sharing::{self, ShareBody},
};

/// The settings routes, part of the authenticated API.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/pins/{id}/share", get(get_pin).put(put_pin))
        .route("/pinboards/{id}/share", get(get_board).put(put_board))
}

async fn get_pin(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    Path(id): Path<String>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        sharing::get_pin(&state, &auth.principal, &id).await?,
    ))
}

async fn put_pin(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    Path(id): Path<String>,
    ApiJson(body, _): ApiJson<ShareBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        sharing::put_pin(&state, &auth.principal, &id, body).await?,
    ))
}

async fn get_board(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    Path(id): Path<String>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        sharing::get_board(&state, &auth.principal, &id).await?,
    ))
}

async fn put_board(
    State(state): State<AppState>,
    auth: Auth<PinsShare>,
    Path(id): Path<String>,
    ApiJson(body, _): ApiJson<ShareBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        sharing::put_board(&state, &auth.principal, &id, body).await?,
    ))
}
