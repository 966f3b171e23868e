//! Group commit for SQLite creates and updates ([`super::group_commit`]). SQLite has one writer and
//! `synchronous=FULL` makes every commit wait for the disk, so one commit per request caps
//! creates at the disk's sync rate.

use std::{
    borrow::Cow,
    collections::HashMap,
    sync::LazyLock,
    time::{Duration, Instant},
};

use serde::Serialize;
use sqlx::{Connection, Row as _, SqliteConnection, SqlitePool};
use tokio::sync::mpsc;

use super::{event_rows, list_json, SqliteStore};
use crate::error::Result;
use crate::store::{
    events::{self, Commits, NewEvent},
    group_commit::{
        answer, first_of_each_pin, standing_updates, Committer, Job, Outcome, Update, Write,
        MAX_GROUP,
    },
    pins::{
        bind_new_pin, bind_pin_update, keep_above, prune_above, INSERT_PIN, PIN_BOARDS,
        PRUNE_VERSIONS, SAVE_VERSION_AT, UPDATE_PIN_AT,
    },
    sql::Backend,
    Idempotent, Pin,
};
use crate::Error;

/// How long the commit loop keeps the writer connection while writes keep coming. Giving it
/// back costs a round trip to SQLite's thread (sqlx's release ping), and lets the other
/// writes (batches, deletes, keys) take their turn.
const HOLD_FOR: Duration = Duration::from_millis(10);

/// Starts the loop that commits `writer`'s grouped writes.
pub(super) fn start(writer: SqlitePool, commits: Commits) -> Result<Committer> {
    Committer::start("corkboard-commit", move |queue| run(writer, commits, queue))
}

async fn run(writer: SqlitePool, commits: Commits, mut queue: mpsc::Receiver<Job>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.recv_many(&mut group, MAX_GROUP).await > 0 {
        let held_since = Instant::now();
        let mut conn = match writer.acquire().await {
            Ok(conn) => conn,
            Err(e) => {
                answer(&mut group, Err(e.into()));
                continue;
            }
        };
        loop {
            let done = commit(&mut conn, &group).await;
            let committed = done.is_ok();
            if let Ok(results) = &done {
                tell(&commits, &group, results);
            }
            answer(&mut group, done);
            if !committed || held_since.elapsed() >= HOLD_FOR {
                break;
            }
            while group.len() < MAX_GROUP {
                match queue.try_recv() {
                    Ok(job) => group.push(job),
                    Err(_) => break,
                }
            }
            if group.is_empty() {
                break;
            }
        }
    }
}

/// Tells the streams which workspaces have new events (each once).
fn tell(commits: &Commits, group: &[Job], results: &[Result<Outcome>]) {
    let mut told: Vec<&str> = Vec::new();
    for (job, result) in group.iter().zip(results) {
        if matches!(result, Ok(Outcome::Stored)) && !told.contains(&job.ws.as_str()) {
            commits.send(Some(&job.ws));
            told.push(&job.ws);
        }
    }
}

