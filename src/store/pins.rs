//! Pins in the store: the stored shapes, the statements both databases run alike, and
//! [`PinStore`], the pin operations written once. Creates and reads, which each database
//! tunes its own way, are [`Backend`]'s.

use std::collections::HashMap;

use super::sql::Begin as _;

use super::events::NewEvent;
use super::group_commit::{Outcome, Update};
use super::sql::{Backend, Db, Record, Statement};
use super::Sharing;
use crate::events::EventKind;
use crate::{error::Result, Error};

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
    /// The caller's name for the pin, unique within its workspace (CONTRACT.md 14).
    pub key: Option<String>,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// How often a push is expected, when one is (CONTRACT.md 15).
    pub expected_every_secs: Option<i64>,
    /// The last create, update, upsert (changed or not) or append.
    pub last_pushed_at: i64,
    /// The status rules as stored JSON (CONTRACT.md 15), `None` without rules.
    pub status_rules: Option<String>,
    /// What the rules gave (`ok`, `warning`, `critical`), `None` without rules.
    pub status: Option<String>,
}

impl Pin {
    /// A pin of `pin_type` showing `config` (JSON text) as a create would first make it:
    /// version 1, private, 1x1, without title, tags, key, provenance or rules, at time 0.
    /// What pictures, pages and stores are tested and measured with; set the rest with
    /// struct update syntax (`Pin { title, ..Pin::new(..) }`).
    pub fn new(id: impl Into<String>, pin_type: &str, config: impl Into<String>) -> Pin {
        Pin {
            id: id.into(),
            pin_type: pin_type.to_owned(),
            pin_config: config.into(),
            pin_layout: "1x1".to_owned(),
            is_public: false,
            allow_edit: false,
            require_sign_in: false,
            allow_comments: false,
            title: None,
            tags: Vec::new(),
            provenance: None,
            key: None,
            version: 1,
            created_at: 0,
            updated_at: 0,
            expected_every_secs: None,
            last_pushed_at: 0,
            status_rules: None,
            status: None,
        }
    }

    /// The pin's share settings (flat fields of the pin, as `is_public` came first).
    pub fn sharing(&self) -> Sharing {
        Sharing {
            is_public: self.is_public,
            allow_edit: self.allow_edit,
            require_sign_in: self.require_sign_in,
            allow_comments: self.allow_comments,
        }
    }

    /// Whether `other` says the same as this pin: its type, configuration, layout,
    /// visibility, metadata and key. Version and times are not content: an upsert that
    /// would change nothing else writes nothing.
    pub fn same_content(&self, other: &Pin) -> bool {
        self.pin_type == other.pin_type
            && self.pin_config == other.pin_config
            && self.pin_layout == other.pin_layout
            && self.is_public == other.is_public
            && self.title == other.title
            && self.tags == other.tags
            && self.provenance == other.provenance
            && self.key == other.key
            && self.expected_every_secs == other.expected_every_secs
            && self.status_rules == other.status_rules
    }

    /// When this state asks the status sweep to read it against its datasets: a pin with
    /// rules whose configuration names a dataset, as of its last change. Writes keep a mark
    /// already there (only the sweep clears one, if it is still the mark it read).
    pub fn status_due(&self) -> Option<i64> {
        (self.status_rules.is_some() && crate::templates::json_names_any(&self.pin_config))
            .then_some(self.updated_at)
    }

    /// When the pin's next `pin.stale` is due: the expected interval after its last push.
    pub fn stale_due_at(&self) -> Option<i64> {
        self.expected_every_secs.map(|secs| {
            self.last_pushed_at
                .saturating_add(secs.saturating_mul(1000))
        })
    }

    /// Whether the expected interval has passed since the last push, at `now`.
    pub fn stale_at(&self, now: i64) -> bool {
        self.stale_due_at().is_some_and(|due| now > due)
    }

    pub fn set_sharing(&mut self, sharing: Sharing) {
        self.is_public = sharing.is_public;
        self.allow_edit = sharing.allow_edit;
        self.require_sign_in = sharing.require_sign_in;
        self.allow_comments = sharing.allow_comments;
    }
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
    /// Only pins with one of these keys (none: any pin).
    pub keys: Vec<String>,
    /// Only stale pins (`true`) or only fresh ones (`false`), at `now`.
    pub stale: Option<bool>,
    /// The time `stale` is judged at (ms).
    pub now: i64,
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
    /// Freshness changes without a version (a push that changed nothing, time passing):
    /// a kept record is the pin's only if these say the same too.
    pub last_pushed_at: i64,
    pub expected_every_secs: Option<i64>,
}

