//! `/invitations` routes (scope `pinboards:invite`): invite a person into the workspace by
//! email with a role, list the live invitations, revoke one. The rules live in
//! [`crate::invitations`].

use aide::{
    axum::{
        routing::{delete_with, get_with},
        ApiRouter,
    },
    transform::TransformOperation,
};
use axum::extract::State;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    docs::{self, One},
    ApiJson, ApiPath, Envelope,
};
use crate::{
    app::AppState,
    auth::{Auth, PinboardsInvite},
    error::Result,
    invitations::{self, CreatedInvitation, InvitationRecord, InviteBody, RevokedInvitation},
};

/// `{id}` of `/invitations/{id}`.
#[derive(Deserialize, JsonSchema)]
struct InvitationPath {
    /// An invitation id (`inv-...`).
    id: String,
}

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("identity")
}

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/invitations",
            get_with(list, |op| {
                doc(op, "List the workspace's live invitations (never their links)")
                    .id("listInvitations")
            })
            .post_with(create, |op| {
                docs::conflict(
                    doc(
                        op,
                        "Invite a person by email with a role; the link (single use, 7 days) is in this answer only",
                    )
                    .id("createInvitation"),
                    "The email is a member's already or has a live invitation, or the workspace has as many live invitations as it may: `CONFLICT`",
                )
            }),
        )
        .api_route(
            "/invitations/{id}",
            delete_with(revoke, |op| {
                doc(op, "Revoke an invitation: its link stops working at once")
                    .id("revokeInvitation")
            }),
        )
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinboardsInvite>,
    ApiJson(body, _): ApiJson<InviteBody>,
) -> Result<Envelope<One<CreatedInvitation>>> {
    let created = invitations::create(&state, &auth.principal, body).await?;
    Envelope::of(&created)
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinboardsInvite>,
) -> Result<Envelope<One<Vec<InvitationRecord>>>> {
    let all = invitations::list(&state, &auth.principal).await?;
    Envelope::of(&all)
}

async fn revoke(
    State(state): State<AppState>,
    auth: Auth<PinboardsInvite>,
    ApiPath(InvitationPath { id }): ApiPath<InvitationPath>,
) -> Result<Envelope<One<RevokedInvitation>>> {
    let revoked = invitations::revoke(&state, &auth.principal, &id).await?;
    Envelope::of(&revoked)
}
