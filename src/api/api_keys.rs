//! `/api-keys` routes (scope `*`): create, list, revoke. The rules live in
//! [`crate::auth::key_admin`].

use aide::{
    axum::{
        routing::{delete_with, get_with},
        ApiRouter,
    },
    transform::TransformOperation,
};
use axum::extract::State;

use super::{docs::One, ApiJson, ApiPath, Envelope, KeyPath};
use crate::{
    app::AppState,
    auth::{
        key_admin::{self, CreateKeyBody, CreatedKeyRecord, KeyRecord, RevokedKey},
        AllScopes, Auth,
    },
    error::Result,
};

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("identity")
}

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/api-keys",
            get_with(list, |op| {
                doc(op, "List the workspace's API keys (never their secrets)").id("listApiKeys")
            })
            .post_with(create, |op| {
                doc(
                    op,
                    "Create an API key; its secret is shown in this answer only",
                )
                .id("createApiKey")
            }),
        )
        .api_route(
            "/api-keys/{id}",
            delete_with(revoke, |op| {
                doc(op, "Revoke an API key, at once on every replica").id("revokeApiKey")
            }),
        )
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiJson(body, _): ApiJson<CreateKeyBody>,
) -> Result<Envelope<One<CreatedKeyRecord>>> {
    let created = key_admin::create(&state, &auth.principal, body).await?;
    Envelope::of(&created)
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
) -> Result<Envelope<One<Vec<KeyRecord>>>> {
    let keys = key_admin::list(&state, &auth.principal).await?;
    Envelope::of(&keys)
}

async fn revoke(
    State(state): State<AppState>,
    auth: Auth<AllScopes>,
    ApiPath(KeyPath { id }): ApiPath<KeyPath>,
) -> Result<Envelope<One<RevokedKey>>> {
    let revoked = key_admin::revoke(&state, &auth.principal, &id).await?;
    Envelope::of(&revoked)
}