impl PinKey {
    /// What a record of this state says of freshness at `now`: `last_pushed_at`, `stale`.
    pub fn freshness(&self, now: i64) -> (i64, bool) {
        let due = self.expected_every_secs.map(|secs| {
            self.last_pushed_at
                .saturating_add(secs.saturating_mul(1000))
        });
        (self.last_pushed_at, due.is_some_and(|due| now > due))
    }
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

/// Which events a grouped update logs ([`PinStore::update_read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logged {
    /// A write: `pin.updated`, and `pin.status` when its status changes.
    Write,
    /// A status read again against changed datasets: `pin.status` alone.
    Status,
}

/// A pin the status sweep must read again against its datasets, and the mark that says so
/// (cleared only if it is still this one).
#[derive(Debug, Clone)]
pub struct StatusMark {
    pub workspace_id: String,
    pub pin: Pin,
    pub due: i64,
}

/// What an upsert did with one key.
#[derive(Debug)]
pub enum Upserted {
    /// No pin had the key: this one was created.
    Created(Pin),
    /// The keyed pin became this (its next version).
    Updated(Pin),
    /// The keyed pin already said what the upsert says: nothing was written.
    Unchanged(Pin),
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

/// The error for a pin id in a batch that doesn't exist in the workspace.
pub(super) fn pin_missing(index: usize) -> Error {
    Error::NotFound {
        what: "pin",
        index: Some(index),
    }
}

/// The columns of a pin (and of a pin version), in the order [`pin_at`] reads them.
pub(super) const PIN_COLUMNS: &str = pin_columns!();
/// A list's keys ([`PinKey`]), before its filters, order and limit.
pub(super) const LIST_PIN_KEYS: &str =
    "SELECT seq, id, version, updated_at, last_pushed_at, expected_every_secs FROM pins WHERE workspace_id = $1";
/// Copies the pin `$1`'s stored state into its versions (before it changes).
macro_rules! save_version {
    () => {
        "INSERT INTO pin_versions (pin_id, version, pin_type, pin_config, pin_layout, is_public, \
         allow_edit, require_sign_in, allow_comments, title, tags, provenance, created_at, updated_at, key, \
         expected_every_secs, last_pushed_at, status_rules, status) \
         SELECT id, version, pin_type, pin_config, pin_layout, is_public, allow_edit, require_sign_in, \
         allow_comments, title, tags, provenance, created_at, updated_at, key, expected_every_secs, \
         last_pushed_at, status_rules, status FROM pins WHERE id = $1"
    };
}
const SAVE_VERSION: &str = save_version!();
/// [`SAVE_VERSION`] if the pin is still at version `$2` of workspace `$3`: what a grouped
/// update replaces, copied from the row rather than from the state the request read (a push
/// that changed nothing moves `last_pushed_at` without a version).
pub(super) const SAVE_VERSION_AT: &str =
    concat!(save_version!(), " AND version = $2 AND workspace_id = $3");
/// Deletes the past versions of pin `$1` at or below `$2` ([`keep_above`]) and above `$3`
/// ([`prune_above`]).
pub(super) const PRUNE_VERSIONS: &str =
    "DELETE FROM pin_versions WHERE pin_id = $1 AND version <= $2 AND version > $3";

/// The newest past version a write that makes `version` drops: the ones above it are kept.
pub(crate) fn keep_above(version: i64, retention: u32) -> i64 {
    version - 1 - i64::from(retention)
}

/// Every this many versions, a pin's write prunes the versions the writes since the last such
/// step moved out of the retention ([`prune_above`]).
const PRUNE_EVERY: i64 = 8;

/// Every this many versions, a pin's write prunes all its versions beyond the retention.
const FULL_PRUNE_EVERY: i64 = 64;

/// The versions a write that makes `version` prunes are those above this one (and at or
/// below [`keep_above`]); `keep_above` itself when it prunes none. Every [`PRUNE_EVERY`]th
/// version prunes the versions the writes since the last one moved out of the retention;
/// the writes between prune nothing: an update of SQLite then saves a version without
/// deleting one (one statement less in most groups, and the version's pages touched once
/// every few writes), and the versions kept but beyond the retention are never listed
/// (`list_versions`). Not the whole range below: on PostgreSQL a deleted version stays in the
/// table and its index until VACUUM, and a range from the pin's first version walked them
/// all: after a minute of updates of 200 pins, every prune visited about 280 dead versions on
/// 265 pages (0.2-1.6 ms a pin, growing until autovacuum came), where the narrow range reads
/// 8 buffers. Every [`FULL_PRUNE_EVERY`]th version prunes the whole range, so what a larger
/// retention kept (the setting lowered since) goes within that many writes.
pub(crate) fn prune_above(version: i64, retention: u32) -> i64 {
    let keep = keep_above(version, retention);
    if version % FULL_PRUNE_EVERY == 0 {
        0
    } else if version % PRUNE_EVERY == 0 {
        keep - PRUNE_EVERY
    } else {
        keep
    }
}

/// Sets every column of a pin (`$2` to `$20`, [`bind_pin_update`]) but its id and workspace.
macro_rules! update_pin {
    () => {
        "UPDATE pins SET pin_type = $2, pin_config = $3, pin_layout = $4, is_public = $5, title = $6, \
         tags = $7, provenance = $8, version = $9, updated_at = $10, allow_edit = $11, require_sign_in = $12, \
         allow_comments = $13, key = $14, expected_every_secs = $15, last_pushed_at = $16, \
         stale_due_at = $17, status_rules = $18, status = $19, status_due = COALESCE(status_due, $20) \
         WHERE id = $1"
    };
}
const UPDATE_PIN: &str = update_pin!();
/// [`UPDATE_PIN`] if the pin is still at version `$21` of workspace `$22`: a grouped update's
/// compare-and-set (no row: the pin moved on, or is gone).
pub(super) const UPDATE_PIN_AT: &str =
    concat!(update_pin!(), " AND version = $21 AND workspace_id = $22");
/// A new pin's other share settings start at their column defaults (off): only `is_public`
/// can be chosen at creation.
pub(super) const INSERT_PIN: &str = concat!(
    insert_pins_into!(),
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)"
);
/// [`INSERT_PIN`] for an upsert's new pin: when a concurrent upsert of the same key has
/// inserted first, nothing (PostgreSQL waits for that transaction, then the upsert reads and
/// updates the pin it made).
const INSERT_KEYED_PIN: &str = concat!(
    insert_pins_into!(),
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) \
     ON CONFLICT (workspace_id, key) WHERE key IS NOT NULL DO NOTHING"
);
/// A push that changed nothing: the pin's push time and next due time, not its version.
const TOUCH_PIN: &str = "UPDATE pins SET last_pushed_at = $2, \
     stale_due_at = $2 + expected_every_secs * 1000 \
     WHERE id = $1 AND version = $3 AND workspace_id = $4 AND last_pushed_at < $2";