/// One commit for the whole group, with the events of every write it stores: creates
/// without an `Idempotency-Key` share one INSERT per [`INSERT_CHUNK`] rows, the others get a
/// SAVEPOINT each. When a shared INSERT fails, its creates are retried one SAVEPOINT each,
/// so only the failing one fails. Updates share one call of four statements
/// ([`update_together`]); when SQLite refuses one of them (a taken key), each update is
/// written alone ([`update_alone`]), so only the refused one fails. A group of updates
/// alone takes two calls instead ([`commit_updates`]).
async fn commit(conn: &mut SqliteConnection, group: &[Job]) -> Result<Vec<Result<Outcome>>> {
    if group.iter().all(|job| job.creates().is_none()) {
        if let Some(results) = commit_updates(conn, group).await? {
            return Ok(results);
        }
    }
    let plain: Vec<(&str, &Pin)> = group
        .iter()
        .filter_map(|job| {
            job.creates()
                .filter(|(_, idem)| idem.is_none())
                .map(|(pins, _)| (job, pins))
        })
        .flat_map(|(job, pins)| pins.iter().map(|pin| (job.ws.as_str(), pin)))
        .collect();
    let mut tx = Connection::begin(conn).await?;
    // Inside the transaction, a failed shared INSERT undoes only itself (or its SAVEPOINT).
    let shared = !plain.is_empty() && insert_together(&mut tx, &plain).await?;
    let standing = first_of_each_pin(group);
    let updates = standing_updates(group, &standing);
    // The boards of each pin the shared statements updated, by id; None: each goes alone.
    let updated = update_together(&mut tx, &updates).await?;
    let mut results = Vec::with_capacity(group.len());
    let mut events = Vec::new();
    for (job, stands) in group.iter().zip(standing) {
        // The boards an updated pin is placed on, for its event.
        let mut boards = Vec::new();
        let result = match &job.write {
            Write::Create { idem: None, .. } if shared => Ok(Outcome::Stored),
            Write::Create { pins, idem } => {
                let mut savepoint = Connection::begin(&mut *tx).await?;
                match insert_in(&mut savepoint, &job.ws, pins, idem.as_ref()).await {
                    Ok(Outcome::Stored) => {
                        savepoint.commit().await?;
                        Ok(Outcome::Stored)
                    }
                    other => {
                        savepoint.rollback().await?;
                        other
                    }
                }
            }
            Write::Update(_) if !stands => Ok(Outcome::Moved),
            Write::Update(update) => match &updated {
                Some(updated) => match updated.get(&update.new.id) {
                    Some(placed_on) => {
                        boards.clone_from(placed_on);
                        Ok(Outcome::Stored)
                    }
                    None => Ok(Outcome::Moved),
                },
                None => match update_alone(&mut tx, &job.ws, update).await {
                    Ok(None) => Ok(Outcome::Moved),
                    Ok(Some(placed_on)) => {
                        boards = placed_on;
                        Ok(Outcome::Stored)
                    }
                    Err(e) if refused(&e) => Err(e.into()),
                    Err(e) => return Err(e.into()),
                },
            },
        };
        if matches!(result, Ok(Outcome::Stored)) {
            events.extend(job.events.iter().cloned().map(|mut event| {
                if let Write::Update(_) = job.write {
                    event.boards.clone_from(&boards);
                }
                event
            }));
        }
        results.push(result);
    }
    SqliteStore::append_events(&mut tx, &events).await?;
    tx.commit().await?;
    Ok(results)
}

/// A group of updates alone, committed in two calls to SQLite's thread instead of five (each
/// call a round trip: ~0.2 ms a call under the PATCH load, bench/README): the SAVEPOINT that
/// opens [`UPDATE_TOGETHER`] opens the transaction too (SQLite begins one for a SAVEPOINT
/// outside any), and the events' INSERT shares its call with the RELEASE that ends it, which
/// commits (releasing the outermost SAVEPOINT is COMMIT). None when SQLite refused a
/// statement (a taken key): nothing was written, and the group goes the general way.
async fn commit_updates(
    conn: &mut SqliteConnection,
    group: &[Job],
) -> Result<Option<Vec<Result<Outcome>>>> {
    let standing = first_of_each_pin(group);
    let updates = standing_updates(group, &standing);
    let done = async {
        let Some(updated) = write_together(&mut *conn, &updates).await? else {
            return Ok(None);
        };
        let mut results = Vec::with_capacity(group.len());
        let mut events = Vec::new();
        for (job, stands) in group.iter().zip(standing) {
            let placed_on = match &job.write {
                Write::Update(update) if stands => updated.get(&update.new.id),
                _ => None,
            };
            results.push(Ok(match placed_on {
                Some(boards) => {
                    events.extend(job.events.iter().cloned().map(|mut event| {
                        event.boards.clone_from(boards);
                        event
                    }));
                    Outcome::Stored
                }
                None => Outcome::Moved,
            }));
        }
        append_and_commit(&mut *conn, &events).await?;
        Ok(Some(results))
    };
    match done.await {
        Ok(results) => Ok(results),
        Err(e) => {
            // The transaction is ours, not sqlx's: end it, whatever it wrote. An error here
            // only says that none was open any more.
            let _ = sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await;
            Err(e)
        }
    }
}

/// [`events::APPEND_EVENTS`], then the RELEASE of [`UPDATE_TOGETHER`]'s SAVEPOINT.
static APPEND_AND_RELEASE: LazyLock<String> =
    LazyLock::new(|| format!("{}; RELEASE together", events::APPEND_EVENTS));

