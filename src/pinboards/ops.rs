//! The pinboard and placement operations, plain functions over the state and the caller
//! (HTTP handlers call them; so will MCP tools). Each returns its `data` serialised.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    grid::{Move, PositionInput, Wanted},
    BoardRecord, BoardWithPins, CreateBoardBody, UpdateBoardBody,
};
use crate::{
    app::AppState,
    auth::Principal,
    clock,
    error::{Error, Result},
    pins::ops::{decode_cursor, page, page_limit, to_data, Data, Deleted, PageParams, Pagination},
    store::{BoardQuery, Pinboard, Position},
};

fn board_missing() -> Error {
    Error::NotFound {
        what: "pinboard",
        index: None,
    }
}

fn record(state: &AppState, board: &Pinboard) -> Result<Data> {
    to_data(&BoardRecord::new(board, state.public_base()))
}

/// `POST /pinboards`.
pub async fn create(state: &AppState, who: &Principal, body: CreateBoardBody) -> Result<Data> {
    let board = body.into_board(state.limits(), clock::now_ms())?;
    state
        .store
        .insert_pinboard(&who.workspace_id, &board)
        .await?;
    record(state, &board)
}

/// `GET /pinboards/{id}`: the record with every placed pin, in position order (y, then x).
pub async fn get(state: &AppState, who: &Principal, id: &str) -> Result<Data> {
    let ws = &who.workspace_id;
    let board = state
        .store
        .get_pinboard(ws, id)
        .await?
        .ok_or_else(board_missing)?;
    let placed = state.store.placed_pins(ws, id).await?;
    to_data(&BoardWithPins::new(&board, &placed, state.public_base())?)
}

/// `GET /pinboards`: newest first, keyset-paginated like `GET /pins`.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &PageParams,
) -> Result<(Data, Pagination)> {
    let limit = page_limit(params.limit.as_deref())?;
    let query = BoardQuery {
        limit: limit + 1,
        before_seq: params.cursor.as_deref().map(decode_cursor).transpose()?,
    };
    let rows = state
        .store
        .list_pinboards(&who.workspace_id, &query)
        .await?;
    let (rows, pagination) = page(rows, limit, |(seq, _)| *seq);
    let base = state.public_base();
    let records: Vec<BoardRecord> = rows
        .iter()
        .map(|(_, b)| BoardRecord::new(b, base))
        .collect();
    Ok((to_data(&records)?, pagination))
}

/// `PUT`/`PATCH /pinboards/{id}`: the updated record.
pub async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: UpdateBoardBody,
) -> Result<Data> {
    let update = body.into_update(state.limits())?;
    let now = clock::now_ms();
    let board = state
        .store
        .update_pinboard(&who.workspace_id, id, &mut |b| Ok(update.apply(b, now)))
        .await?;
    record(state, &board)
}

/// `DELETE /pinboards/{id}`: its placements go, its pins stay.
pub async fn delete(state: &AppState, who: &Principal, id: &str) -> Result<Data> {
    if !state.store.delete_pinboard(&who.workspace_id, id).await? {
        return Err(board_missing());
    }
    to_data(&Deleted { id, deleted: true })
}

/// `POST /pinboards/{id}/pins` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaceBody {
    pub pin_id: String,
    /// Where to put the pin; without it (or `null`, or with only `w`/`h`), the first free
    /// slot, 3x2 unless `w`/`h` say otherwise.
    #[serde(default)]
    #[schemars(with = "Option<PositionInput>")]
    pub position: Option<Value>,
}

/// `PUT /pinboards/{id}/pins/{pinId}` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    /// The new place or size; omitted coordinates keep their current value.
    #[schemars(with = "PositionInput")]
    pub position: Value,
}

/// A placement as the placement routes return it.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Placement", deny_unknown_fields)]
pub struct PlacementRecord<'a> {
    pinboard_id: &'a str,
    pin_id: &'a str,
    position: Position,
}

/// `POST /pinboards/{id}/pins`: at the given position, or the first free slot.
pub async fn place(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    body: PlaceBody,
) -> Result<Data> {
    let input = match &body.position {
        None | Some(Value::Null) => None,
        Some(value) => Some(PositionInput::parse(value, "position")?),
    };
    let wanted = Wanted::new(input, "position")?;
    let position = state
        .store
        .place_pin(
            &who.workspace_id,
            board_id,
            &body.pin_id,
            clock::now_ms(),
            &mut |_, others| wanted.place(others),
        )
        .await?;
    to_data(&PlacementRecord {
        pinboard_id: board_id,
        pin_id: &body.pin_id,
        position,
    })
}

/// `PUT /pinboards/{id}/pins/{pinId}`: moves and/or resizes; unsent coordinates stay.
pub async fn move_pin(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    pin_id: &str,
    body: MoveBody,
) -> Result<Data> {
    let change = Move::new(
        PositionInput::parse(&body.position, "position")?,
        "position",
    )?;
    let position = state
        .store
        .move_placement(
            &who.workspace_id,
            board_id,
            pin_id,
            clock::now_ms(),
            &mut |current, others| match current {
                Some(current) => change.place(current, others, "position"),
                None => Err(Error::internal("move without a current position")),
            },
        )
        .await?;
    to_data(&PlacementRecord {
        pinboard_id: board_id,
        pin_id,
        position,
    })
}

#[derive(Serialize, JsonSchema)]
#[schemars(rename = "RemovedPlacement", deny_unknown_fields)]
pub struct Removed<'a> {
    pinboard_id: &'a str,
    pin_id: &'a str,
    #[schemars(extend("const" = true))]
    deleted: bool,
}

/// `DELETE /pinboards/{id}/pins/{pinId}`: takes the pin off the board (the pin stays).
pub async fn unplace(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    pin_id: &str,
) -> Result<Data> {
    state
        .store
        .remove_placement(&who.workspace_id, board_id, pin_id, clock::now_ms())
        .await?;
    to_data(&Removed {
        pinboard_id: board_id,
        pin_id,
        deleted: true,
    })
}