/// A dataset of workspace `$1` was written at `$2`: every pin there with rules whose
/// configuration may name it (holds `{{` and its name, `$3`, or its name before a rename,
/// `$4`, as `%name%`) is marked for the status sweep with a mark newer than any it holds (so
/// a sweep that read the older one can't clear this one). A name is `[a-z0-9_]`: in a LIKE
/// pattern `_` matches any character, so a pattern may mark a pin too many, never one too few.
const MARK_STATUSES: &str =
    "UPDATE pins SET status_due = CASE WHEN status_due IS NULL OR status_due < $2 \
     THEN $2 ELSE status_due + 1 END \
     WHERE workspace_id = $1 AND status_rules IS NOT NULL AND pin_config LIKE '%{{%' \
     AND (pin_config LIKE $3 OR pin_config LIKE $4)";
/// Whether any pin's `pin.stale` is due at `$1`, through the partial index on the due time:
/// the order makes the index the plan whatever the statistics say (without them, PostgreSQL
/// scanned the table for a bare `LIMIT 1`: 11 ms at 40k pins against 0.03 ms).
const ANY_STALE_DUE: &str =
    "SELECT 1 FROM pins WHERE stale_due_at <= $1 ORDER BY stale_due_at LIMIT 1";
/// The marked pins, oldest mark first (every workspace's: the sweep has no caller).
const STATUS_MARKS: &str = concat!(
    "SELECT workspace_id, status_due, ",
    pin_columns!(),
    " FROM pins WHERE status_due IS NOT NULL ORDER BY status_due LIMIT $1"
);
/// Clears a mark the sweep has dealt with, if the pin is still at the version and mark read.
const CLEAR_STATUS_MARK: &str = "UPDATE pins SET status_due = NULL \
     WHERE workspace_id = $1 AND id = $2 AND version = $3 AND status_due = $4";
