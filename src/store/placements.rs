//! Placements of pins on boards, written once for both databases. A placement write reads
//! the board's placements, checks the overlap and writes in one transaction that holds the
//! board ([`Backend::FOR_UPDATE`]: PostgreSQL locks its row, SQLite's one writer excludes
//! every other), so two writers placing pins on one board take turns and the overlap check
//! stays true; a new placement also holds its pin ([`Backend::FOR_KEY_SHARE`]), so a
//! concurrent pin delete either happens first (404) or waits.

use super::sql::Begin as _;

use super::boards::{
    board_changed, board_missing, board_updated, position_from_row, Placement, Position,
};
use super::sql::{Backend, Record};
use crate::error::{Error, Result};

/// Decides, inside the write transaction, where a pin goes: given its current position
/// (`None` when it is being placed) and every other placement of the board.
pub type Placer<'a> = dyn FnMut(Option<Position>, &[Placement]) -> Result<Position> + Send + 'a;

/// When a placement write happens, and on which state of the board.
#[derive(Debug, Clone, Copy)]
pub struct BoardWrite {
    pub now: i64,
    /// The board's `updated_at` as the writer last saw it: when the board has moved on
    /// since, nothing is written ([`board_changed`], 409). `None`: whatever it is now.
    pub since: Option<i64>,
}

/// What a placement write left: the pin's position and the board's new `updated_at`.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub position: Position,
    pub board_updated_at: i64,
}

/// Where pins sit on boards. Every write is one transaction that touches the board's
/// `updated_at`.
pub(crate) trait PlacementStore {
    /// Places a pin of the workspace where `place` says (404 for a missing board or pin,
    /// 409 when it is already on the board), touching the board's `updated_at`.
    async fn place_pin(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        at: BoardWrite,
        place: &mut Placer<'_>,
    ) -> Result<Placed>;
    /// Moves or resizes a placed pin where `place` says.
    async fn move_placement(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        at: BoardWrite,
        place: &mut Placer<'_>,
    ) -> Result<Placed>;
    /// Takes a pin off the board; the board's new `updated_at`.
    async fn remove_placement(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        at: BoardWrite,
    ) -> Result<i64>;
}

fn placement_missing() -> Error {
    Error::NotFound {
        what: "placement",
        index: None,
    }
}

fn pin_absent() -> Error {
    Error::NotFound {
        what: "pin",
        index: None,
    }
}

fn already_placed() -> Error {
    Error::Conflict("the pin is already on this pinboard".into())
}

const BOARD_PLACEMENTS: &str = "SELECT x, y, w, h, pin_id FROM placements WHERE pinboard_id = $1";
const INSERT_PLACEMENT: &str =
    "INSERT INTO placements (pinboard_id, pin_id, x, y, w, h) VALUES ($1, $2, $3, $4, $5, $6)";
const MOVE_PLACEMENT: &str =
    "UPDATE placements SET x = $3, y = $4, w = $5, h = $6 WHERE pinboard_id = $1 AND pin_id = $2";
const REMOVE_PLACEMENT: &str = "DELETE FROM placements WHERE pinboard_id = $1 AND pin_id = $2";
/// The board's `updated_at` moves strictly forward ([`super::Pinboard::next_updated_at`]).
const TOUCH_BOARD: &str = "UPDATE pinboards SET updated_at = CASE WHEN updated_at >= $2 \
     THEN updated_at + 1 ELSE $2 END WHERE id = $1 RETURNING updated_at";
const PIN_OF_WORKSPACE: &str = "SELECT 1 FROM pins WHERE workspace_id = $1 AND id = $2";

/// Holds the workspace's board `id` for the rest of the transaction; 404 when absent, 409
/// when its `updated_at` is no longer `since`.
async fn hold_board<B: Backend>(
    tx: &mut B::Db,
    ws: &str,
    id: &str,
    since: Option<i64>,
) -> Result<()> {
    let sql = format!(
        "SELECT updated_at FROM pinboards WHERE workspace_id = $1 AND id = $2{}",
        B::FOR_UPDATE
    );
    let row = B::query(&sql)
        .bind(ws)
        .bind(id)
        .fetch_optional(tx)
        .await?
        .ok_or_else(board_missing)?;
    let updated_at: i64 = row.get(0)?;
    match since {
        Some(since) if since != updated_at => Err(board_changed()),
        _ => Ok(()),
    }
}

