//! `/pinboards/{id}/collaborators` routes (scope `pinboards:invite`): users given a role on
//! one board. The rules live in [`crate::pinboards::collaborators`].

use axum::{
    extract::State,
    routing::{get, patch},
    Router,
};

use super::{ApiJson, ApiPath, Envelope};
use crate::{
    app::AppState,
    auth::{BoardAuth, PinboardsInvite},
    error::Result,
    pinboards::collaborators::{self, AddBody, RoleBody},
    pins::ops::to_data,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/pinboards/{id}/collaborators", get(list).post(add))
        .route(
            "/pinboards/{id}/collaborators/{user_id}",
            patch(update).delete(remove),
        )
}

async fn add(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsInvite>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body, _): ApiJson<AddBody>,
) -> Result<Envelope> {
    let added = collaborators::add(&state, &auth.principal, &id, body).await?;
    Ok(Envelope::new(to_data(&added)?))
}

async fn list(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsInvite>,
    ApiPath(id): ApiPath<String>,
) -> Result<Envelope> {
    let all = collaborators::list(&state, &auth.principal, &id).await?;
    Ok(Envelope::new(to_data(&all)?))
}

async fn update(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsInvite>,
    ApiPath((id, user_id)): ApiPath<(String, String)>,
    ApiJson(body, _): ApiJson<RoleBody>,
) -> Result<Envelope> {
    let changed = collaborators::update(&state, &auth.principal, &id, &user_id, body).await?;
    Ok(Envelope::new(to_data(&changed)?))
}

async fn remove(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsInvite>,
    ApiPath((id, user_id)): ApiPath<(String, String)>,
) -> Result<Envelope> {
    let removed = collaborators::remove(&state, &auth.principal, &id, &user_id).await?;
    Ok(Envelope::new(to_data(&removed)?))
}