const PIN_EXISTS: &str = "SELECT 1 FROM pins WHERE workspace_id = $1 AND id = $2";
const VERSIONS: &str = concat!(
    "SELECT pin_id AS ",
    pin_columns!(),
    " FROM pin_versions WHERE pin_id = $1 AND version < $2 \
     AND version > (SELECT p.version - 1 - $4 FROM pins AS p WHERE p.id = $1) \
     ORDER BY version DESC LIMIT $3"
);
/// The boards a pin is placed on (its events concern them too).
pub(super) const PIN_BOARDS: &str = "SELECT pinboard_id FROM placements WHERE pin_id = $1";
const FIND_IDEMPOTENT: &str =
    "SELECT key, request_hash, response, created_at FROM idempotency_keys \
     WHERE workspace_id = $1 AND key = $2 AND created_at >= $3";

/// A pin from [`PIN_COLUMNS`] at column `first` on, read by position: by name, each column
/// cost a hash lookup and string compares, 12% of the server's time for a 200-pin page.
pub(super) fn pin_at(row: &impl Record, first: usize) -> Result<Pin> {
    Ok(Pin {
        id: row.get(first)?,
        pin_type: row.get(first + 1)?,
        pin_config: row.get(first + 2)?,
        pin_layout: row.get(first + 3)?,
        is_public: row.get(first + 4)?,
        allow_edit: row.get(first + 5)?,
        require_sign_in: row.get(first + 6)?,
        allow_comments: row.get(first + 7)?,
        title: row.get(first + 8)?,
        tags: row.list(first + 9)?,
        provenance: row.get(first + 10)?,
        version: row.get(first + 11)?,
        created_at: row.get(first + 12)?,
        updated_at: row.get(first + 13)?,
        key: row.get(first + 14)?,
        expected_every_secs: row.get(first + 15)?,
        last_pushed_at: row.get(first + 16)?,
        status_rules: row.get(first + 17)?,
        status: row.get(first + 18)?,
    })
}

/// A pin from a row that starts with [`PIN_COLUMNS`].
pub(super) fn pin_from_row(row: &impl Record) -> Result<Pin> {
    pin_at(row, 0)
}

/// Binds a new pin's row to [`INSERT_PIN`] (or to one row of a many-row insert).
pub(super) fn bind_new_pin<'q, C: Db>(
    insert: Statement<'q, C>,
    ws: &'q str,
    pin: &'q Pin,
) -> Statement<'q, C> {
    insert
        .bind(&pin.id)
        .bind(ws)
        .bind(&pin.pin_type)
        .bind(&pin.pin_config)
        .bind(&pin.pin_layout)
        .bind(pin.is_public)
        .bind(&pin.title)
        .bind_list(&pin.tags)
        .bind(&pin.provenance)
        .bind(pin.version)
        .bind(pin.created_at)
        .bind(pin.updated_at)
        .bind(&pin.key)
        .bind(pin.expected_every_secs)
        .bind(pin.last_pushed_at)
        .bind(pin.stale_due_at())
        .bind(&pin.status_rules)
        .bind(&pin.status)
        .bind(pin.status_due())
}

/// A list's statement before its order and limit: [`LIST_PIN_KEYS`] with the filters
/// `query` uses, `tag_filter` being the database's test of `$4` among a pin's tags and
/// `key_filter` its test of `key` among the list `$7`. Its parameters are bound by
/// [`bind_list_query`].
pub(super) fn list_pin_keys_sql(query: &PinQuery, tag_filter: &str, key_filter: &str) -> String {
    let mut sql = LIST_PIN_KEYS.to_owned();
    if query.before_seq.is_some() {
        sql.push_str(" AND seq < $2");
    }
    if query.pin_type.is_some() {
        sql.push_str(" AND pin_type = $3");
    }
    if query.tag.is_some() {
        sql.push_str(tag_filter);
    }
    if query.updated_since.is_some() {
        sql.push_str(" AND updated_at >= $5");
    }
    if query.pinboard_id.is_some() {
        sql.push_str(
            " AND EXISTS (SELECT 1 FROM placements pl WHERE pl.pinboard_id = $6 AND pl.pin_id = pins.id)",
        );
    }
    if !query.keys.is_empty() {
        sql.push_str(" AND ");
        sql.push_str(key_filter);
    }
    match query.stale {
        Some(true) => sql.push_str(
            " AND expected_every_secs IS NOT NULL AND last_pushed_at + expected_every_secs * 1000 < $8",
        ),
        Some(false) => sql.push_str(
            " AND (expected_every_secs IS NULL OR last_pushed_at + expected_every_secs * 1000 >= $8)",
        ),
        None => {}
    }
    sql
}

/// Binds `$1` to `$8` of [`list_pin_keys_sql`] (each, whether its filter is used or not).
pub(super) fn bind_list_query<'q, C: Db>(
    list: Statement<'q, C>,
    ws: &'q str,
    query: &'q PinQuery,
) -> Statement<'q, C> {
    list.bind(ws)
        .bind(query.before_seq)
        .bind(&query.pin_type)
        .bind(&query.tag)
        .bind(query.updated_since)
        .bind(&query.pinboard_id)
        .bind_list(&query.keys)
        .bind(query.now)
}