async fn placements<B: Backend>(tx: &mut B::Db, board_id: &str) -> Result<Vec<Placement>> {
    let rows = B::query(BOARD_PLACEMENTS)
        .bind(board_id)
        .fetch_all(tx)
        .await?;
    rows.iter()
        .map(|r| {
            Ok(Placement {
                pin_id: r.get(4)?,
                position: position_from_row(r)?,
            })
        })
        .collect()
}

/// Writes a placement (`sql` is [`INSERT_PLACEMENT`] or [`MOVE_PLACEMENT`]) and touches the
/// board's `updated_at`, answering the new one.
async fn write_position<B: Backend>(
    tx: &mut B::Db,
    sql: &str,
    board_id: &str,
    pin_id: &str,
    at: Position,
    now: i64,
) -> Result<i64> {
    B::query(sql)
        .bind(board_id)
        .bind(pin_id)
        .bind(at.x)
        .bind(at.y)
        .bind(at.w)
        .bind(at.h)
        .execute(&mut *tx)
        .await?;
    touch_board::<B>(tx, board_id, now).await
}

/// Appends the board's [`crate::events::EventKind::PinboardUpdated`] (with its placements as they now stand) and
/// commits.
async fn commit_board<B: Backend>(
    store: &B,
    mut tx: sqlx::Transaction<'_, <B::Db as sqlx::Connection>::Database>,
    ws: &str,
    board_id: &str,
) -> Result<()> {
    let event = board_updated::<B>(&mut *tx, ws, board_id, store.render()).await?;
    B::append_events(&mut *tx, &[event]).await?;
    tx.commit().await?;
    store.committed(ws);
    Ok(())
}

/// Moves the board's `updated_at` on; the new one.
async fn touch_board<B: Backend>(tx: &mut B::Db, board_id: &str, now: i64) -> Result<i64> {
    let row = B::query(TOUCH_BOARD)
        .bind(board_id)
        .bind(now)
        .fetch_optional(tx)
        .await?
        .ok_or_else(board_missing)?;
    Ok(row.get(0)?)
}

/// Splits a board's placements into the one of `pin_id` and the others.
fn split_placements(all: Vec<Placement>, pin_id: &str) -> (Option<Position>, Vec<Placement>) {
    let mut current = None;
    let others = all
        .into_iter()
        .filter(|p| {
            if p.pin_id == pin_id {
                current = Some(p.position);
                false
            } else {
                true
            }
        })
        .collect();
    (current, others)
}

impl<B: Backend> PlacementStore for B {
    async fn place_pin(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        at: BoardWrite,
        place: &mut Placer<'_>,
    ) -> Result<Placed> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        hold_board::<B>(&mut *tx, ws, board_id, at.since).await?;
        let sql = format!("{PIN_OF_WORKSPACE}{}", B::FOR_KEY_SHARE);
        B::query(&sql)
            .bind(ws)
            .bind(pin_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(pin_absent)?;
        let (current, others) =
            split_placements(placements::<B>(&mut *tx, board_id).await?, pin_id);
        if current.is_some() {
            return Err(already_placed());
        }
        let position = place(None, &others)?;
        let board_updated_at = write_position::<B>(
            &mut *tx,
            INSERT_PLACEMENT,
            board_id,
            pin_id,
            position,
            at.now,
        )
        .await?;
        commit_board(self, tx, ws, board_id).await?;
        Ok(Placed {
            position,
            board_updated_at,
        })
    }

    async fn move_placement(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        at: BoardWrite,
        place: &mut Placer<'_>,
    ) -> Result<Placed> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        hold_board::<B>(&mut *tx, ws, board_id, at.since).await?;
        let (current, others) =
            split_placements(placements::<B>(&mut *tx, board_id).await?, pin_id);
        let current = current.ok_or_else(placement_missing)?;
        let position = place(Some(current), &others)?;
        let board_updated_at =
            write_position::<B>(&mut *tx, MOVE_PLACEMENT, board_id, pin_id, position, at.now)
                .await?;
        commit_board(self, tx, ws, board_id).await?;
        Ok(Placed {
            position,
            board_updated_at,
        })
    }

    async fn remove_placement(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        at: BoardWrite,
    ) -> Result<i64> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        hold_board::<B>(&mut *tx, ws, board_id, at.since).await?;
        let done = B::query(REMOVE_PLACEMENT)
            .bind(board_id)
            .bind(pin_id)
            .execute(&mut *tx)
            .await?;
        if done == 0 {
            return Err(placement_missing());
        }
        let board_updated_at = touch_board::<B>(&mut *tx, board_id, at.now).await?;
        commit_board(self, tx, ws, board_id).await?;
        Ok(board_updated_at)
    }
}
