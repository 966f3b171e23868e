//! `/pinboards/{id}/collaborators` routes (scope `pinboards:invite`): users given a role on
//! one board. The rules live in [`crate::pinboards::collaborators`].

use aide::{
    axum::{
        routing::{get_with, patch_with},
        ApiRouter,
    },
    transform::TransformOperation,
};
use axum::extract::State;

use super::{
    docs::{self, One},
    ApiJson, ApiPath, BoardPath, CollaboratorPath, Envelope,
};
use crate::{
    app::AppState,
    auth::{BoardAuth, PinboardsInvite},
    error::Result,
    pinboards::collaborators::{self, AddBody, CollaboratorRecord, Removed, RoleBody},
};

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("identity")
}

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/pinboards/{id}/collaborators",
            get_with(list, |op| doc(op, "List a pinboard's collaborators").id("listCollaborators")).post_with(add, |op| {
                docs::conflict(
                    doc(op, "Give a user (of any workspace) a role on this pinboard").id("addCollaborator"),
                    "The user is on the board already, or several users have this email: `CONFLICT`",
                )
            }),
        )
        .api_route(
            "/pinboards/{id}/collaborators/{user_id}",
            patch_with(update, |op| doc(op, "Change a collaborator's role").id("updateCollaborator"))
                .delete_with(remove, |op| doc(op, "Remove a collaborator").id("removeCollaborator")),
        )
}

async fn add(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsInvite>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
    ApiJson(body, _): ApiJson<AddBody>,
) -> Result<Envelope<One<CollaboratorRecord>>> {
    let added = collaborators::add(&state, &auth.principal, &id, body).await?;
    Envelope::of(&added)
}

async fn list(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsInvite>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
) -> Result<Envelope<One<Vec<CollaboratorRecord>>>> {
    let all = collaborators::list(&state, &auth.principal, &id).await?;
    Envelope::of(&all)
}

async fn update(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsInvite>,
    ApiPath(CollaboratorPath { id, user_id }): ApiPath<CollaboratorPath>,
    ApiJson(body, _): ApiJson<RoleBody>,
) -> Result<Envelope<One<CollaboratorRecord>>> {
    let changed = collaborators::update(&state, &auth.principal, &id, &user_id, body).await?;
    Envelope::of(&changed)
}

async fn remove(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsInvite>,
    ApiPath(CollaboratorPath { id, user_id }): ApiPath<CollaboratorPath>,
) -> Result<Envelope<One<Removed>>> {
    let removed = collaborators::remove(&state, &auth.principal, &id, &user_id).await?;
    Envelope::of(&removed)
}
