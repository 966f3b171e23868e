//! `/api-keys` routes (scope `*`): create, list, revoke. The rules live in
//! [`crate::auth::key_admin`].

use axum::{
    extract::State,
    routing::{delete, get},
    Router,
};

use super::{ApiJson, ApiPath, Envelope};
use crate::{
    app::AppState,
    auth::{
        key_admin::{self, CreateKeyBody},
        AllScopes, Auth,
    },
    error::Result,
    pins::ops::to_data,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api-keys", get(list).post(create))
        .route("/api-keys/{id}", delete(revoke))
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiJson(body, _): ApiJson<CreateKeyBody>,
) -> Result<Envelope> {
    let created = key_admin::create(&state, &auth.principal, body).await?;
    Ok(Envelope::new(to_data(&created)?))
}

async fn list(State(state): State<AppState>, auth: Auth<AllScopes>) -> Result<Envelope> {
    let keys = key_admin::list(&state, &auth.principal).await?;
    Ok(Envelope::new(to_data(&keys)?))
}

async fn revoke(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiPath(id): ApiPath<String>,
) -> Result<Envelope> {
    let revoked = key_admin::revoke(&state, &auth.principal, &id).await?;
    Ok(Envelope::new(to_data(&revoked)?))
}
