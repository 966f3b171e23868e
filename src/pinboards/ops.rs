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
    store::{board_changed, BoardQuery, BoardWrite, Position},
    wire::{Deleted, Page, PageParams},
};

/// A placement write now, on the board as of `since` (as for [`update`]).
fn write_at(since: Option<i64>) -> BoardWrite {
    BoardWrite {
        now: clock::now_ms(),
        since,
    }
}

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

/// `PUT`/`PATCH /pinboards/{id}`: the updated record. With `since` (the board's
/// `updated_at` as the caller last saw it), 409 and nothing written when it moved on.
pub async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: UpdateBoardBody,
    since: Option<i64>,
) -> Result<BoardRecord> {
    let update = body.into_update(state.limits())?;
    let now = clock::now_ms();
    let board = state
        .store
        .update_pinboard(&who.workspace_id, id, &mut |b| match since {
            Some(since) if since != b.updated_at => Err(board_changed()),
            _ => Ok(update.apply(b, now)),
        })
        .await?;
    Ok(BoardRecord::new(&board, state.public_base()))
}

/// `DELETE /pinboards/{id}`: its placements go, its pins stay. `since` as for [`update`].
pub async fn delete(
    state: &AppState,
    who: &Principal,
    id: &str,
    since: Option<i64>,
) -> Result<Deleted> {
    if !state
        .store
        .delete_pinboard(&who.workspace_id, id, since)
        .await?
    {
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
    /// The board's `updated_at` after the change: not in the API's record; the board
    /// editor's next version.
    #[serde(skip)]
    pub board_updated_at: i64,
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
    since: Option<i64>,
) -> Result<PlacementRecord> {
    let input = match &body.position {
        None | Some(Value::Null) => None,
        Some(value) => Some(PositionInput::parse(value, "position")?),
    };
    let wanted = Wanted::new(input, "position")?;
    if let Reach::Board(_) = who.reach {
        guest_may_place(state, who, &body.pin_id).await?;
    }
    let placed = state
        .store
        .place_pin(
            &who.workspace_id,
            board_id,
            &body.pin_id,
            write_at(since),
            &mut |_, others| wanted.place(others),
        )
        .await?;
    Ok(PlacementRecord {
        pinboard_id: board_id.to_owned(),
        pin_id: body.pin_id,
        position: placed.position,
        board_updated_at: placed.board_updated_at,
    })
}

/// `PUT /pinboards/{id}/pins/{pinId}`: moves and/or resizes; unsent coordinates stay.
pub async fn move_pin(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    pin_id: &str,
    body: MoveBody,
    since: Option<i64>,
) -> Result<PlacementRecord> {
    let change = Move::new(
        PositionInput::parse(&body.position, "position")?,
        "position",
    )?;
    let placed = state
        .store
        .move_placement(
            &who.workspace_id,
            board_id,
            pin_id,
            write_at(since),
            &mut |current, others| match current {
                Some(current) => change.place(current, others, "position"),
                None => Err(Error::internal("move without a current position")),
            },
        )
        .await?;
    Ok(PlacementRecord {
        pinboard_id: board_id.to_owned(),
        pin_id: pin_id.to_owned(),
        position: placed.position,
        board_updated_at: placed.board_updated_at,
    })
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "RemovedPlacement", deny_unknown_fields)]
pub struct Removed {
    pub pinboard_id: String,
    pub pin_id: String,
    #[schemars(extend("const" = true))]
    pub deleted: bool,
    /// As [`PlacementRecord::board_updated_at`].
    #[serde(skip)]
    pub board_updated_at: i64,
}

/// `DELETE /pinboards/{id}/pins/{pinId}`: takes the pin off the board (the pin stays).
pub async fn unplace(
    state: &AppState,
    who: &Principal,
    board_id: &str,
    pin_id: &str,
    since: Option<i64>,
) -> Result<Removed> {
    let board_updated_at = state
        .store
        .remove_placement(&who.workspace_id, board_id, pin_id, write_at(since))
        .await?;
    Ok(Removed {
        pinboard_id: board_id.to_owned(),
        pin_id: pin_id.to_owned(),
        deleted: true,
        board_updated_at,
    })
}
