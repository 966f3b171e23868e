//! The pinboard and placement operations, plain functions over the state and the caller
//! (HTTP handlers and MCP tools call them). Each returns the record it made or read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    grid::{moved_in_the_grid, placed_in_the_grid, Move, PositionInput, Wanted},
    BoardRecord, BoardWithPins, CreateBoardBody, UpdateBoardBody,
};
use crate::{
    app::AppState,
    auth::{roles, Principal, Reach, Scope, Subject},
    clock,
    error::{Error, Result},
    store::{BoardQuery, Position},
    wire::{Deleted, Page, PageParams},
};

fn board_missing() -> Error {
    Error::NotFound {
        what: "pinboard",
        index: None,
    }
}

/// `POST /pinboards`.
pub async fn create(
    state: &AppState,
    who: &Principal,
    body: CreateBoardBody,
) -> Result<BoardRecord> {
    let board = body.into_board(state.limits(), clock::now_ms())?;
    state
        .store
        .insert_pinboard(&who.workspace_id, &board)
        .await?;
    Ok(BoardRecord::new(&board, state.public_base()))
}

/// `GET /pinboards/{id}`: the record with every placed pin, in position order (y, then x).
pub async fn get(state: &AppState, who: &Principal, id: &str) -> Result<BoardWithPins> {
    let ws = &who.workspace_id;
    let board = state
        .store
        .get_pinboard(ws, id)
        .await?
        .ok_or_else(board_missing)?;
    let placed = state.store.placed_pins(ws, id).await?;
    BoardWithPins::new(&board, &placed, state.public_base())
}

/// `GET /pinboards`: newest first, keyset-paginated like `GET /pins`.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &PageParams,
) -> Result<Page<BoardRecord>> {
    let (limit, before_seq) = params.window()?;
    let query = BoardQuery {
        limit: limit + 1,
        before_seq,
    };
    let rows = state
        .store
        .list_pinboards(&who.workspace_id, &query)
        .await?;
    let base = state.public_base();
    Ok(Page::of(rows, limit, |(seq, _)| *seq).map(|(_, b)| BoardRecord::new(&b, base)))
}

/// `PUT`/`PATCH /pinboards/{id}`: the updated record.
pub async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: UpdateBoardBody,
) -> Result<BoardRecord> {
    let update = body.into_update(state.limits())?;
    let now = clock::now_ms();
    let board = state
        .store
        .update_pinboard(&who.workspace_id, id, &mut |b| Ok(update.apply(b, now)))
        .await?;
    Ok(BoardRecord::new(&board, state.public_base()))
}

/// `DELETE /pinboards/{id}`: its placements go, its pins stay.
pub async fn delete(state: &AppState, who: &Principal, id: &str) -> Result<Deleted> {
    if !state.store.delete_pinboard(&who.workspace_id, id).await? {
        return Err(board_missing());
    }
    Ok(Deleted::new(id))
}

/// `POST /pinboards/{id}/pins` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaceBody {
    pub pin_id: String,
    /// Where to put the pin; without it (or `null`, or with only `w`/`h`), the first free
    /// slot, 3x2 unless `w`/`h` say otherwise.
    #[serde(default)]
    #[schemars(with = "Option<PositionInput>", transform = placed_in_the_grid)]
    pub position: Option<Value>,
}

/// `PUT /pinboards/{id}/pins/{pinId}` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    /// The new place or size; omitted coordinates keep their current value.
    #[schemars(with = "PositionInput", transform = moved_in_the_grid)]
    pub position: Value,
}

/// A placement as the placement routes return it.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Placement", deny_unknown_fields)]
pub struct PlacementRecord {
    pub pinboard_id: String,
    pub pin_id: String,
    pub position: Position,
}

/// Whether a collaborator from another workspace may place `pin_id` on the board they act
/// on: only a pin already on a board of that workspace where one of their roles may edit
/// (they see nothing else of it). Anything else is the 404 of a pin they can't see.
async fn guest_may_place(state: &AppState, who: &Principal, pin_id: &str) -> Result<()> {
    let Subject::User(user_id) = &who.subject else {
        return Err(pin_missing());
    };
    let ws = &who.workspace_id;
    for role in state.store.grants_holding_pin(ws, pin_id, user_id).await? {
        if roles::scopes_of(&state.store, ws, &role)
            .await?
            .allows(Scope::PinboardsWrite)
        {
            return Ok(());
        }
    }
    Err(pin_missing())
}

fn pin_missing() -> Error {
    Error::NotFound {
        what: "pin",
        index: None,
    }
}

/// `POST /pinboards/{id}/pins`: at the given position, or the first free slot. A
/// collaborator from another workspace places only pins already on a board of that
/// workspace they may edit ([`guest_may_place`]).
pub async fn place(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    body: PlaceBody,
) -> Result<PlacementRecord> {
    let input = match &body.position {
        None | Some(Value::Null) => None,
        Some(value) => Some(PositionInput::parse(value, "position")?),
    };
    let wanted = Wanted::new(input, "position")?;
    if let Reach::Board(_) = who.reach {
        guest_may_place(state, who, &body.pin_id).await?;
    }
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
    Ok(PlacementRecord {
        pinboard_id: board_id.to_owned(),
        pin_id: body.pin_id,
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
) -> Result<PlacementRecord> {
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
    Ok(PlacementRecord {
        pinboard_id: board_id.to_owned(),
        pin_id: pin_id.to_owned(),
        position,
    })
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "RemovedPlacement", deny_unknown_fields)]
pub struct Removed {
    pub pinboard_id: String,
    pub pin_id: String,
    #[schemars(extend("const" = true))]
    pub deleted: bool,
}

/// `DELETE /pinboards/{id}/pins/{pinId}`: takes the pin off the board (the pin stays).
pub async fn unplace(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    pin_id: &str,
) -> Result<Removed> {
    state
        .store
        .remove_placement(&who.workspace_id, board_id, pin_id, clock::now_ms())
        .await?;
    Ok(Removed {
        pinboard_id: board_id.to_owned(),
        pin_id: pin_id.to_owned(),
        deleted: true,
    })
}