/// Appends `events` and ends [`UPDATE_TOGETHER`]'s SAVEPOINT in one call: where that
/// SAVEPOINT is the transaction ([`commit_updates`]), this commits.
async fn append_and_commit(conn: &mut SqliteConnection, events: &[NewEvent]) -> Result<()> {
    if events.is_empty() {
        return release(conn, false).await;
    }
    sqlx::query(&APPEND_AND_RELEASE)
        .bind(event_rows(events)?)
        .execute(&mut *conn)
        .await?;
    crate::metrics::logged(events.len());
    Ok(())
}

/// One update of a group's shared statements, an element of their one JSON parameter: sqlx
/// binds every `$n` by name, which SQLite finds by walking a list, so hundreds of bound
/// values would cost the square of their number; one array costs one.
#[derive(Serialize)]
struct UpdateRow<'a> {
    ws: &'a str,
    id: &'a str,
    /// The version read: the row is written only if it still has it.
    expected: i64,
    pin_type: &'a str,
    pin_config: &'a str,
    pin_layout: &'a str,
    is_public: bool,
    title: Option<&'a str>,
    /// JSON text, as the column holds it.
    tags: String,
    provenance: Option<&'a str>,
    version: i64,
    updated_at: i64,
    allow_edit: bool,
    require_sign_in: bool,
    allow_comments: bool,
    key: Option<&'a str>,
    expected_every_secs: Option<i64>,
    last_pushed_at: i64,
    stale_due_at: Option<i64>,
    status_rules: Option<&'a str>,
    status: Option<&'a str>,
    status_due: Option<i64>,
}

impl<'a> UpdateRow<'a> {
    fn of(ws: &'a str, update: &'a Update) -> Self {
        let (old, new) = (&update.old, &update.new);
        UpdateRow {
            ws,
            id: &new.id,
            expected: old.version,
            pin_type: &new.pin_type,
            pin_config: &new.pin_config,
            pin_layout: &new.pin_layout,
            is_public: new.is_public,
            title: new.title.as_deref(),
            tags: list_json(&new.tags),
            provenance: new.provenance.as_deref(),
            version: new.version,
            updated_at: new.updated_at,
            allow_edit: new.allow_edit,
            require_sign_in: new.require_sign_in,
            allow_comments: new.allow_comments,
            key: new.key.as_deref(),
            expected_every_secs: new.expected_every_secs,
            last_pushed_at: new.last_pushed_at,
            stale_due_at: new.stale_due_at(),
            status_rules: new.status_rules.as_deref(),
            status: new.status.as_deref(),
            status_due: new.status_due(),
        }
    }
}

/// One update of a group as [`UPDATE_TOGETHER`]'s save and prune read it: apart from
/// [`UpdateRow`], without the new state, so each `->>` of theirs parses a few dozen bytes
/// instead of the whole row.
#[derive(Serialize)]
struct VersionRow<'a> {
    ws: &'a str,
    id: &'a str,
    /// The version read: its state is saved only if the pin still has it.
    expected: i64,
    /// Past versions at or below it are pruned ...
    keep_above: i64,
    /// ... down to this one, not included (`pins::prune_above`).
    prune_above: i64,
}

impl<'a> VersionRow<'a> {
    fn of(ws: &'a str, update: &'a Update) -> Self {
        let (old, new) = (&update.old, &update.new);
        VersionRow {
            ws,
            id: &new.id,
            expected: old.version,
            keep_above: keep_above(new.version, update.retention),
            prune_above: prune_above(new.version, update.retention),
        }
    }
}