/// The pin writes and reads both databases run alike. Every write is one transaction.
pub(crate) trait PinStore {
    /// Applies `change` to each pin in `ids` order, saving the old state as a version and
    /// keeping at most `retention` versions. A missing pin fails the whole batch.
    async fn update_pins(
        &self,
        ws: &str,
        ids: &[String],
        retention: u32,
        change: &mut Change<'_>,
    ) -> Result<Vec<Pin>>;
    /// Deletes the pins and their placements once `check` allowed each; a missing pin
    /// fails the whole batch.
    async fn delete_pins(
        &self,
        ws: &str,
        ids: &[String],
        check: &mut DeleteCheck<'_>,
    ) -> Result<()>;
    /// Past versions the `retention` keeps, newest first, below `before_version`; `None`
    /// when the pin is absent. Older ones may still be stored (a write prunes every few
    /// versions, [`prune_above`]) but are never shown.
    async fn list_versions(
        &self,
        ws: &str,
        id: &str,
        retention: u32,
        before_version: Option<i64>,
        limit: i64,
    ) -> Result<Option<Vec<Pin>>>;
    async fn find_idempotent(&self, ws: &str, key: &str, since: i64) -> Result<Option<Idempotent>>;
    /// The workspace's pins whose key is among `keys`, in no particular order.
    async fn pins_by_key(&self, ws: &str, keys: &[String]) -> Result<Vec<Pin>>;
    /// Stores `new`, decided from `old` as read, if the pin is still at `old.version`: in a
    /// group commit with other requests' writes, answered once durable. `None` when the pin
    /// has moved on (or is gone) since the read: nothing was written, decide again.
    async fn update_read(
        &self,
        ws: &str,
        old: Pin,
        new: Pin,
        retention: u32,
        logged: Logged,
    ) -> Result<Option<Pin>>;
    /// Logs `pin.stale` for pins whose expected push is overdue at `now` (at most `limit`),
    /// once per lapse: the pin's due time is cleared with its event, in one transaction,
    /// and set again by its next push. Returns how many were logged.
    async fn sweep_stale(&self, now: i64, limit: i64) -> Result<i64>;
    /// The pins marked for the status sweep (at most `limit`), oldest mark first.
    async fn status_marks(&self, limit: i64) -> Result<Vec<StatusMark>>;
    /// Clears each mark `(pin id, version, due)` whose pin is still at that version with
    /// that mark, in one transaction.
    async fn clear_status_marks(&self, ws: &str, marks: &[(String, i64, i64)]) -> Result<()>;
    /// Records a push that changed nothing (an upsert saying what the pin says): its
    /// `last_pushed_at` becomes `at`, and its next lapse is counted from there. No version,
    /// no event; nothing when the pin moved on from `version` (that write was a push too).
    async fn touch_pin(&self, ws: &str, id: &str, version: i64, at: i64) -> Result<()>;
    /// For each of `new` (each with a distinct key): when no pin of the workspace has its
    /// key, stores it; otherwise applies `change` to the keyed pin, writing the result only
    /// when its content differs ([`Pin::same_content`]). One transaction for all; concurrent
    /// upserts of one new key make one pin, and each of them answers.
    async fn upsert_pins(
        &self,
        ws: &str,
        new: &[Pin],
        retention: u32,
        change: &mut Change<'_>,
    ) -> Result<Vec<Upserted>>;
}

/// The workspace's pins among the keys in `keys`, by key, locked for the transaction.
async fn lock_keyed<B: Backend>(
    tx: &mut B::Db,
    ws: &str,
    keys: &[String],
) -> Result<HashMap<String, Pin>> {
    let sql = format!(
        "SELECT {PIN_COLUMNS} FROM pins WHERE workspace_id = $1 AND {} ORDER BY key{}",
        B::in_list("key", 2),
        B::FOR_UPDATE
    );
    let rows = B::query(&sql)
        .bind(ws)
        .bind_list(keys)
        .fetch_all(tx)
        .await?;
    rows.iter()
        .map(|r| pin_from_row(r).map(|p| (p.key.clone().unwrap_or_default(), p)))
        .collect()
}

