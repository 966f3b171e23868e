//! Storage: one interface (`Backend`), two implementations (SQLite, PostgreSQL), picked by
//! the URL scheme. Every pin and board method takes the caller's workspace id: there is no
//! way to read or write a pin by id alone. The one exception is what share pages read
//! (`shared_pin`, `shared_board`): they know only an id, and the query itself admits only
//! what anyone may see; and `board_grant`, a user's collaborator role on a board of any
//! workspace.
//!
//! The statements one create and one read run are named constants (`FIND_KEY`,
//! `INSERT_PIN`, `postgres::GET_PINS`): `bench/sql/` runs the same text beside them.

/// [`PIN_COLUMNS`] as a literal, so statements that list them can be `concat!`ed constants.
macro_rules! pin_columns {
    () => {
        "id, pin_type, pin_config, pin_layout, is_public, allow_edit, require_sign_in, \
         allow_comments, title, tags, provenance, version, created_at, updated_at"
    };
}

/// The head of [`INSERT_PIN`], before its `VALUES`; SQLite's batches add many rows to it.
macro_rules! insert_pins_into {
    () => {
        "INSERT INTO pins (id, workspace_id, pin_type, pin_config, pin_layout, is_public, \
         title, tags, provenance, version, created_at, updated_at)"
    };
}

mod boards;
mod group_commit;
mod identity;
mod pg_commit;
pub(crate) mod pg_conn;
pub(crate) mod postgres;
mod postgres_boards;
mod postgres_identity;
mod sqlite;
mod sqlite_boards;
mod sqlite_commit;
mod sqlite_identity;

pub use boards::{
    BoardChange, BoardQuery, Pinboard, PlacedPin, Placement, Placer, Position, Sharing,
};

use crate::{error::Result, Error};
pub use identity::{Collaborator, Member, RoleRow, SignIn, UserRow};

use boards::BoardBackend;
use identity::IdentityBackend;

/// A stored pin, or one past version of it. JSON columns stay JSON text.
#[derive(Debug, Clone)]
pub struct Pin {
    pub id: String,
    pub pin_type: String,
    pub pin_config: String,
    pub pin_layout: String,
    /// The share settings: `is_public` shows in the record, the others only through
    /// `/pins/{id}/share` (see [`Pin::sharing`]).
    pub is_public: bool,
    pub allow_edit: bool,
    pub require_sign_in: bool,
    pub allow_comments: bool,
    pub title: Option<String>,
    pub tags: Vec<String>,
    pub provenance: Option<String>,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A stored API key (the secret itself is never stored).
#[derive(Debug, Clone)]
pub struct KeyRow {
    pub id: String,
    pub workspace_id: String,
    pub name: String,
    pub lookup: String,
    pub secret_hash: String,
    pub scopes: String,
    pub tier: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
    /// Past this instant the key no longer authenticates.
    pub expires_at: Option<i64>,
}

/// Filters and position of one page of `GET /pins`, newest first.
#[derive(Debug, Clone, Default)]
pub struct PinQuery {
    /// Rows to fetch (the caller asks one more than it shows, to learn `has_more`).
    pub limit: i64,
    /// Only pins created before this position (from the cursor).
    pub before_seq: Option<i64>,
    pub pin_type: Option<String>,
    pub tag: Option<String>,
    pub updated_since: Option<i64>,
    /// Only pins placed on this board (of the same workspace).
    pub pinboard_id: Option<String>,
}

/// One state of a pin, in a listed page: every write of a pin gives it a new version, so
/// `id` and `version` name its record (`updated_at` is checked too, at no cost).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinKey {
    /// The page position (`seq`), for the cursor.
    pub seq: i64,
    pub id: String,
    pub version: i64,
    pub updated_at: i64,
}

/// The first answer to an `Idempotency-Key`, replayed for retries.
#[derive(Debug, Clone)]
pub struct Idempotent {
    pub key: String,
    pub request_hash: String,
    pub response: String,
    pub created_at: i64,
    /// Records created before this have expired: a new request may take over their key.
    pub live_since: i64,
}

/// Result of a create that carries an idempotency record.
#[derive(Debug)]
pub enum Created {
    Stored,
    /// Another request committed the same `Idempotency-Key` first; nothing was written.
    KeyTaken,
}

/// Decides, inside the write transaction, what a pin becomes (or refuses it).
pub type Change<'a> = dyn FnMut(usize, Pin) -> Result<Pin> + Send + 'a;
/// Checks, inside the delete transaction, that a pin may go.
pub type DeleteCheck<'a> = dyn FnMut(usize, &Pin) -> Result<()> + Send + 'a;

/// What both stores implement (with [`BoardBackend`] and [`IdentityBackend`]). Every write
/// method is one transaction.
pub(crate) trait Backend {
    async fn ping(&self) -> Result<()>;
    async fn close(&self);

