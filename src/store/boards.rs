//! Pinboards and placements in the store: the stored shapes and [`BoardBackend`], which both
//! stores implement next to [`super::Backend`] (in `sqlite_boards.rs` and
//! `postgres_boards.rs`).

use super::Pin;
use crate::error::{Error, Result};

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

impl Pin {
    /// The pin's share settings (flat fields of the pin, as `is_public` came first).
    pub fn sharing(&self) -> Sharing {
        Sharing {
            is_public: self.is_public,
            allow_edit: self.allow_edit,
            require_sign_in: self.require_sign_in,
            allow_comments: self.allow_comments,
        }
    }

    pub fn set_sharing(&mut self, sharing: Sharing) {
        self.is_public = sharing.is_public;
        self.allow_edit = sharing.allow_edit;
        self.require_sign_in = sharing.require_sign_in;
        self.allow_comments = sharing.allow_comments;
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

/// A rectangle on a board's 12-column grid, in grid cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
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

/// Decides, inside the write transaction, where a pin goes: given its current position
/// (`None` when it is being placed) and every other placement of the board.
pub type Placer<'a> = dyn FnMut(Option<Position>, &[Placement]) -> Result<Position> + Send + 'a;

/// The board half of what both stores implement. Every write is one transaction, and
/// every method but the `shared_*` ones takes the caller's workspace id.
pub(crate) trait BoardBackend {
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
    /// Removes the board and its placements (never its pins); false when absent.
    async fn delete_pinboard(&self, ws: &str, id: &str) -> Result<bool>;
    /// Places a pin of the workspace where `place` says (404 for a missing board or pin,
    /// 409 when it is already on the board), touching the board's `updated_at`.
    async fn place_pin(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        now: i64,
        place: &mut Placer<'_>,
    ) -> Result<Position>;
    /// Moves or resizes a placed pin where `place` says.
    async fn move_placement(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        now: i64,
        place: &mut Placer<'_>,
    ) -> Result<Position>;
    async fn remove_placement(
        &self,
        ws: &str,
        board_id: &str,
        pin_id: &str,
        now: i64,
    ) -> Result<()>;
    /// For share pages, which know only an id: the pin when anyone may see it
    /// ([`Sharing::visible_anonymously`], checked in the query itself).
    async fn shared_pin(&self, id: &str) -> Result<Option<Pin>>;
    /// For share pages: the board with its placed pins when anyone may see it.
    async fn shared_board(&self, id: &str) -> Result<Option<(Pinboard, Vec<PlacedPin>)>>;
}

pub(super) fn board_missing() -> Error {
    Error::NotFound {
        what: "pinboard",
        index: None,
    }
}

pub(super) fn placement_missing() -> Error {
    Error::NotFound {
        what: "placement",
        index: None,
    }
}

pub(super) fn pin_absent() -> Error {
    Error::NotFound {
        what: "pin",
        index: None,
    }
}

pub(super) fn already_placed() -> Error {
    Error::Conflict("the pin is already on this pinboard".into())
}

/// The columns of a board, in the order both `board_from_row`s read them.
pub(super) const BOARD_COLUMNS: &str = "id, title, description, tags, is_public, allow_edit, \
     require_sign_in, allow_comments, created_at, updated_at";
pub(super) const INSERT_BOARD: &str = "INSERT INTO pinboards (id, workspace_id, title, description, tags, is_public, allow_edit, \
     require_sign_in, allow_comments, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
pub(super) const UPDATE_BOARD: &str =
    "UPDATE pinboards SET title = $2, description = $3, tags = $4, is_public = $5, \
     allow_edit = $6, require_sign_in = $7, allow_comments = $8, updated_at = $9 WHERE id = $1";
/// Every placement of a board with its pin: one join, ordered by position.
pub(super) const PLACED_PINS: &str = "SELECT pl.x, pl.y, pl.w, pl.h, p.id, p.pin_type, p.pin_config, p.pin_layout, \
     p.is_public, p.allow_edit, p.require_sign_in, p.allow_comments, p.title, p.tags, p.provenance, p.version, \
     p.created_at, p.updated_at FROM placements pl JOIN pins p ON p.id = pl.pin_id \
     WHERE pl.pinboard_id = $1 AND p.workspace_id = $2 ORDER BY pl.y, pl.x, pl.pin_id";
pub(super) const BOARD_PLACEMENTS: &str =
    "SELECT pin_id, x, y, w, h FROM placements WHERE pinboard_id = $1";
pub(super) const INSERT_PLACEMENT: &str =
    "INSERT INTO placements (pinboard_id, pin_id, x, y, w, h) VALUES ($1, $2, $3, $4, $5, $6)";
pub(super) const MOVE_PLACEMENT: &str =
    "UPDATE placements SET x = $3, y = $4, w = $5, h = $6 WHERE pinboard_id = $1 AND pin_id = $2";
pub(super) const TOUCH_BOARD: &str =
    "UPDATE pinboards SET updated_at = CASE WHEN updated_at > $2 THEN updated_at ELSE $2 END WHERE id = $1";

/// Splits a board's placements into the one of `pin_id` and the others.
pub(super) fn split_placements(
    all: Vec<Placement>,
    pin_id: &str,
) -> (Option<Position>, Vec<Placement>) {
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
