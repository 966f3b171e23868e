//! `/roles` routes (scope `pinboards:invite`): the built-in and custom roles of the
//! workspace. The rules live in [`crate::auth::roles`].

use aide::axum::{routing::get_with, ApiRouter};
use axum::extract::State;

use super::{
    docs::{self, One},
    ApiJson, Envelope,
};
use crate::{
    app::AppState,
    auth::{
        roles::{self, CreateRoleBody, RoleRecord},
        Auth, PinboardsInvite,
    },
    error::Result,
};

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/roles",
        get_with(list, |op| {
            op.summary("List the built-in and custom roles")
                .tag("identity")
                .id("listRoles")
        })
        .post_with(create, |op| {
            let op = op
                .summary("Define a custom role: a name and its scopes")
                .tag("identity")
                .id("createRole");
            docs::conflict(op, "The name is taken, or is a built-in role's: `CONFLICT`")
        }),
    )
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinboardsInvite>,
    ApiJson(body, _): ApiJson<CreateRoleBody>,
) -> Result<Envelope<One<RoleRecord>>> {
    let role = roles::create(&state, &auth.principal, body).await?;
    Envelope::of(&role)
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinboardsInvite>,
) -> Result<Envelope<One<Vec<RoleRecord>>>> {
    let roles = roles::list(&state, &auth.principal).await?;
    Envelope::of(&roles)
}
