//! Pinboards in the store: the stored shapes and [`BoardStore`], written once for both
//! databases. Placements are [`super::PlacementStore`]'s.

use super::sql::Begin as _;

use super::events::{NewEvent, Render};
use super::pins::{pin_at, PIN_COLUMNS};
use super::sql::{Backend, Record};
use super::Pin;
use crate::error::{Error, Result};
use crate::events::EventKind;

/// Share settings of a pin or a board (SPEC.md 2.5). `is_public` is the very column the
/// records show, so the record and the share settings always agree.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Sharing {
    pub is_public: bool,
    pub allow_edit: bool,
    pub require_sign_in: bool,
    pub allow_comments: bool,
}

impl Sharing {
    /// Whether an anonymous visitor may see the share page.
    pub fn visible_anonymously(self) -> bool {
        self.is_public && !self.require_sign_in
    }
}

/// A stored pinboard.
#[derive(Debug, Clone)]
pub struct Pinboard {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub sharing: Sharing,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Pinboard {
    /// The `updated_at` of a write at `now`: strictly after the board's last one, so two
    /// writes in one millisecond still differ and `updated_at` can serve as the board's
    /// version (the editor's conflict check). [`super::placements`]' touch says the same in SQL.
    pub fn next_updated_at(&self, now: i64) -> i64 {
        now.max(self.updated_at.saturating_add(1))
    }
}

/// A write refused because the board moved on since the writer read it (its `updated_at`
/// is no longer the one the writer names).
pub fn board_changed() -> Error {
    Error::Conflict("the board changed since this page showed it (someone else edited it)".into())
}

/// A rectangle on a board's 12-column grid, in grid cells.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Position {
    pub x: i64,
    pub y: i64,
    pub w: i64,
    pub h: i64,
}

/// A pin's place on a board.
#[derive(Debug, Clone)]
pub struct Placement {
    pub pin_id: String,
    pub position: Position,
}

/// A placement with the pin it places, as a board read returns it.
#[derive(Debug, Clone)]
pub struct PlacedPin {
    pub position: Position,
    pub pin: Pin,
}

/// Position of one page of `GET /pinboards`, newest first.
#[derive(Debug, Clone, Default)]
pub struct BoardQuery {
    /// Rows to fetch (one more than shown, to learn `has_more`).
    pub limit: i64,
    /// Only boards created before this position (from the cursor).
    pub before_seq: Option<i64>,
}

/// Decides, inside the write transaction, what a board becomes (or refuses it).
pub type BoardChange<'a> = dyn FnMut(Pinboard) -> Result<Pinboard> + Send + 'a;

/// Pinboards in the store. Every write is one transaction, and every method but the
/// `shared_*` ones takes the caller's workspace id.
pub(crate) trait BoardStore {
    async fn insert_pinboard(&self, ws: &str, board: &Pinboard) -> Result<()>;
    async fn get_pinboard(&self, ws: &str, id: &str) -> Result<Option<Pinboard>>;
    /// The pins placed on a board, ordered by position (y, then x), in one query.
    async fn placed_pins(&self, ws: &str, board_id: &str) -> Result<Vec<PlacedPin>>;
    async fn list_pinboards(&self, ws: &str, query: &BoardQuery) -> Result<Vec<(i64, Pinboard)>>;
    /// Applies `change` to the board; 404 when it is absent.
    async fn update_pinboard(
        &self,
        ws: &str,
        id: &str,
        change: &mut BoardChange<'_>,
    ) -> Result<Pinboard>;
    /// Removes the board and its placements (never its pins); false when absent. With
    /// `since`, only while the board's `updated_at` is still that ([`board_changed`] when not).
    async fn delete_pinboard(&self, ws: &str, id: &str, since: Option<i64>) -> Result<bool>;
    /// For share pages, which know only an id: the pin when anyone may see it
    /// ([`Sharing::visible_anonymously`], checked in the query itself).
    async fn shared_pin(&self, id: &str) -> Result<Option<Pin>>;
    /// For share pages: the board with its placed pins when anyone may see it.
    async fn shared_board(&self, id: &str) -> Result<Option<(Pinboard, Vec<PlacedPin>)>>;
    /// For share streams: the workspace of the pin or board `id` when anyone may see it.
    async fn shared_workspace(&self, id: &str) -> Result<Option<String>>;
    /// The workspace of the pin or board `id`, whoever may see it: for pages that have
    /// already decided the visitor may (to resolve the item's templates in its workspace).
    async fn workspace_of(&self, id: &str) -> Result<Option<String>>;
}

pub(super) fn board_missing() -> Error {
    Error::NotFound {
        what: "pinboard",
        index: None,
    }
}

/// The columns of a board, in the order [`board_at`] reads them.
const BOARD_COLUMNS: &str = "id, title, description, tags, is_public, allow_edit, \
     require_sign_in, allow_comments, created_at, updated_at";