/// Locks the workspace's pins named in `ids` ([`Backend::LOCK_PINS`]) and returns them by
/// id. Locking in id order keeps concurrent batches from deadlocking.
pub(super) async fn lock_pins<B: Backend>(
    tx: &mut B::Db,
    ws: &str,
    ids: &[String],
) -> Result<HashMap<String, Pin>> {
    let rows = B::query(B::LOCK_PINS)
        .bind(ws)
        .bind_list(ids)
        .fetch_all(tx)
        .await?;
    rows.iter()
        .map(|r| pin_from_row(r).map(|p| (p.id.clone(), p)))
        .collect()
}

async fn pin_boards<B: Backend>(tx: &mut B::Db, pin_id: &str) -> Result<Vec<String>> {
    let rows = B::query(PIN_BOARDS).bind(pin_id).fetch_all(tx).await?;
    rows.iter().map(|r| Ok(r.get(0)?)).collect()
}

/// Marks the workspace's pins with rules whose templates may name dataset `name` (or
/// `was`, its name before a rename) for the status sweep, inside a dataset write's
/// transaction (CONTRACT.md 15: a dataset change can change a status).
pub(super) async fn mark_statuses<B: Backend>(
    tx: &mut B::Db,
    ws: &str,
    at: i64,
    name: &str,
    was: &str,
) -> Result<()> {
    B::query(MARK_STATUSES)
        .bind(ws)
        .bind(at)
        .bind(format!("%{name}%"))
        .bind(format!("%{was}%"))
        .execute(tx)
        .await?;
    Ok(())
}

/// Writes `new` over its pin inside the caller's transaction (the pin locked with
/// [`Backend::LOCK_PINS`]): the old state becomes a version, at most `retention` are kept,
/// and the [`EventKind::PinUpdated`] event to append is returned. Pin updates and block writes (which
/// bump their pin) both commit through it.
pub(super) async fn save_change<B: Backend>(
    tx: &mut B::Db,
    ws: &str,
    new: &Pin,
    retention: u32,
    render: &dyn super::Render,
) -> Result<NewEvent> {
    B::query(SAVE_VERSION)
        .bind(&new.id)
        .execute(&mut *tx)
        .await?;
    bind_pin_update(B::query(UPDATE_PIN), new)
        .execute(&mut *tx)
        .await?;
    B::query(PRUNE_VERSIONS)
        .bind(&new.id)
        .bind(keep_above(new.version, retention))
        .bind(prune_above(new.version, retention))
        .execute(&mut *tx)
        .await?;
    let boards = pin_boards::<B>(&mut *tx, &new.id).await?;
    NewEvent::pin(ws, EventKind::PinUpdated, new, boards, render)
}

/// Binds `$1` to `$20` of [`UPDATE_PIN`]: `new`'s id and what it becomes.
pub(super) fn bind_pin_update<'q, C: Db>(
    update: Statement<'q, C>,
    new: &'q Pin,
) -> Statement<'q, C> {
    update
        .bind(&new.id)
        .bind(&new.pin_type)
        .bind(&new.pin_config)
        .bind(&new.pin_layout)
        .bind(new.is_public)
        .bind(&new.title)
        .bind_list(&new.tags)
        .bind(&new.provenance)
        .bind(new.version)
        .bind(new.updated_at)
        .bind(new.allow_edit)
        .bind(new.require_sign_in)
        .bind(new.allow_comments)
        .bind(&new.key)
        .bind(new.expected_every_secs)
        .bind(new.last_pushed_at)
        .bind(new.stale_due_at())
        .bind(&new.status_rules)
        .bind(&new.status)
        .bind(new.status_due())
}

