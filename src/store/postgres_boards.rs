//! Pinboards and placements on PostgreSQL. A placement write locks its board row first, so
//! two writers placing pins on one board take turns and the overlap check stays true; a
//! new placement also holds its pin (`FOR KEY SHARE`), so a concurrent pin delete either
//! happens first (404) or waits.

use sqlx::{postgres::PgRow, Connection, PgConnection, Row};

use super::boards::*;
use super::postgres::{pin_at, pin_from_row, PgStore};
use super::{Pin, PIN_COLUMNS};
use crate::error::Result;

fn board_from_row(row: &PgRow) -> Result<Pinboard> {
    Ok(Pinboard {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        description: row.try_get("description")?,
        tags: row.try_get("tags")?,
        sharing: Sharing {
            is_public: row.try_get("is_public")?,
            allow_edit: row.try_get("allow_edit")?,
            require_sign_in: row.try_get("require_sign_in")?,
            allow_comments: row.try_get("allow_comments")?,
        },
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn position_from_row(row: &PgRow) -> Result<Position> {
    Ok(Position {
        x: row.try_get("x")?,
        y: row.try_get("y")?,
        w: row.try_get("w")?,
        h: row.try_get("h")?,
    })
}

/// Locks the workspace's board `id` for the rest of the transaction; 404 when absent.
async fn lock_board(tx: &mut PgConnection, ws: &str, id: &str) -> Result<()> {
    sqlx::query("SELECT 1 FROM pinboards WHERE workspace_id = $1 AND id = $2 FOR UPDATE")
        .bind(ws)
        .bind(id)
        .fetch_optional(tx)
        .await?
        .map(|_| ())
        .ok_or_else(board_missing)
}

async fn placements(tx: &mut PgConnection, board_id: &str) -> Result<Vec<Placement>> {
    let rows = sqlx::query(BOARD_PLACEMENTS)
        .bind(board_id)
        .fetch_all(tx)
        .await?;
    rows.iter()
        .map(|r| {
            Ok(Placement {
                pin_id: r.try_get("pin_id")?,
                position: position_from_row(r)?,
            })
        })
        .collect()
}

async fn write_position(
    tx: &mut PgConnection,
    sql: &str,
    board_id: &str,
    pin_id: &str,
    at: Position,
    now: i64,
) -> Result<()> {
    sqlx::query(sql)
        .bind(board_id)
        .bind(pin_id)
        .bind(at.x)
        .bind(at.y)
        .bind(at.w)
        .bind(at.h)
        .execute(&mut *tx)
        .await?;
    sqlx::query(TOUCH_BOARD)
        .bind(board_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

impl BoardBackend for PgStore {
    async fn insert_pinboard(&self, ws: &str, board: &Pinboard) -> Result<()> {
        let s = board.sharing;
        sqlx::query(INSERT_BOARD)
            .bind(&board.id)
            .bind(ws)
            .bind(&board.title)
            .bind(&board.description)
            .bind(&board.tags)
            .bind(s.is_public)
            .bind(s.allow_edit)
            .bind(s.require_sign_in)
            .bind(s.allow_comments)
            .bind(board.created_at)
            .bind(board.updated_at)
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(())
    }

    async fn get_pinboard(&self, ws: &str, id: &str) -> Result<Option<Pinboard>> {
        let row = sqlx::query(&format!(
            "SELECT {BOARD_COLUMNS} FROM pinboards WHERE workspace_id = $1 AND id = $2"
        ))
        .bind(ws)
        .bind(id)
        .fetch_optional(&mut *self.conn().await?)
        .await?;
        row.as_ref().map(board_from_row).transpose()
    }

    async fn placed_pins(&self, ws: &str, board_id: &str) -> Result<Vec<PlacedPin>> {
        let rows = sqlx::query(PLACED_PINS)
            .bind(board_id)
            .bind(ws)
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(PlacedPin {
                    position: position_from_row(r)?,
                    pin: pin_at(r, 4)?,
                })
            })
            .collect()
    }

    async fn list_pinboards(&self, ws: &str, query: &BoardQuery) -> Result<Vec<(i64, Pinboard)>> {
        let rows = sqlx::query(&format!(
            "SELECT seq, {BOARD_COLUMNS} FROM pinboards WHERE workspace_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3"
        ))
        .bind(ws)
        .bind(query.before_seq.unwrap_or(i64::MAX))
        .bind(query.limit)
        .fetch_all(&mut *self.conn().await?)
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("seq")?, board_from_row(r)?)))
            .collect()
    }

    async fn update_pinboard(
        &self,
        ws: &str,
        id: &str,
        change: &mut BoardChange<'_>,
    ) -> Result<Pinboard> {
        let mut conn = self.conn().await?;
        let mut tx = conn.begin().await?;
        let row = sqlx::query(&format!(
            "SELECT {BOARD_COLUMNS} FROM pinboards WHERE workspace_id = $1 AND id = $2 FOR UPDATE"
        ))
        .bind(ws)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(board_missing)?;
        let new = change(board_from_row(&row)?)?;
        let s = new.sharing;
        sqlx::query(UPDATE_BOARD)
            .bind(id)
            .bind(&new.title)
            .bind(&new.description)
            .bind(&new.tags)
            .bind(s.is_public)
            .bind(s.allow_edit)
            .bind(s.require_sign_in)
            .bind(s.allow_comments)
            .bind(new.updated_at)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(new)
    }

    async fn delete_pinboard(&self, ws: &str, id: &str) -> Result<bool> {
        // One statement: the board goes, its placements follow (ON DELETE CASCADE).
        let done = sqlx::query("DELETE FROM pinboards WHERE workspace_id = $1 AND id = $2")
            .bind(ws)
            .bind(id)
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn place_pin(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        now: i64,
        place: &mut Placer<'_>,
    ) -> Result<Position> {
        let mut conn = self.conn().await?;
        let mut tx = conn.begin().await?;
        lock_board(&mut tx, ws, board_id).await?;
        sqlx::query("SELECT 1 FROM pins WHERE workspace_id = $1 AND id = $2 FOR KEY SHARE")
            .bind(ws)
            .bind(pin_id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(pin_absent)?;
        let (current, others) = split_placements(placements(&mut tx, board_id).await?, pin_id);
        if current.is_some() {
            return Err(already_placed());
        }
        let at = place(None, &others)?;
        write_position(&mut tx, INSERT_PLACEMENT, board_id, pin_id, at, now).await?;
        tx.commit().await?;
        Ok(at)
    }

    async fn move_placement(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        now: i64,
        place: &mut Placer<'_>,
    ) -> Result<Position> {
        let mut conn = self.conn().await?;
        let mut tx = conn.begin().await?;
        lock_board(&mut tx, ws, board_id).await?;
        let (current, others) = split_placements(placements(&mut tx, board_id).await?, pin_id);
        let current = current.ok_or_else(placement_missing)?;
        let at = place(Some(current), &others)?;
        write_position(&mut tx, MOVE_PLACEMENT, board_id, pin_id, at, now).await?;
        tx.commit().await?;
        Ok(at)
    }

    async fn remove_placement(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        now: i64,
    ) -> Result<()> {
        let mut conn = self.conn().await?;
        let mut tx = conn.begin().await?;
        lock_board(&mut tx, ws, board_id).await?;
        let done = sqlx::query("DELETE FROM placements WHERE pinboard_id = $1 AND pin_id = $2")
            .bind(board_id)
            .bind(pin_id)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(placement_missing());
        }
        sqlx::query(TOUCH_BOARD)
            .bind(board_id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn shared_pin(&self, id: &str) -> Result<Option<Pin>> {
        let row = sqlx::query(&format!(
            "SELECT {PIN_COLUMNS} FROM pins WHERE id = $1 AND is_public AND NOT require_sign_in"
        ))
        .bind(id)
        .fetch_optional(&mut *self.conn().await?)
        .await?;
        row.as_ref().map(pin_from_row).transpose()
    }

    async fn shared_board(&self, id: &str) -> Result<Option<(Pinboard, Vec<PlacedPin>)>> {
        let row = sqlx::query(&format!(
            "SELECT workspace_id, {BOARD_COLUMNS} FROM pinboards WHERE id = $1 AND is_public AND NOT require_sign_in"
        ))
        .bind(id)
        .fetch_optional(&mut *self.conn().await?)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let ws: String = row.try_get("workspace_id")?;
        let board = board_from_row(&row)?;
        let pins = self.placed_pins(&ws, id).await?;
        Ok(Some((board, pins)))
    }
}
