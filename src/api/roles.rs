//! `/roles` routes (scope `pinboards:invite`): the built-in and custom roles of the
//! workspace. The rules live in [`crate::auth::roles`].

use axum::{extract::State, routing::get, Router};

use super::{ApiJson, Envelope};
use crate::{
    app::AppState,
    auth::{
        roles::{self, CreateRoleBody},
        Auth, PinboardsInvite,
    },
    error::Result,
    pins::ops::to_data,
};

pub fn routes() -> Router<AppState> {
    Router::new().route("/roles", get(list).post(create))
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinboardsInvite>,
    ApiJson(body, _): ApiJson<CreateRoleBody>,
) -> Result<Envelope> {
    let role = roles::create(&state, &auth.principal, body).await?;
    Ok(Envelope::new(to_data(&role)?))
}

async fn list(State(state): State<AppState>, auth: Auth<PinboardsInvite>) -> Result<Envelope> {
    let roles = roles::list(&state, &auth.principal).await?;
    Ok(Envelope::new(to_data(&roles)?))
}