/// The text of [`UPDATE_TOGETHER`], with `$set_type` where the UPDATE sets `pin_type`.
macro_rules! update_together {
    ($set_type:literal) => {
        concat!(
            "SAVEPOINT together; \
     INSERT INTO pin_versions (pin_id, version, pin_type, pin_config, \
     pin_layout, is_public, allow_edit, require_sign_in, allow_comments, title, tags, provenance, \
     created_at, updated_at, key, expected_every_secs, last_pushed_at, status_rules, status) \
     SELECT p.id, p.version, p.pin_type, p.pin_config, p.pin_layout, p.is_public, p.allow_edit, \
     p.require_sign_in, p.allow_comments, p.title, p.tags, p.provenance, p.created_at, p.updated_at, \
     p.key, p.expected_every_secs, p.last_pushed_at, p.status_rules, p.status \
     FROM json_each($1) AS u CROSS JOIN pins AS p \
     WHERE p.id = u.value ->> 'id' AND p.workspace_id = u.value ->> 'ws' \
     AND p.version = u.value ->> 'expected' AND p.version > u.value ->> 'keep_above'; \
     DELETE FROM pin_versions WHERE (pin_id, version) IN \
     (SELECT v.pin_id, v.version FROM json_each($2) AS u CROSS JOIN pin_versions AS v \
     WHERE v.pin_id = u.value ->> 'id' AND v.version <= u.value ->> 'keep_above' \
     AND v.version > u.value ->> 'prune_above'); \
     WITH r AS MATERIALIZED (SELECT jsonb(value) AS j FROM json_each($3)), \
     u AS (SELECT j ->> 'ws' AS ws, j ->> 'id' AS id, \
     j ->> 'expected' AS expected, j ->> 'pin_type' AS pin_type, \
     j ->> 'pin_config' AS pin_config, j ->> 'pin_layout' AS pin_layout, \
     j ->> 'is_public' AS is_public, j ->> 'title' AS title, j ->> 'tags' AS tags, \
     j ->> 'provenance' AS provenance, j ->> 'version' AS version, \
     j ->> 'updated_at' AS updated_at, j ->> 'allow_edit' AS allow_edit, \
     j ->> 'require_sign_in' AS require_sign_in, j ->> 'allow_comments' AS allow_comments, \
     j ->> 'key' AS key, j ->> 'expected_every_secs' AS expected_every_secs, \
     j ->> 'last_pushed_at' AS last_pushed_at, j ->> 'stale_due_at' AS stale_due_at, \
     j ->> 'status_rules' AS status_rules, j ->> 'status' AS status, \
     j ->> 'status_due' AS status_due FROM r) \
     UPDATE pins SET ", $set_type, "pin_config = u.pin_config, pin_layout = u.pin_layout, \
     is_public = u.is_public, title = u.title, tags = u.tags, provenance = u.provenance, \
     version = u.version, updated_at = u.updated_at, allow_edit = u.allow_edit, \
     require_sign_in = u.require_sign_in, allow_comments = u.allow_comments, key = u.key, \
     expected_every_secs = u.expected_every_secs, last_pushed_at = u.last_pushed_at, \
     stale_due_at = u.stale_due_at, status_rules = u.status_rules, status = u.status, \
     status_due = COALESCE(pins.status_due, u.status_due) \
     FROM u WHERE pins.id = u.id AND pins.workspace_id = u.ws AND pins.version = u.expected \
     RETURNING pins.id, NULL; \
     SELECT pl.pin_id, pl.pinboard_id \
     FROM json_each($4) AS u CROSS JOIN placements AS pl WHERE pl.pin_id = u.value"
        )
    };
}
/// A group's updates in one call to SQLite's thread (each call is a round trip: a wake-up of
/// that thread and one of the loop's, five of them saved a group), inside a SAVEPOINT
/// the caller releases, or rolls back when SQLite refused a statement ([`release`]):
/// 1. the stored state of each pin of `$1` ([`VersionRow`]s) still at its expected version
///    saved as a past version (unless none are kept); `CROSS JOIN` keeps the array the outer
///    loop, so each pin is found by its id;
/// 2. the past versions of the pins of `$2` (the [`VersionRow`]s whose write prunes,
///    `pins::prune_above`) beyond the retention pruned;
/// 3. each pin of `$3` ([`UpdateRow`]s) still at its expected version written (a
///    compare-and-set each), returning `(id, NULL)`. Each row becomes binary JSON once (`r`):
///    `->>` on a row's text would parse the whole row, its configuration too, for each of
///    the 22 fields;
/// 4. the boards each pin of `$4` (a JSON array of ids) is placed on, as `(pin, board)`.
const UPDATE_TOGETHER: &str = update_together!("pin_type = u.pin_type, ");
/// [`UPDATE_TOGETHER`] for a group whose updates all keep their pins' types: SQLite rewrites
/// a row's entry in every index on a column the SET names, whatever the value, so with
/// `pin_type` named each update rewrote its `pins_workspace_type_seq` entry for nothing
/// (PATCH/s +4 % in alternated runs, session 30). A pin's type at its expected version is
/// the one the update was decided from, so the compare-and-set keeps this exact.
const UPDATE_SAME_TYPES: &str = update_together!("");

