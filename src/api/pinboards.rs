//! `/pinboards` routes: boards (`pinboards:read` / `pinboards:write`) and placements
//! (`pinboards:write`). Share settings live in `share.rs`. Routes on one board take
//! [`BoardAuth`], so a collaborator of that board may use them.

use aide::{
    axum::{
        routing::{get_with, post_with, put_with},
        ApiRouter,
    },
    transform::TransformOperation,
};
use axum::extract::State;

use super::{
    docs::{self, One, Page},
    ApiJson, ApiPath, ApiQuery, BoardPath, Envelope, PlacementPath,
};
use crate::{
    app::AppState,
    auth::{Auth, BoardAuth, PinboardsRead, PinboardsWrite},
    error::Result,
    pinboards::{
        ops::{self, MoveBody, PlaceBody, PlacementRecord, Removed},
        BoardRecord, BoardWithPins, CreateBoardBody, UpdateBoardBody,
    },
    wire::{Deleted, PageParams},
};

type Board = BoardRecord;

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("pinboards")
}

const OVERLAP: &str =
    "The position overlaps a placed pin, or the pin is already on the board: `CONFLICT`";

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/pinboards",
            get_with(list, |op| {
                doc(op, "List pinboards, newest first").id("listPinboards")
            })
            .post_with(create, |op| {
                doc(op, "Create a pinboard").id("createPinboard")
            }),
        )
        .api_route(
            "/pinboards/{id}",
            get_with(read, |op| {
                doc(op, "Read a pinboard with its placed pins").id("getPinboard")
            })
            .put_with(update, |op| {
                doc(op, "Update a pinboard (only the fields sent)").id("putPinboard")
            })
            .patch_with(update, |op| {
                doc(op, "Update a pinboard (only the fields sent)").id("patchPinboard")
            })
            .delete_with(delete, |op| {
                doc(op, "Delete a pinboard (its pins stay)").id("deletePinboard")
            }),
        )
        .api_route(
            "/pinboards/{id}/pins",
            post_with(place, |op| {
                docs::conflict(doc(op, "Place a pin on the 12-column grid"), OVERLAP).id("placePin")
            }),
        )
        .api_route(
            "/pinboards/{id}/pins/{pin_id}",
            put_with(move_pin, |op| {
                docs::conflict(doc(op, "Move or resize a placed pin"), OVERLAP).id("movePin")
            })
            .delete_with(unplace, |op| {
                doc(op, "Take a pin off the board (the pin stays)").id("unplacePin")
            }),
        )
        .merge(super::share::routes())
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinboardsRead>,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<Envelope<Page<Board>>> {
    Envelope::page(&ops::list(&state, &auth.principal, &params).await?)
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinboardsWrite>,
    ApiJson(body, _): ApiJson<CreateBoardBody>,
) -> Result<Envelope<One<Board>>> {
    Envelope::of(&ops::create(&state, &auth.principal, body).await?)
}

async fn read(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsRead>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
) -> Result<Envelope<One<BoardWithPins>>> {
    Envelope::of(&ops::get(&state, &auth.principal, &id).await?)
}

async fn update(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
    ApiJson(body, _): ApiJson<UpdateBoardBody>,
) -> Result<Envelope<One<Board>>> {
    Envelope::of(&ops::update(&state, &auth.principal, &id, body, None).await?)
}

async fn delete(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
) -> Result<Envelope<One<Deleted>>> {
    Envelope::of(&ops::delete(&state, &auth.principal, &id, None).await?)
}

async fn place(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath(BoardPath { id }): ApiPath<BoardPath>,
    ApiJson(body, _): ApiJson<PlaceBody>,
) -> Result<Envelope<One<PlacementRecord>>> {
    Envelope::of(&ops::place(&state, &auth.principal, &id, body, None).await?)
}

async fn move_pin(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath(PlacementPath { id, pin_id }): ApiPath<PlacementPath>,
    ApiJson(body, _): ApiJson<MoveBody>,
) -> Result<Envelope<One<PlacementRecord>>> {
    Envelope::of(&ops::move_pin(&state, &auth.principal, &id, &pin_id, body, None).await?)
}

async fn unplace(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath(PlacementPath { id, pin_id }): ApiPath<PlacementPath>,
) -> Result<Envelope<One<Removed>>> {
    Envelope::of(&ops::unplace(&state, &auth.principal, &id, &pin_id, None).await?)
}