    async fn ensure_workspace(&self, name: &str) -> Result<String>;
    /// True exactly once per store: the caller then creates the first key.
    async fn claim_bootstrap(&self) -> Result<bool>;
    async fn insert_key(&self, key: &KeyRow) -> Result<()>;
    async fn find_key(&self, lookup: &str) -> Result<Option<KeyRow>>;
    async fn list_keys(&self) -> Result<Vec<(KeyRow, String)>>;
    async fn revoke_key(&self, id: &str, at: i64) -> Result<bool>;
    async fn touch_key(&self, id: &str, at: i64) -> Result<()>;

    async fn insert_pins(
        &self,
        ws: &str,
        pins: &[Pin],
        idem: Option<&Idempotent>,
    ) -> Result<Created>;
    async fn get_pins(&self, ws: &str, ids: &[String]) -> Result<Vec<Pin>>;
    /// The pins of a page, newest first: which pins and which state of each (the record is
    /// read with [`Backend::get_pins`] only when the caller hasn't rendered that state yet).
    async fn list_pin_keys(&self, ws: &str, query: &PinQuery) -> Result<Vec<PinKey>>;
    /// Applies `change` to each pin in `ids` order, saving the old state as a version and
    /// keeping at most `retention` versions. A missing pin fails the whole batch.
    async fn update_pins(
        &self,
        ws: &str,
        ids: &[String],
        retention: u32,
        change: &mut Change<'_>,
    ) -> Result<Vec<Pin>>;
    async fn delete_pins(
        &self,
        ws: &str,
        ids: &[String],
        check: &mut DeleteCheck<'_>,
    ) -> Result<()>;
    /// Past versions, newest first, below `before_version`; `None` when the pin is absent.
    async fn list_versions(
        &self,
        ws: &str,
        id: &str,
        before_version: Option<i64>,
        limit: i64,
    ) -> Result<Option<Vec<Pin>>>;
    async fn find_idempotent(&self, ws: &str, key: &str, since: i64) -> Result<Option<Idempotent>>;
}

/// The store in use.
#[derive(Clone)]
pub enum Store {
    Sqlite(sqlite::SqliteStore),
    Postgres(postgres::PgStore),
}

macro_rules! delegate {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {$(
        pub async fn $name(&self $(, $arg: $ty)*) -> $ret {
            match self {
                Store::Sqlite(s) => s.$name($($arg),*).await,
                Store::Postgres(s) => s.$name($($arg),*).await,
            }
        }
    )*};
}