/// Writes a group's `updates` (at most one of each pin) whose pins are still at the versions
/// read, in one SAVEPOINT: their stored states saved as past versions, versions beyond the
/// retention pruned, the new states written. Returns the boards of each pin it updated, by
/// id; None when SQLite refused a statement (a taken key): nothing was written.
async fn update_together(
    conn: &mut SqliteConnection,
    updates: &[(&str, &Update)],
) -> Result<Option<HashMap<String, Vec<String>>>> {
    if updates.is_empty() {
        return Ok(Some(HashMap::new()));
    }
    let updated = write_together(conn, updates).await?;
    if updated.is_some() {
        release(conn, false).await?;
    }
    Ok(updated)
}

/// [`UPDATE_TOGETHER`] for `updates` (at least one), leaving its SAVEPOINT open: the boards
/// of each pin it updated, by id. None when SQLite refused a statement: the SAVEPOINT is
/// rolled back and released, nothing written.
async fn write_together(
    conn: &mut SqliteConnection,
    updates: &[(&str, &Update)],
) -> Result<Option<HashMap<String, Vec<String>>>> {
    let rows: Vec<UpdateRow> = updates.iter().map(|(ws, u)| UpdateRow::of(ws, u)).collect();
    let versions: Vec<VersionRow> = updates
        .iter()
        .map(|(ws, u)| VersionRow::of(ws, u))
        .collect();
    let pruning: Vec<&VersionRow> = versions
        .iter()
        .filter(|v| v.prune_above < v.keep_above)
        .collect();
    let ids: Vec<&str> = rows.iter().map(|row| row.id).collect();
    let same_types = updates
        .iter()
        .all(|(_, u)| u.new.pin_type == u.old.pin_type);
    let statement = if same_types {
        UPDATE_SAME_TYPES
    } else {
        UPDATE_TOGETHER
    };
    let written = sqlx::query(statement)
        .bind(json(&versions)?)
        .bind(json(&pruning)?)
        .bind(json(&rows)?)
        .bind(json(&ids)?)
        .fetch_all(&mut *conn)
        .await;
    let written = match written {
        Ok(written) => written,
        Err(e) if refused(&e) => {
            release(conn, true).await?;
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    // The UPDATE's rows come first, `(id, NULL)`; then the boards, `(pin, board)`.
    let mut boards: HashMap<String, Vec<String>> = HashMap::new();
    for row in &written {
        let pin: String = row.try_get(0)?;
        match row.try_get::<Option<String>, _>(1)? {
            None => {
                boards.insert(pin, Vec::new());
            }
            Some(board) => {
                if let Some(placed_on) = boards.get_mut(&pin) {
                    placed_on.push(board);
                }
            }
        }
    }
    Ok(Some(boards))
}

/// Ends [`UPDATE_TOGETHER`]'s SAVEPOINT, undoing what it wrote first if `undo`.
async fn release(conn: &mut SqliteConnection, undo: bool) -> Result<()> {
    let sql = if undo {
        "ROLLBACK TO together; RELEASE together"
    } else {
        "RELEASE together"
    };
    sqlx::raw_sql(sql).execute(&mut *conn).await?;
    Ok(())
}

/// `value` as JSON text, for a statement's one parameter.
fn json(value: &impl Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(Error::internal)
}

/// Writes `update` alone if its pin is still at the version read, in a SAVEPOINT (a refused
/// change, such as a taken key, leaves nothing): the stored state as a past version, the
/// compare-and-set, the pruning, and the pin's boards for its event. None: the pin moved.
async fn update_alone(
    conn: &mut SqliteConnection,
    ws: &str,
    update: &Update,
) -> Result<Option<Vec<String>>, sqlx::Error> {
    let (old, new) = (&update.old, &update.new);
    let mut savepoint = Connection::begin(&mut *conn).await?;
    if update.retention > 0 {
        SqliteStore::query(SAVE_VERSION_AT)
            .bind(&old.id)
            .bind(old.version)
            .bind(ws)
            .execute(&mut *savepoint)
            .await?;
    }
    let changed = bind_pin_update(SqliteStore::query(UPDATE_PIN_AT), new)
        .bind(old.version)
        .bind(ws)
        .execute(&mut *savepoint)
        .await;
    match changed {
        Ok(0) => {
            savepoint.rollback().await?;
            return Ok(None);
        }
        Ok(_) => {}
        Err(e) => {
            savepoint.rollback().await?;
            return Err(e);
        }
    }
    SqliteStore::query(PRUNE_VERSIONS)
        .bind(&new.id)
        .bind(keep_above(new.version, update.retention))
        .bind(prune_above(new.version, update.retention))
        .execute(&mut *savepoint)
        .await?;
    let boards = sqlx::query_scalar(PIN_BOARDS)
        .bind(&new.id)
        .fetch_all(&mut *savepoint)
        .await?;
    savepoint.commit().await?;
    Ok(Some(boards))
}

/// SQLite refused the statement itself (a constraint): it undid that statement alone, and
/// the transaction goes on.
fn refused(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.code().is_some_and(|code| {
        // SQLITE_CONSTRAINT and its extended codes (`19 | n << 8`).
        code.parse::<i32>().is_ok_and(|code| code & 0xff == 19)
    }))
}

/// Writes all `rows` or none: one statement when they fit one, else a transaction (a
/// SAVEPOINT when `conn` is already in one). False when an INSERT failed (nothing was
/// written).
async fn insert_together(conn: &mut SqliteConnection, rows: &[(&str, &Pin)]) -> Result<bool> {
    if rows.len() <= INSERT_CHUNK {
        return Ok(insert_rows_in(conn, rows).await.is_ok());
    }
    let mut tx = Connection::begin(conn).await?;
    if insert_rows_in(&mut tx, rows).await.is_ok() {
        tx.commit().await?;
        return Ok(true);
    }
    tx.rollback().await?;
    Ok(false)
}

/// Rows per INSERT of a batch: one statement instead of one per pin (19 parameters a row,
/// far below SQLite's 32766).
const INSERT_CHUNK: usize = 100;

/// [`INSERT_PIN`] for `rows` rows. Several rows take anonymous `?` parameters: binding
/// numbered ones makes SQLite search their names, a cost that grows with the square of the
/// count (27% of a batch's CPU with 1200 of them).
fn insert_rows(rows: usize) -> Cow<'static, str> {
    if rows == 1 {
        return Cow::Borrowed(INSERT_PIN);
    }
    let row = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    Cow::Owned(format!(
        "{} VALUES {}",
        insert_pins_into!(),
        vec![row; rows].join(", ")
    ))
}