const INSERT_BOARD: &str = "INSERT INTO pinboards (id, workspace_id, title, description, tags, is_public, allow_edit, \
     require_sign_in, allow_comments, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
const UPDATE_BOARD: &str =
    "UPDATE pinboards SET title = $2, description = $3, tags = $4, is_public = $5, \
     allow_edit = $6, require_sign_in = $7, allow_comments = $8, updated_at = $9 WHERE id = $1";
/// Every placement of a board with its pin: one join, ordered by position.
const PLACED_PINS: &str = "SELECT pl.x, pl.y, pl.w, pl.h, p.id, p.pin_type, p.pin_config, p.pin_layout, \
     p.is_public, p.allow_edit, p.require_sign_in, p.allow_comments, p.title, p.tags, p.provenance, p.version, \
     p.created_at, p.updated_at, p.key, p.expected_every_secs, p.last_pushed_at, p.status_rules, p.status \
     FROM placements pl JOIN pins p ON p.id = pl.pin_id \
     WHERE pl.pinboard_id = $1 AND p.workspace_id = $2 ORDER BY pl.y, pl.x, pl.pin_id";
const SHARED_WORKSPACE: &str = "SELECT workspace_id FROM pins WHERE id = $1 AND is_public \
     AND NOT require_sign_in UNION ALL SELECT workspace_id FROM pinboards WHERE id = $1 \
     AND is_public AND NOT require_sign_in";
const WORKSPACE_OF: &str = "SELECT workspace_id FROM pins WHERE id = $1 \
     UNION ALL SELECT workspace_id FROM pinboards WHERE id = $1";
const DELETE_BOARD: &str = "DELETE FROM pinboards WHERE workspace_id = $1 AND id = $2 \
     AND ($3 IS NULL OR updated_at = $3)";
const BOARD_EXISTS: &str = "SELECT 1 FROM pinboards WHERE workspace_id = $1 AND id = $2";