impl Store {
    /// Connects to `url` (`sqlite:` or `postgres:`) and applies the migrations.
    pub async fn open(url: &str, max_connections: u32) -> Result<Store> {
        if url.starts_with("sqlite:") {
            Ok(Store::Sqlite(
                sqlite::SqliteStore::open(url, max_connections).await?,
            ))
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Store::Postgres(
                postgres::PgStore::open(url, max_connections).await?,
            ))
        } else {
            Err(Error::Internal(format!(
                "unsupported store URL scheme in {}",
                crate::config::redact_url(url)
            )))
        }
    }

    /// The PostgreSQL connections, for state that replicas share (rate limits).
    pub fn pg_connections(&self) -> Option<pg_conn::Connections> {
        match self {
            Store::Sqlite(_) => None,
            Store::Postgres(s) => Some(s.connections()),
        }
    }

    pub fn backend_name(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "sqlite",
            Store::Postgres(_) => "postgres",
        }
    }

    delegate! {
        fn ping(&self) -> Result<()>;
        fn close(&self) -> ();
        fn ensure_workspace(&self, name: &str) -> Result<String>;
        fn claim_bootstrap(&self) -> Result<bool>;
        fn insert_key(&self, key: &KeyRow) -> Result<()>;
        fn find_key(&self, lookup: &str) -> Result<Option<KeyRow>>;
        fn list_keys(&self) -> Result<Vec<(KeyRow, String)>>;
        fn revoke_key(&self, id: &str, at: i64) -> Result<bool>;
        fn touch_key(&self, id: &str, at: i64) -> Result<()>;
        fn insert_pins(&self, ws: &str, pins: &[Pin], idem: Option<&Idempotent>) -> Result<Created>;
        fn get_pins(&self, ws: &str, ids: &[String]) -> Result<Vec<Pin>>;
        fn list_pin_keys(&self, ws: &str, query: &PinQuery) -> Result<Vec<PinKey>>;
        fn update_pins(&self, ws: &str, ids: &[String], retention: u32, change: &mut Change<'_>) -> Result<Vec<Pin>>;
        fn delete_pins(&self, ws: &str, ids: &[String], check: &mut DeleteCheck<'_>) -> Result<()>;
        fn list_versions(&self, ws: &str, id: &str, before_version: Option<i64>, limit: i64) -> Result<Option<Vec<Pin>>>;
        fn find_idempotent(&self, ws: &str, key: &str, since: i64) -> Result<Option<Idempotent>>;
        fn insert_pinboard(&self, ws: &str, board: &Pinboard) -> Result<()>;
        fn get_pinboard(&self, ws: &str, id: &str) -> Result<Option<Pinboard>>;
        fn placed_pins(&self, ws: &str, board_id: &str) -> Result<Vec<PlacedPin>>;
        fn list_pinboards(&self, ws: &str, query: &BoardQuery) -> Result<Vec<(i64, Pinboard)>>;
        fn update_pinboard(&self, ws: &str, id: &str, change: &mut BoardChange<'_>) -> Result<Pinboard>;
        fn delete_pinboard(&self, ws: &str, id: &str) -> Result<bool>;
        fn place_pin(&self, ws: &str, board_id: &str, pin_id: &str, now: i64, place: &mut Placer<'_>) -> Result<Position>;
        fn move_placement(&self, ws: &str, board_id: &str, pin_id: &str, now: i64, place: &mut Placer<'_>) -> Result<Position>;
        fn remove_placement(&self, ws: &str, board_id: &str, pin_id: &str, now: i64) -> Result<()>;
        fn shared_pin(&self, id: &str) -> Result<Option<Pin>>;
        fn shared_board(&self, id: &str) -> Result<Option<(Pinboard, Vec<PlacedPin>)>>;
        fn find_member(&self, subject: &str, workspace: &str) -> Result<Option<Member>>;
        fn enroll(&self, who: &SignIn<'_>) -> Result<Member>;
        fn insert_role(&self, ws: &str, role: &RoleRow) -> Result<()>;
        fn find_role(&self, ws: &str, name: &str) -> Result<Option<RoleRow>>;
        fn list_roles(&self, ws: &str) -> Result<Vec<RoleRow>>;
        fn workspace_keys(&self, ws: &str) -> Result<Vec<KeyRow>>;
        fn revoke_workspace_key(&self, ws: &str, id: &str, at: i64) -> Result<bool>;
        fn find_users(&self, user: &str) -> Result<Vec<UserRow>>;
        fn add_collaborator(&self, ws: &str, board_id: &str, who: &Collaborator) -> Result<bool>;
        fn collaborators(&self, ws: &str, board_id: &str) -> Result<Vec<Collaborator>>;
        fn set_collaborator_role(&self, ws: &str, board_id: &str, user_id: &str, role: &str) -> Result<bool>;
        fn remove_collaborator(&self, ws: &str, board_id: &str, user_id: &str) -> Result<bool>;
        fn board_grant(&self, board_id: &str, user_id: &str) -> Result<Option<(String, String)>>;
    }
}

/// The error for a pin id in a batch that doesn't exist in the workspace.
fn pin_missing(index: usize) -> Error {
    Error::NotFound {
        what: "pin",
        index: Some(index),
    }
}

/// The columns of a pin (and of a pin version), in the order `pin_from_row` reads them.
const PIN_COLUMNS: &str = pin_columns!();
/// Finds an API key by its public lookup part: the first statement of every request.
pub(crate) const FIND_KEY: &str = "SELECT * FROM api_keys WHERE lookup = $1";
/// A list's keys ([`PinKey`]), before its filters, order and limit.
pub(crate) const LIST_PIN_KEYS: &str =
    "SELECT seq, id, version, updated_at FROM pins WHERE workspace_id = $1";
/// Copies a pin's current state into its versions before it changes.
const SAVE_VERSION: &str = "INSERT INTO pin_versions (pin_id, version, pin_type, pin_config, pin_layout, is_public, \
     allow_edit, require_sign_in, allow_comments, title, tags, provenance, created_at, updated_at) \
     SELECT id, version, pin_type, pin_config, pin_layout, is_public, allow_edit, require_sign_in, allow_comments, \
     title, tags, provenance, created_at, updated_at FROM pins WHERE id = $1";
const PRUNE_VERSIONS: &str = "DELETE FROM pin_versions WHERE pin_id = $1 AND version <= $2";
const UPDATE_PIN: &str =
    "UPDATE pins SET pin_type = $2, pin_config = $3, pin_layout = $4, is_public = $5, title = $6, \
     tags = $7, provenance = $8, version = $9, updated_at = $10, allow_edit = $11, require_sign_in = $12, \
     allow_comments = $13 WHERE id = $1";
/// A new pin's other share settings start at their column defaults (off): only `is_public`
/// can be chosen at creation.
pub(crate) const INSERT_PIN: &str = concat!(
    insert_pins_into!(),
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
);