impl<B: Backend> PinStore for B {
    async fn update_pins(
        &self,
        ws: &str,
        ids: &[String],
        retention: u32,
        change: &mut Change<'_>,
    ) -> Result<Vec<Pin>> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let mut current = lock_pins::<B>(&mut *tx, ws, ids).await?;
        let mut updated = Vec::with_capacity(ids.len());
        let mut events = Vec::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            let old = current.remove(id).ok_or_else(|| pin_missing(i))?;
            let previous = old.status.clone();
            let new = change(i, old)?;
            let event = save_change::<B>(&mut *tx, ws, &new, retention, self.render()).await?;
            let status = NewEvent::status(
                ws,
                previous.as_deref(),
                &new,
                event.boards.clone(),
                self.render(),
            )?;
            events.push(event);
            events.extend(status);
            updated.push(new);
        }
        B::append_events(&mut *tx, &events).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(updated)
    }

    async fn update_read(
        &self,
        ws: &str,
        old: Pin,
        new: Pin,
        retention: u32,
        logged: Logged,
    ) -> Result<Option<Pin>> {
        let mut events = Vec::with_capacity(2);
        if logged == Logged::Write {
            events.push(NewEvent::pin(
                ws,
                EventKind::PinUpdated,
                &new,
                Vec::new(),
                self.render(),
            )?);
        }
        events.extend(NewEvent::status(
            ws,
            old.status.as_deref(),
            &new,
            Vec::new(),
            self.render(),
        )?);
        let update = Update {
            old,
            new,
            retention,
        };
        let stored = update.new.clone();
        Ok(match self.commit_update(ws, update, events).await? {
            Outcome::Stored => Some(stored),
            _ => None,
        })
    }

    async fn sweep_stale(&self, now: i64, limit: i64) -> Result<i64> {
        // Most checks find nothing due: one indexed read on a reader answers them, without
        // waiting for the writer (on SQLite, the group commit's).
        let due = B::query(ANY_STALE_DUE)
            .bind(now)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        if due.is_none() {
            return Ok(0);
        }
        let sql = format!(
            "UPDATE pins SET stale_due_at = NULL WHERE id IN (SELECT id FROM pins \
             WHERE stale_due_at <= $1 ORDER BY stale_due_at LIMIT $2{}) \
             RETURNING workspace_id, {PIN_COLUMNS}",
            B::SKIP_LOCKED
        );
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let rows = B::query(&sql)
            .bind(now)
            .bind(limit)
            .fetch_all(&mut *tx)
            .await?;
        if rows.is_empty() {
            tx.rollback().await?;
            return Ok(0);
        }
        let mut events = Vec::with_capacity(rows.len());
        let mut workspaces: Vec<String> = Vec::new();
        for row in &rows {
            let ws: String = row.get(0)?;
            let pin = pin_at(row, 1)?;
            let boards = pin_boards::<B>(&mut *tx, &pin.id).await?;
            let mut event = NewEvent::pin(&ws, EventKind::PinStale, &pin, boards, self.render())?;
            event.at = now;
            events.push(event);
            if !workspaces.contains(&ws) {
                workspaces.push(ws);
            }
        }
        B::append_events(&mut *tx, &events).await?;
        tx.commit().await?;
        for ws in &workspaces {
            self.committed(ws);
        }
        Ok(i64::try_from(events.len()).unwrap_or(i64::MAX))
    }

    async fn status_marks(&self, limit: i64) -> Result<Vec<StatusMark>> {
        let rows = B::query(STATUS_MARKS)
            .bind(limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|row| {
                Ok(StatusMark {
                    workspace_id: row.get(0)?,
                    due: row.get(1)?,
                    pin: pin_at(row, 2)?,
                })
            })
            .collect()
    }

    async fn clear_status_marks(&self, ws: &str, marks: &[(String, i64, i64)]) -> Result<()> {
        if marks.is_empty() {
            return Ok(());
        }
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        for (id, version, due) in marks {
            B::query(CLEAR_STATUS_MARK)
                .bind(ws)
                .bind(id)
                .bind(*version)
                .bind(*due)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn touch_pin(&self, ws: &str, id: &str, version: i64, at: i64) -> Result<()> {
        B::query(TOUCH_PIN)
            .bind(id)
            .bind(at)
            .bind(version)
            .bind(ws)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(())
    }

    async fn delete_pins(
        &self,
        ws: &str,
        ids: &[String],
        check: &mut DeleteCheck<'_>,
    ) -> Result<()> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let current = lock_pins::<B>(&mut *tx, ws, ids).await?;
        let now = crate::clock::now_ms();
        let mut events = Vec::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            check(i, current.get(id).ok_or_else(|| pin_missing(i))?)?;
            let boards = pin_boards::<B>(&mut *tx, id).await?;
            events.push(NewEvent::deleted(
                ws,
                EventKind::PinDeleted,
                id,
                boards,
                now,
            ));
        }
        B::query(B::UNPLACE_PINS)
            .bind_list(ids)
            .execute(&mut *tx)
            .await?;
        B::query(B::DELETE_PINS)
            .bind(ws)
            .bind_list(ids)
            .execute(&mut *tx)
            .await?;
        B::append_events(&mut *tx, &events).await?;
        tx.commit().await?;
        self.committed(ws);
        Ok(())
    }

    async fn list_versions(
        &self,
        ws: &str,
        id: &str,
        retention: u32,
        before_version: Option<i64>,
        limit: i64,
    ) -> Result<Option<Vec<Pin>>> {
        let mut conn = self.reader().await?;
        let exists = B::query(PIN_EXISTS)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        if exists.is_none() {
            return Ok(None);
        }
        let rows = B::query(VERSIONS)
            .bind(id)
            .bind(before_version.unwrap_or(i64::MAX))
            .bind(limit)
            .bind(i64::from(retention))
            .fetch_all(&mut *conn)
            .await?;
        rows.iter()
            .map(pin_from_row)
            .collect::<Result<_>>()
            .map(Some)
    }

    async fn pins_by_key(&self, ws: &str, keys: &[String]) -> Result<Vec<Pin>> {
        let sql = format!(
            "SELECT {PIN_COLUMNS} FROM pins WHERE workspace_id = $1 AND {}",
            B::in_list("key", 2)
        );
        let rows = B::query(&sql)
            .bind(ws)
            .bind_list(keys)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(pin_from_row).collect()
    }

    async fn upsert_pins(
        &self,
        ws: &str,
        new: &[Pin],
        retention: u32,
        change: &mut Change<'_>,
    ) -> Result<Vec<Upserted>> {
        let keys: Vec<String> = new
            .iter()
            .map(|pin| pin.key.clone().unwrap_or_default())
            .collect();
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let mut current = lock_keyed::<B>(&mut *tx, ws, &keys).await?;
        let mut done = Vec::with_capacity(new.len());
        let mut events = Vec::with_capacity(new.len());
        let mut touched = 0;
        for (i, (pin, key)) in new.iter().zip(&keys).enumerate() {
            let old = match current.remove(key) {
                Some(old) => old,
                None => {
                    let inserted = bind_new_pin(B::query(INSERT_KEYED_PIN), ws, pin)
                        .execute(&mut *tx)
                        .await?;
                    if inserted == 1 {
                        let created = NewEvent::pin(
                            ws,
                            EventKind::PinCreated,
                            pin,
                            Vec::new(),
                            self.render(),
                        );
                        events.push(created?);
                        done.push(Upserted::Created(pin.clone()));
                        continue;
                    }
                    // A concurrent upsert stored the key first and has committed: this
                    // statement's snapshot sees its pin.
                    lock_keyed::<B>(&mut *tx, ws, std::slice::from_ref(key))
                        .await?
                        .remove(key)
                        .ok_or(Error::Unavailable)?
                }
            };
            let updated = change(i, old.clone())?;
            if updated.same_content(&old) {
                // Still a push (CONTRACT.md 15): the pin is fresh again, with no new version.
                touched += B::query(TOUCH_PIN)
                    .bind(&old.id)
                    .bind(updated.last_pushed_at)
                    .bind(old.version)
                    .bind(ws)
                    .execute(&mut *tx)
                    .await?;
                done.push(Upserted::Unchanged(old));
                continue;
            }
            let event = save_change::<B>(&mut *tx, ws, &updated, retention, self.render()).await?;
            let status = NewEvent::status(
                ws,
                old.status.as_deref(),
                &updated,
                event.boards.clone(),
                self.render(),
            )?;
            events.push(event);
            events.extend(status);
            done.push(Upserted::Updated(updated));
        }
        if events.is_empty() && touched == 0 {
            tx.rollback().await?;
            return Ok(done);
        }
        B::append_events(&mut *tx, &events).await?;
        tx.commit().await?;
        if !events.is_empty() {
            self.committed(ws);
        }
        Ok(done)
    }

    async fn find_idempotent(&self, ws: &str, key: &str, since: i64) -> Result<Option<Idempotent>> {
        let row = B::query(FIND_IDEMPOTENT)
            .bind(ws)
            .bind(key)
            .bind(since)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.map(|r| {
            Ok(Idempotent {
                key: r.get("key")?,
                request_hash: r.get("request_hash")?,
                response: r.get("response")?,
                created_at: r.get("created_at")?,
                live_since: since,
            })
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pin written version after version, each write saving the version it replaces and
    /// pruning what [`prune_above`] says: every version the retention keeps is stored, and at
    /// most [`PRUNE_EVERY`] more, whatever the retention.
    #[test]
    fn writes_keep_the_retention_and_at_most_a_few_more() {
        for retention in [0, 1, 2, 7, 8, 20, 100] {
            let mut stored: Vec<i64> = Vec::new();
            for version in 2..=500 {
                let keep = keep_above(version, retention);
                if version - 1 > keep {
                    stored.push(version - 1);
                }
                let prune = prune_above(version, retention);
                stored.retain(|&v| v <= prune || v > keep);
                let kept: Vec<i64> = ((keep + 1).max(1)..version).collect();
                assert!(
                    kept.iter().all(|v| stored.contains(v)),
                    "{retention}@{version}"
                );
                let extra = stored.len() - kept.len();
                assert!(
                    extra <= PRUNE_EVERY as usize,
                    "{retention}@{version}: {stored:?}"
                );
            }
        }
    }
}