/// [`BOARD_COLUMNS`] with each column qualified by `prefix` (`"p."`), for joins.
pub(super) fn board_columns_at(prefix: &str) -> String {
    BOARD_COLUMNS
        .split(", ")
        .map(|column| format!("{prefix}{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A board from [`BOARD_COLUMNS`] at column `first` on.
pub(super) fn board_at(row: &impl Record, first: usize) -> Result<Pinboard> {
    Ok(Pinboard {
        id: row.get(first)?,
        title: row.get(first + 1)?,
        description: row.get(first + 2)?,
        tags: row.list(first + 3)?,
        sharing: Sharing {
            is_public: row.get(first + 4)?,
            allow_edit: row.get(first + 5)?,
            require_sign_in: row.get(first + 6)?,
            allow_comments: row.get(first + 7)?,
        },
        created_at: row.get(first + 8)?,
        updated_at: row.get(first + 9)?,
    })
}

/// A position from the row's first four columns (`x, y, w, h`).
pub(super) fn position_from_row(row: &impl Record) -> Result<Position> {
    Ok(Position {
        x: row.get(0)?,
        y: row.get(1)?,
        w: row.get(2)?,
        h: row.get(3)?,
    })
}

fn board_event(
    ws: &str,
    kind: EventKind,
    board: &Pinboard,
    pins: &[PlacedPin],
    render: &dyn Render,
) -> Result<NewEvent> {
    Ok(NewEvent {
        workspace_id: ws.to_owned(),
        kind,
        resource_id: board.id.clone(),
        version: None,
        boards: vec![board.id.clone()],
        at: board.updated_at,
        data: render.board(board, pins)?,
    })
}

/// The [`EventKind::PinboardUpdated`] event of the workspace's board `id` as it stands in the
/// transaction, with its placements.
pub(super) async fn board_updated<B: Backend>(
    tx: &mut B::Db,
    ws: &str,
    id: &str,
    render: &dyn Render,
) -> Result<NewEvent> {
    let sql = format!("SELECT {BOARD_COLUMNS} FROM pinboards WHERE workspace_id = $1 AND id = $2");
    let row = B::query(&sql)
        .bind(ws)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(board_missing)?;
    let board = board_at(&row, 0)?;
    let rows = B::query(PLACED_PINS)
        .bind(id)
        .bind(ws)
        .fetch_all(tx)
        .await?;
    let pins = rows
        .iter()
        .map(placed_from_row)
        .collect::<Result<Vec<_>>>()?;
    board_event(ws, EventKind::PinboardUpdated, &board, &pins, render)
}

fn placed_from_row(row: &impl Record) -> Result<PlacedPin> {
    Ok(PlacedPin {
        position: position_from_row(row)?,
        pin: pin_at(row, 4)?,
    })
}

impl<B: Backend> BoardStore for B {
    async fn insert_pinboard(&self, ws: &str, board: &Pinboard) -> Result<()> {
        let s = board.sharing;
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        B::query(INSERT_BOARD)
            .bind(&board.id)
            .bind(ws)
            .bind(&board.title)
            .bind(&board.description)
            .bind_list(&board.tags)
            .bind(s.is_public)
            .bind(s.allow_edit)
            .bind(s.require_sign_in)
            .bind(s.allow_comments)
            .bind(board.created_at)
            .bind(board.updated_at)
            .execute(&mut *tx)
            .await?;
        let event = board_event(ws, EventKind::PinboardCreated, board, &[], self.render())?;
        B::append_events(&mut *tx, &[event]).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(())
    }

    async fn get_pinboard(&self, ws: &str, id: &str) -> Result<Option<Pinboard>> {
        let sql =
            format!("SELECT {BOARD_COLUMNS} FROM pinboards WHERE workspace_id = $1 AND id = $2");
        let row = B::query(&sql)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.map(|r| board_at(&r, 0)).transpose()
    }

    async fn placed_pins(&self, ws: &str, board_id: &str) -> Result<Vec<PlacedPin>> {
        let rows = B::query(PLACED_PINS)
            .bind(board_id)
            .bind(ws)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(placed_from_row).collect()
    }

    async fn list_pinboards(&self, ws: &str, query: &BoardQuery) -> Result<Vec<(i64, Pinboard)>> {
        let sql = format!(
            "SELECT seq, {BOARD_COLUMNS} FROM pinboards WHERE workspace_id = $1 AND seq < $2 \
             ORDER BY seq DESC LIMIT $3"
        );
        let rows = B::query(&sql)
            .bind(ws)
            .bind(query.before_seq.unwrap_or(i64::MAX))
            .bind(query.limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| Ok((r.get(0)?, board_at(r, 1)?)))
            .collect()
    }

    async fn update_pinboard(
        &self,
        ws: &str,
        id: &str,
        change: &mut BoardChange<'_>,
    ) -> Result<Pinboard> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let sql = format!(
            "SELECT {BOARD_COLUMNS} FROM pinboards WHERE workspace_id = $1 AND id = $2{}",
            B::FOR_UPDATE
        );
        let row = B::query(&sql)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(board_missing)?;
        let new = change(board_at(&row, 0)?)?;
        let s = new.sharing;
        B::query(UPDATE_BOARD)
            .bind(id)
            .bind(&new.title)
            .bind(&new.description)
            .bind_list(&new.tags)
            .bind(s.is_public)
            .bind(s.allow_edit)
            .bind(s.require_sign_in)
            .bind(s.allow_comments)
            .bind(new.updated_at)
            .execute(&mut *tx)
            .await?;
        let event = board_updated::<B>(&mut *tx, ws, id, self.render()).await?;
        B::append_events(&mut *tx, &[event]).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(new)
    }

    async fn delete_pinboard(&self, ws: &str, id: &str, since: Option<i64>) -> Result<bool> {
        // The board goes, its placements follow (ON DELETE CASCADE; SQLite's writer
        // connection enforces foreign keys).
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let done = B::query(DELETE_BOARD)
            .bind(ws)
            .bind(id)
            .bind(since)
            .execute(&mut *tx)
            .await?;
        if done != 1 {
            let exists = B::query(BOARD_EXISTS)
                .bind(ws)
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?;
            return match exists {
                Some(_) => Err(board_changed()),
                None => Ok(false),
            };
        }
        let event = NewEvent::deleted(
            ws,
            EventKind::PinboardDeleted,
            id,
            vec![id.to_owned()],
            crate::clock::now_ms(),
        );
        B::append_events(&mut *tx, &[event]).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(true)
    }

    async fn shared_pin(&self, id: &str) -> Result<Option<Pin>> {
        let sql = format!(
            "SELECT {PIN_COLUMNS} FROM pins WHERE id = $1 AND is_public AND NOT require_sign_in"
        );
        let row = B::query(&sql)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.map(|r| pin_at(&r, 0)).transpose()
    }

    async fn shared_board(&self, id: &str) -> Result<Option<(Pinboard, Vec<PlacedPin>)>> {
        let sql = format!(
            "SELECT workspace_id, {BOARD_COLUMNS} FROM pinboards \
             WHERE id = $1 AND is_public AND NOT require_sign_in"
        );
        let row = B::query(&sql)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let ws: String = row.get(0)?;
        let board = board_at(&row, 1)?;
        let pins = self.placed_pins(&ws, id).await?;
        Ok(Some((board, pins)))
    }

    async fn shared_workspace(&self, id: &str) -> Result<Option<String>> {
        let row = B::query(SHARED_WORKSPACE)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(row.map(|r| r.get(0)).transpose()?)
    }

    async fn workspace_of(&self, id: &str) -> Result<Option<String>> {
        let row = B::query(WORKSPACE_OF)
            .bind(id)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(row.map(|r| r.get(0)).transpose()?)
    }
}
