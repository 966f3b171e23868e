//! `/pins/{id}/blocks` routes: a pin's blocks (`pins:read` / `pins:write`), thin handlers
//! over [`crate::blocks::ops`].

use aide::{
    axum::{
        routing::{get_with, put_with},
        ApiRouter,
    },
    transform::TransformOperation,
};
use axum::extract::State;

use super::{docs::One, ApiJson, ApiPath, ApiQuery, BlockPath, Envelope, PinPath};
use crate::{
    app::AppState,
    auth::{Auth, PinsRead, PinsWrite},
    blocks::ops::{self, BlockRecord, CreateBlockBody, OrderBody, UpdateBlockBody},
    error::Result,
    pins::ops::{render_flag, RenderParams},
    wire::Deleted,
};

type Record = BlockRecord;

fn doc<'a>(op: TransformOperation<'a>, summary: &str, id: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("blocks").id(id)
}

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/pins/{id}/blocks",
            get_with(list, |op| {
                doc(
                    op,
                    "List a pin's blocks in order (evaluated with render=true)",
                    "listBlocks",
                )
            })
            .post_with(create, |op| {
                doc(
                    op,
                    "Add a block (at `position`, else last; at most 100 per pin)",
                    "createBlock",
                )
            }),
        )
        .api_route(
            "/pins/{id}/blocks/order",
            put_with(reorder, |op| {
                doc(
                    op,
                    "Reorder a pin's blocks (every block id exactly once)",
                    "reorderBlocks",
                )
            }),
        )
        .api_route(
            "/pins/{id}/blocks/{block_id}",
            get_with(read, |op| doc(op, "Read a block", "getBlock"))
                .put_with(update, |op| {
                    doc(op, "Update a block (only the fields sent)", "putBlock")
                })
                .patch_with(update, |op| {
                    doc(op, "Update a block (only the fields sent)", "patchBlock")
                })
                .delete_with(delete, |op| doc(op, "Delete a block", "deleteBlock")),
        )
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiQuery(params): ApiQuery<RenderParams>,
) -> Result<Envelope<One<Vec<Record>>>> {
    let render = render_flag(params.render.as_deref())?;
    Envelope::of(&ops::list(&state, &auth.principal, &id, render).await?)
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiJson(body, _): ApiJson<CreateBlockBody>,
) -> Result<Envelope<One<Record>>> {
    Envelope::of(&ops::create(&state, &auth.principal, &id, body).await?)
}

async fn reorder(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(PinPath { id }): ApiPath<PinPath>,
    ApiJson(body, _): ApiJson<OrderBody>,
) -> Result<Envelope<One<Vec<Record>>>> {
    Envelope::of(&ops::reorder(&state, &auth.principal, &id, body).await?)
}

async fn read(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(BlockPath { id, block_id }): ApiPath<BlockPath>,
) -> Result<Envelope<One<Record>>> {
    Envelope::of(&ops::get(&state, &auth.principal, &id, &block_id).await?)
}

async fn update(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(BlockPath { id, block_id }): ApiPath<BlockPath>,
    ApiJson(body, _): ApiJson<UpdateBlockBody>,
) -> Result<Envelope<One<Record>>> {
    Envelope::of(&ops::update(&state, &auth.principal, &id, &block_id, body).await?)
}

async fn delete(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(BlockPath { id, block_id }): ApiPath<BlockPath>,
) -> Result<Envelope<One<Deleted>>> {
    Envelope::of(&ops::delete(&state, &auth.principal, &id, &block_id).await?)
}