/// One create (an idempotency claim, then its pins) inside the caller's transaction.
async fn insert_in(
    conn: &mut SqliteConnection,
    ws: &str,
    pins: &[Pin],
    idem: Option<&Idempotent>,
) -> Result<Outcome> {
    if let Some(idem) = idem {
        let claimed = sqlx::query(
            "INSERT INTO idempotency_keys (workspace_id, key, request_hash, response, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (workspace_id, key) DO UPDATE SET request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at \
             WHERE idempotency_keys.created_at < $6",
        )
        .bind(ws)
        .bind(&idem.key)
        .bind(&idem.request_hash)
        .bind(&idem.response)
        .bind(idem.created_at)
        .bind(idem.live_since)
        .execute(&mut *conn)
        .await?;
        if claimed.rows_affected() == 0 {
            return Ok(Outcome::KeyTaken);
        }
    }
    let rows: Vec<_> = pins.iter().map(|pin| (ws, pin)).collect();
    insert_rows_in(conn, &rows).await?;
    Ok(Outcome::Stored)
}

/// Inserts `(workspace, pin)` rows, [`INSERT_CHUNK`] to a statement. Outside a transaction
/// each statement commits on its own: a caller with more rows than one statement takes must
/// open one for all or none.
async fn insert_rows_in(conn: &mut SqliteConnection, rows: &[(&str, &Pin)]) -> Result<()> {
    for chunk in rows.chunks(INSERT_CHUNK) {
        let sql = insert_rows(chunk.len());
        let mut insert = SqliteStore::query(&sql);
        for &(ws, pin) in chunk {
            insert = bind_new_pin(insert, ws, pin);
        }
        insert.execute(&mut *conn).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{
        group_commit::tests::{
            check_update_outcomes, job, stored_unless_poisoned, update_groups, UPDATE_STATE,
        },
        keys::KeyStore,
        sql::Backend,
        sqlite::SqliteStore,
    };

    /// Each of `commit`'s ways of writing a group, with one create the database refuses (a
    /// trigger) among others: only that one fails, the others are stored.
    #[tokio::test]
    async fn a_refused_create_fails_alone_in_every_kind_of_group() {
        let (store, dir) = open_store().await;
        let ws = store.ensure_workspace("default").await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        sqlx::raw_sql(
            "CREATE TRIGGER poison BEFORE INSERT ON pins WHEN NEW.title = 'poison' \
             BEGIN SELECT RAISE(ABORT, 'poisoned'); END;",
        )
        .execute(&mut *conn)
        .await
        .unwrap();
        let many: Vec<String> = (0..60).map(|i| format!("many {i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let groups = [
            // All plain, one statement; then all plain past INSERT_CHUNK rows.
            vec![
                job(&ws, &["a"], None),
                job(&ws, &["poison"], None),
                job(&ws, &["b"], None),
            ],
            vec![
                job(&ws, &many[..], None),
                job(&ws, &["poison"], None),
                job(&ws, &many[..], None),
            ],
            // Mixed: the plain ones share an INSERT, the keyed ones get a SAVEPOINT each.
            vec![
                job(&ws, &["c"], Some("k1")),
                job(&ws, &["d", "poison"], None),
                job(&ws, &["e"], None),
                job(&ws, &["poison"], Some("k2")),
                job(&ws, &["f"], Some("k3")),
            ],
        ];
        let mut stored = 0;
        for group in &groups {
            let results = commit(&mut conn, group).await.unwrap();
            stored += stored_unless_poisoned(group, &results);
        }
        let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM pins")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(rows, i64::try_from(stored).unwrap());
        let claims: i64 = sqlx::query_scalar("SELECT count(*) FROM idempotency_keys")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(claims, 2, "the refused keyed create left no claim");
        drop(conn);
        store.close().await;
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A group of updates where each way an update ends is met once
    /// ([`update_groups`]): only the stored ones changed the store, with one past version and
    /// one event each.
    #[tokio::test]
    async fn each_update_of_a_group_ends_on_its_own() {
        let (store, dir) = open_store().await;
        let ws = store.ensure_workspace("default").await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        let [setup, group] = update_groups(&ws);
        let created = commit(&mut conn, &setup).await.unwrap();
        assert!(matches!(created[..], [Ok(Outcome::Stored)]));
        let results = commit(&mut conn, &group).await.unwrap();
        check_update_outcomes(&results);
        let pins: Vec<(String, i64)> = sqlx::query_as(UPDATE_STATE[0])
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        let expected = [("a2", 2), ("b", 1), ("c", 1), ("d", 1), ("e", 1)];
        let expected: Vec<(String, i64)> =
            expected.iter().map(|(t, v)| ((*t).into(), *v)).collect();
        assert_eq!(pins, expected);
        for (sql, count) in UPDATE_STATE[1..].iter().zip([1, 1]) {
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&mut *conn).await.unwrap();
            assert_eq!(n, count, "{sql}");
        }
        drop(conn);
        store.close().await;
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A store of its own in a new directory.
    async fn open_store() -> (SqliteStore, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("corkboard-commit-{}", uuid::Uuid::new_v4()));
        let store = SqliteStore::open(
            &format!("sqlite://{}/c.db", dir.display()),
            2,
            crate::events::Records::shared("http://test"),
        )
        .await
        .unwrap();
        (store, dir)
    }

    /// [`update_groups`]' pins created, the first (`a`) placed on board `b-1`; then the
    /// second group's updates: `a` stored, `c` refused, `a` again and `d` moved.
    async fn updates_of_placed_pins(ws: &str, conn: &mut SqliteConnection) -> [Job; 4] {
        let [setup, group] = update_groups(ws);
        assert!(matches!(
            commit(conn, &setup).await.unwrap()[..],
            [Ok(Outcome::Stored)]
        ));
        let a = &setup[0].creates().unwrap().0[0].id;
        sqlx::raw_sql(&format!(
            "INSERT INTO pinboards (id, workspace_id, title, tags, is_public, allow_edit, \
             require_sign_in, allow_comments, created_at, updated_at) \
             VALUES ('b-1', '{ws}', 'B', '[]', 0, 0, 0, 0, 0, 0); \
             INSERT INTO placements (pinboard_id, pin_id, x, y, w, h) VALUES ('b-1', '{a}', 0, 0, 1, 1)"
        ))
        .execute(&mut *conn)
        .await
        .unwrap();
        let Ok([a2, refused, a3, d8, _create]) = <[Job; 5]>::try_from(group) else {
            panic!("update_groups' second group has five jobs");
        };
        [a2, refused, a3, d8]
    }

    /// A group of updates alone ([`commit_updates`]): the stored one is committed (another
    /// connection reads it) with one past version and one event naming its pin's board; the
    /// moved ones wrote nothing; the transaction is closed (a group of the general way
    /// commits after it). A refused update sends its group the general way, failing alone.
    #[tokio::test]
    async fn a_group_of_updates_alone_commits_in_its_savepoint() {
        let (store, dir) = open_store().await;
        let ws = store.ensure_workspace("default").await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        let [a2, refused, a3, d8] = updates_of_placed_pins(&ws, &mut conn).await;
        let results = commit(&mut conn, &[a2, a3, d8]).await.unwrap();
        assert!(
            matches!(
                results[..],
                [Ok(Outcome::Stored), Ok(Outcome::Moved), Ok(Outcome::Moved)]
            ),
            "{results:?}"
        );
        let pins: Vec<(String, i64)> = sqlx::query_as(UPDATE_STATE[0])
            .fetch_all(&store.reader)
            .await
            .unwrap();
        let expected = [("a2", 2), ("b", 1), ("c", 1), ("d", 1)];
        let expected: Vec<(String, i64)> =
            expected.iter().map(|(t, v)| ((*t).into(), *v)).collect();
        assert_eq!(pins, expected);
        let boards: Vec<String> =
            sqlx::query_scalar("SELECT boards FROM events WHERE event = 'pin.updated'")
                .fetch_all(&store.reader)
                .await
                .unwrap();
        assert_eq!(boards, [r#"["b-1"]"#]);
        let versions: i64 = sqlx::query_scalar(UPDATE_STATE[1])
            .fetch_one(&store.reader)
            .await
            .unwrap();
        assert_eq!(versions, 1);
        let results = commit(&mut conn, &[refused]).await.unwrap();
        assert!(
            matches!(results[..], [Err(Error::Taken { .. })]),
            "{results:?}"
        );
        let results = commit(&mut conn, &[job(&ws, &["f"], None)]).await.unwrap();
        assert!(matches!(results[..], [Ok(Outcome::Stored)]), "{results:?}");
        drop(conn);
        store.close().await;
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A group of updates alone whose events SQLite refuses fails whole and leaves nothing:
    /// no pin changed, no past version, and no transaction left open on the writer.
    #[tokio::test]
    async fn a_failed_group_of_updates_alone_leaves_nothing() {
        let (store, dir) = open_store().await;
        let ws = store.ensure_workspace("default").await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        let [a2, _refused, a3, _d8] = updates_of_placed_pins(&ws, &mut conn).await;
        sqlx::raw_sql(
            "CREATE TRIGGER poison BEFORE INSERT ON events WHEN NEW.event = 'pin.updated' \
             BEGIN SELECT RAISE(ABORT, 'poisoned'); END;",
        )
        .execute(&mut *conn)
        .await
        .unwrap();
        assert!(commit(&mut conn, &[a2]).await.is_err());
        let pins: Vec<(String, i64)> = sqlx::query_as(UPDATE_STATE[0])
            .fetch_all(&mut *conn)
            .await
            .unwrap();
        assert!(pins.iter().all(|(_, version)| *version == 1), "{pins:?}");
        let versions: i64 = sqlx::query_scalar(UPDATE_STATE[1])
            .fetch_one(&mut *conn)
            .await
            .unwrap();
        assert_eq!(versions, 0);
        sqlx::raw_sql("DROP TRIGGER poison")
            .execute(&mut *conn)
            .await
            .unwrap();
        let results = commit(&mut conn, &[a3]).await.unwrap();
        assert!(matches!(results[..], [Ok(Outcome::Stored)]), "{results:?}");
        let titles: Vec<String> = sqlx::query_scalar("SELECT title FROM pins WHERE version = 2")
            .fetch_all(&store.reader)
            .await
            .unwrap();
        assert_eq!(titles, ["a3"], "committed: another connection reads it");
        drop(conn);
        store.close().await;
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn one_row_inserts_with_insert_pin_and_more_take_nineteen_parameters_each() {
        assert_eq!(insert_rows(1), INSERT_PIN);
        let sql = insert_rows(3);
        assert!(sql.starts_with(insert_pins_into!()));
        assert_eq!(sql.matches('?').count(), 57);
    }
}
