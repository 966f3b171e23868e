//! The archive of one workspace (CONTRACT.md 18): its format, [`export`] (a page of rows at
//! a time, written out as it is read) and [`import`] (parsed as it is read, written in one
//! transaction of the target).
//!
//! An archive is one JSON object: `format` (`corkboard-export`), `version` (1),
//! `workspace` (its name), `exported_at`, then one array per section in [`SECTIONS`]' order
//! (which is the order the foreign keys ask for on import), each row an object of the
//! section's columns, one row a line. It holds each record's current state (no past
//! versions, no event log) and no secret: no API key, no session, no hook token or
//! signature secret, no outgoing webhook's signing secret or delivery state.

use std::collections::HashSet;

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::rows::{self, col, Cell, Col, Kind, Kind::*, Source};
use super::{Dialect, Progress};
use crate::error::{Error, Result};
use crate::store::sql::{is_unique_violation, Backend, Record};
use crate::store::{checked_json, Store};

/// What the archive's `format` says.
pub const FORMAT: &str = "corkboard-export";
/// The archive format this version writes and reads.
pub const VERSION: u64 = 1;

/// One array of the archive: the rows of `table` that belong to the workspace.
pub(crate) struct Section {
    pub name: &'static str,
    table: &'static str,
    /// `FROM` of the export's read: the table as `t`, joined to what names the workspace.
    from: &'static str,
    /// The test that a row belongs to the workspace `$1`.
    filter: &'static str,
    key: &'static [Col],
    pub columns: &'static [Col],
    /// The table has a `workspace_id`, which an import sets to the target workspace's.
    in_workspace: bool,
}

const SEQ: &[Col] = &[col("seq", Int)];

/// Every section, in the order an archive holds them.
pub(crate) const SECTIONS: &[Section] = &[
    Section {
        name: "users",
        table: "users",
        from: "users t",
        filter: "t.id IN (SELECT user_id FROM memberships WHERE workspace_id = $1 \
                 UNION SELECT c.user_id FROM collaborators c JOIN pinboards b ON b.id = c.pinboard_id \
                 WHERE b.workspace_id = $1)",
        key: &[col("id", Text)],
        columns: &[
            col("id", Text),
            col("subject", Text),
            col("email", OptText),
            col("created_at", Int),
        ],
        in_workspace: false,
    },
    Section {
        name: "members",
        table: "memberships",
        from: "memberships t",
        filter: "t.workspace_id = $1",
        key: &[col("user_id", Text)],
        columns: &[
            col("user_id", Text),
            col("role", Text),
            col("created_at", Int),
        ],
        in_workspace: true,
    },
    Section {
        name: "roles",
        table: "roles",
        from: "roles t",
        filter: "t.workspace_id = $1",
        key: &[col("name", Text)],
        columns: &[
            col("name", Text),
            col("scopes", Text),
            col("created_at", Int),
        ],
        in_workspace: true,
    },
    Section {
        name: "pins",
        table: "pins",
        from: "pins t",
        filter: "t.workspace_id = $1",
        key: SEQ,
        columns: &[
            col("id", Text),
            col("key", OptText),
            col("pin_type", Text),
            col("pin_config", Json),
            col("pin_layout", Text),
            col("title", OptText),
            col("tags", List),
            col("provenance", OptJson),
            col("is_public", Bool),
            col("allow_edit", Bool),
            col("require_sign_in", Bool),
            col("allow_comments", Bool),
            col("version", Int),
            col("created_at", Int),
            col("updated_at", Int),
            col("expected_every_secs", OptInt),
            col("last_pushed_at", Int),
            col("stale_due_at", OptInt),
            col("status_rules", OptJson),
            col("status", OptText),
            col("status_due", OptInt),
        ],
        in_workspace: true,
    },
    Section {
        name: "pinboards",
        table: "pinboards",
        from: "pinboards t",
        filter: "t.workspace_id = $1",
        key: SEQ,
        columns: &[
            col("id", Text),
            col("title", Text),
            col("description", OptText),
            col("tags", List),
            col("is_public", Bool),
            col("allow_edit", Bool),
            col("require_sign_in", Bool),
            col("allow_comments", Bool),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        in_workspace: true,
    },
    Section {
        name: "placements",
        table: "placements",
        from: "placements t JOIN pinboards b ON b.id = t.pinboard_id",
        filter: "b.workspace_id = $1",
        key: &[col("pinboard_id", Text), col("pin_id", Text)],
        columns: &[
            col("pinboard_id", Text),
            col("pin_id", Text),
            col("x", Int),
            col("y", Int),
            col("w", Int),
            col("h", Int),
        ],
        in_workspace: false,
    },
    Section {
        name: "collaborators",
        table: "collaborators",
        from: "collaborators t JOIN pinboards b ON b.id = t.pinboard_id",
        filter: "b.workspace_id = $1",
        key: &[col("pinboard_id", Text), col("user_id", Text)],
        columns: &[
            col("pinboard_id", Text),
            col("user_id", Text),
            col("role", Text),
            col("added_at", Int),
        ],
        in_workspace: false,
    },
    Section {
        name: "datasets",
        table: "datasets",
        from: "datasets t",
        filter: "t.workspace_id = $1",
        key: SEQ,
        columns: &[
            col("id", Text),
            col("name", Text),
            col("format", Text),
            col("data", Json),
            col("description", OptText),
            col("version", Int),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        in_workspace: true,
    },
    Section {
        name: "blocks",
        table: "blocks",
        from: "blocks t JOIN pins p ON p.id = t.pin_id",
        filter: "p.workspace_id = $1",
        key: &[col("id", Text)],
        columns: &[
            col("id", Text),
            col("pin_id", Text),
            col("block_type", Text),
            col("config", Json),
            col("position", Int),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        in_workspace: false,
    },
    Section {
        name: "hooks",
        table: "hooks",
        from: "hooks t",
        filter: "t.workspace_id = $1",
        key: SEQ,
        // Never `lookup`, `token_hash` or `signature_secret`: see `import`.
        columns: &[
            col("id", Text),
            col("name", Text),
            col("dataset", Text),
            col("mode", Text),
            col("max_items", Int),
            col("signature_scheme", OptText),
            col("created_at", Int),
        ],
        in_workspace: true,
    },
    Section {
        name: "webhooks",
        table: "webhooks",
        from: "webhooks t",
        filter: "t.workspace_id = $1",
        key: SEQ,
        // Never `secret`, nor where deliveries stand (cursor, failures, lease): see `import`.
        columns: &[
            col("id", Text),
            col("url", Text),
            col("event_types", List),
            col("pinboard_id", OptText),
            col("pin_id", OptText),
            col("description", OptText),
            col("enabled", Bool),
            col("disabled_reason", OptText),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        in_workspace: true,
    },
    Section {
        name: "playlists",
        table: "playlists",
        from: "playlists t",
        filter: "t.workspace_id = $1",
        key: SEQ,
        columns: &[
            col("id", Text),
            col("name", Text),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        in_workspace: true,
    },
    Section {
        name: "playlist_items",
        table: "playlist_items",
        from: "playlist_items t JOIN playlists p ON p.id = t.playlist_id",
        filter: "p.workspace_id = $1",
        key: &[col("playlist_id", Text), col("position", Int)],
        columns: &[
            col("playlist_id", Text),
            col("position", Int),
            col("pinboard_id", Text),
            col("seconds", Int),
        ],
        in_workspace: false,
    },
    Section {
        name: "embed_origins",
        table: "embed_origins",
        from: "embed_origins t",
        filter: "t.workspace_id = $1",
        key: &[col("item_id", Text)],
        columns: &[
            col("item_id", Text),
            col("pin_id", OptText),
            col("pinboard_id", OptText),
            col("origins", List),
        ],
        in_workspace: true,
    },
];

/// Rows read a statement at a time.
const PAGE: usize = 500;
/// Bytes gathered before they are handed to the sink.
const CHUNK: usize = 64 * 1024;

/// Where an archive goes, a chunk at a time: a file, stdout, a response body.
pub trait Sink: Send {
    fn put(&mut self, chunk: Vec<u8>) -> impl std::future::Future<Output = Result<()>> + Send;
}

/// The id of the workspace named `name`, if the store has one.
async fn workspace_id<B: Backend>(conn: &mut B::Db, name: &str) -> Result<Option<String>> {
    let row = B::query("SELECT id FROM workspaces WHERE name = $1")
        .bind(name)
        .fetch_optional(conn)
        .await?;
    Ok(row.map(|r| r.get::<String>(0)).transpose()?)
}

/// Which workspace to export.
#[derive(Debug, Clone, Copy)]
pub enum Workspace<'a> {
    /// By name (the CLI).
    Named(&'a str),
    /// By id (the caller's, over HTTP).
    Id(&'a str),
}

/// Writes the archive of `workspace` to `sink`; 404 when the store has no such workspace.
pub async fn export(
    store: &Store,
    workspace: Workspace<'_>,
    sink: &mut impl Sink,
    progress: &Progress,
) -> Result<()> {
    match store {
        Store::Sqlite(s) => export_from(s, Dialect::Sqlite, workspace, sink, progress).await,
        Store::Postgres(s) => export_from(s, Dialect::Postgres, workspace, sink, progress).await,
    }
}

async fn export_from<B: Backend>(
    store: &B,
    dialect: Dialect,
    workspace: Workspace<'_>,
    sink: &mut impl Sink,
    progress: &Progress,
) -> Result<()> {
    let mut conn = store.reader().await?;
    let mut read = sqlx::Connection::begin(&mut *conn).await?;
    dialect.snapshot::<B>(&mut read).await?;
    let (sql, by) = match workspace {
        Workspace::Named(name) => ("SELECT id, name FROM workspaces WHERE name = $1", name),
        Workspace::Id(id) => ("SELECT id, name FROM workspaces WHERE id = $1", id),
    };
    let row = B::query(sql).bind(by).fetch_optional(&mut read).await?;
    let Some(row) = row else {
        return Err(Error::NotFound {
            what: "workspace",
            index: None,
        });
    };
    let (ws, name): (String, String) = (row.get(0)?, row.get(1)?);
    if progress.shown() {
        let mut total = 0;
        for section in SECTIONS {
            total +=
                rows::count::<B>(&mut read, section.from, Some(section.filter), Some(&ws)).await?;
        }
        progress.start(total);
    }
    let mut out = Vec::with_capacity(CHUNK * 2);
    let head = serde_json::json!({
        "format": FORMAT,
        "version": VERSION,
        "workspace": name,
        "exported_at": crate::clock::iso(crate::clock::now_ms()),
    })
    .to_string();
    // The head's members, then the sections as further members of the same object.
    out.extend_from_slice(&head.as_bytes()[..head.len() - 1]);
    for section in SECTIONS {
        out.extend_from_slice(format!(",\n\"{}\": [", section.name).as_bytes());
        let source = Source {
            from: section.from,
            filter: Some(section.filter),
            key: section.key,
            columns: section.columns,
        };
        let mut after = None;
        let mut first = true;
        loop {
            let page = source
                .page::<B>(&mut read, Some(&ws), after.as_deref(), PAGE)
                .await?;
            for row in &page.rows {
                out.extend_from_slice(if first { b"\n" } else { b",\n" });
                first = false;
                write_row(&mut out, section.columns, &row[section.key.len()..])?;
                if out.len() >= CHUNK {
                    sink.put(std::mem::replace(&mut out, Vec::with_capacity(CHUNK * 2)))
                        .await?;
                }
            }
            progress.advance(page.rows.len());
            match page.after {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        out.extend_from_slice(b"]");
    }
    out.extend_from_slice(b"\n}\n");
    sink.put(out).await?;
    read.rollback().await?;
    progress.finish();
    Ok(())
}

/// One row as a JSON object of its columns; stored JSON text goes in as it is, once
/// checked to be JSON (without building its value: the archive's cost is mostly this).
fn write_row(out: &mut Vec<u8>, columns: &[Col], cells: &[Cell]) -> Result<()> {
    let failed = |e: serde_json::Error| Error::internal_in("writing the archive", e);
    out.push(b'{');
    for (i, (column, cell)) in columns.iter().zip(cells).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(column.name.as_bytes());
        out.extend_from_slice(b"\":");
        match (column.kind, cell) {
            (Json | OptJson, Cell::Text(Some(text))) => {
                out.extend_from_slice(checked_json(text)?.as_bytes());
            }
            (_, Cell::Text(Some(text))) => {
                serde_json::to_writer(&mut *out, text).map_err(failed)?
            }
            (_, Cell::Text(None) | Cell::Int(None)) => out.extend_from_slice(b"null"),
            (_, Cell::Int(Some(n))) => out.extend_from_slice(n.to_string().as_bytes()),
            (_, Cell::Bool(b)) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            (_, Cell::List(list)) => serde_json::to_writer(&mut *out, list).map_err(failed)?,
        }
    }
    out.push(b'}');
    Ok(())
}

/// An import refused: the archive, or the target, is not what it must be.
fn refuse(message: impl Into<String>) -> Error {
    Error::Conflict(message.into())
}

/// What an import wrote.
#[derive(Debug, Default)]
pub struct Imported {
    /// The workspace's name in the target.
    pub workspace: String,
    /// Rows written, by section.
    pub rows: Vec<(&'static str, u64)>,
    /// Each hook with its new url (an archive holds no token) and, for a signed hook, its
    /// new signature secret: the senders must be given both.
    pub hooks: Vec<RestoredHook>,
    /// Each outgoing webhook with its new signing secret (an archive holds none): its
    /// receiver must be given it.
    pub webhooks: Vec<RestoredWebhook>,
}

#[derive(Debug)]
pub struct RestoredWebhook {
    pub id: String,
    pub url: String,
    pub secret: String,
}

#[derive(Debug)]
pub struct RestoredHook {
    pub id: String,
    pub name: String,
    pub url: String,
    pub secret: Option<String>,
}

/// What the parser hands the writer.
enum Item {
    /// The workspace the archive names.
    Workspace(String),
    Row(usize, Map<String, Value>),
    /// The archive could not be read, or is not an archive of this version.
    Bad(String),
}

/// Restores the archive read from `reader` into the workspace named `workspace` (the
/// archive's own when `None`), which must be empty (no pins, boards, datasets, roles,
/// members or hooks; keys are allowed), with the archive's ids. One transaction: a refusal
/// (an error) writes nothing.
pub async fn import(
    store: &Store,
    reader: impl std::io::Read + Send + 'static,
    workspace: Option<&str>,
    public_base: &str,
    progress: &Progress,
) -> Result<Imported> {
    let (tx, rx) = mpsc::channel(PAGE);
    let parser = tokio::task::spawn_blocking(move || parse(reader, &tx));
    let imported = match store {
        Store::Sqlite(s) => {
            import_into(s, Dialect::Sqlite, rx, workspace, public_base, progress).await
        }
        Store::Postgres(s) => {
            import_into(s, Dialect::Postgres, rx, workspace, public_base, progress).await
        }
    };
    // The parser ends when the receiver goes, however the import ended.
    let _ = parser.await;
    imported
}

async fn import_into<B: Backend>(
    store: &B,
    dialect: Dialect,
    mut items: mpsc::Receiver<Item>,
    workspace: Option<&str>,
    public_base: &str,
    progress: &Progress,
) -> Result<Imported> {
    let named = match items.recv().await {
        Some(Item::Workspace(name)) => name,
        Some(Item::Bad(why)) => return Err(refuse(why)),
        _ => return Err(refuse("not a corkboard archive")),
    };
    let name = workspace.map_or(named, str::to_owned);
    if !crate::auth::valid_workspace_name(&name) {
        return Err(refuse(format!(
            "`{name}` is not a workspace name ([a-z0-9-]{{1,64}})"
        )));
    }
    let mut conn = store.writer().await?;
    let mut write = sqlx::Connection::begin_with(&mut *conn, dialect.begin_write()).await?;
    dialect.patient::<B>(&mut write).await?;
    let ws = match workspace_id::<B>(&mut write, &name).await? {
        Some(ws) => {
            check_empty::<B>(&mut write, &ws, &name).await?;
            ws
        }
        None => {
            let ws = crate::ids::new_id("ws-");
            B::query("INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)")
                .bind(&ws)
                .bind(&name)
                .bind(crate::clock::now_ms())
                .execute(&mut write)
                .await?;
            ws
        }
    };
    progress.start_unknown();
    let mut imported = Imported {
        workspace: name,
        ..Imported::default()
    };
    let mut known = Known::default();
    // Restored webhooks send what the workspace logs from now on.
    let newest_event = B::query("SELECT COALESCE(MAX(seq), 0) FROM events")
        .fetch_optional(&mut write)
        .await?
        .map(|row| row.get::<i64>(0))
        .transpose()?
        .unwrap_or(0);
    let mut batch: Vec<Vec<Cell>> = Vec::with_capacity(PAGE);
    let mut current = None;
    loop {
        let item = items.recv().await;
        let next = match &item {
            Some(Item::Row(section, _)) => Some(*section),
            _ => None,
        };
        if current.is_some() && (next != current || batch.len() >= PAGE) {
            if let Some(section) = current {
                write_batch::<B>(&mut write, &SECTIONS[section], &ws, &mut batch).await?;
            }
        }
        match item {
            None => break,
            Some(Item::Bad(why)) => return Err(refuse(why)),
            Some(Item::Workspace(_)) => {
                return Err(refuse("the archive names its workspace twice"))
            }
            Some(Item::Row(section, row)) => {
                current = Some(section);
                let spec = &SECTIONS[section];
                let mut cells = cells_of(spec, row)?;
                known.check(spec, &cells)?;
                if spec.name == "users" && !new_user::<B>(&mut write, &cells).await? {
                    continue;
                }
                if spec.name == "hooks" {
                    imported.hooks.push(restore_hook(&mut cells, public_base));
                }
                if spec.name == "webhooks" {
                    imported
                        .webhooks
                        .push(restore_webhook(&mut cells, newest_event));
                }
                count(&mut imported.rows, spec.name);
                batch.push(cells);
                progress.advance(1);
            }
        }
    }
    let committed = write.commit().await;
    store.auth().changed();
    committed?;
    progress.finish();
    Ok(imported)
}

fn count(rows: &mut Vec<(&'static str, u64)>, section: &'static str) {
    match rows.iter_mut().find(|(name, _)| *name == section) {
        Some((_, n)) => *n += 1,
        None => rows.push((section, 1)),
    }
}

/// Refuses a workspace that holds anything an archive would bring.
async fn check_empty<B: Backend>(conn: &mut B::Db, ws: &str, name: &str) -> Result<()> {
    for table in [
        "pins",
        "pinboards",
        "datasets",
        "roles",
        "memberships",
        "hooks",
        "webhooks",
        "playlists",
    ] {
        let n = rows::count::<B>(conn, table, Some("workspace_id = $1"), Some(ws)).await?;
        if n > 0 {
            return Err(refuse(format!(
                "workspace `{name}` is not empty ({table} has {n} rows): import restores only into an empty workspace"
            )));
        }
    }
    Ok(())
}

/// Ids the archive brought so far, so that a row may only name what the archive holds
/// (a placement of another workspace's pin would cross workspaces).
#[derive(Default)]
struct Known {
    users: HashSet<String>,
    pins: HashSet<String>,
    boards: HashSet<String>,
    playlists: HashSet<String>,
}

impl Known {
    fn check(&mut self, section: &Section, cells: &[Cell]) -> Result<()> {
        let text = |name: &str| -> &str {
            section
                .columns
                .iter()
                .position(|c| c.name == name)
                .and_then(|i| match &cells[i] {
                    Cell::Text(Some(t)) => Some(t.as_str()),
                    _ => None,
                })
                .unwrap_or_default()
        };
        let own = match section.name {
            "users" => Some(&mut self.users),
            "pins" => Some(&mut self.pins),
            "pinboards" => Some(&mut self.boards),
            "playlists" => Some(&mut self.playlists),
            _ => None,
        };
        if let Some(own) = own {
            own.insert(text("id").to_owned());
            return Ok(());
        }
        let refs: &[(&HashSet<String>, &str)] = match section.name {
            "members" => &[(&self.users, "user_id")],
            "placements" => &[(&self.boards, "pinboard_id"), (&self.pins, "pin_id")],
            "collaborators" => &[(&self.boards, "pinboard_id"), (&self.users, "user_id")],
            "blocks" => &[(&self.pins, "pin_id")],
            "playlist_items" => &[
                (&self.playlists, "playlist_id"),
                (&self.boards, "pinboard_id"),
            ],
            // Of a pin or of a board: `item_id` is whichever it is (the table checks).
            "embed_origins" if text("pin_id").is_empty() => &[(&self.boards, "pinboard_id")],
            "embed_origins" => &[(&self.pins, "pin_id")],
            _ => &[],
        };
        for (set, column) in refs {
            let id = text(column);
            if !set.contains(id) {
                return Err(refuse(format!(
                    "{} names {column} `{id}`, which the archive does not hold",
                    section.name
                )));
            }
        }
        Ok(())
    }
}

/// Whether the archive's user must be written: a user with the same id and subject is the
/// same person, already known to the store (users belong to no one workspace).
async fn new_user<B: Backend>(conn: &mut B::Db, cells: &[Cell]) -> Result<bool> {
    let (Cell::Text(Some(id)), Cell::Text(Some(subject))) = (&cells[0], &cells[1]) else {
        return Ok(true);
    };
    let row = B::query("SELECT subject FROM users WHERE id = $1")
        .bind(id.as_str())
        .fetch_optional(conn)
        .await?;
    match row.map(|r| r.get::<String>(0)).transpose()? {
        None => Ok(true),
        Some(stored) if stored == *subject => Ok(false),
        Some(_) => Err(refuse(format!(
            "user `{id}` is already in this store as someone else"
        ))),
    }
}

/// Gives a restored hook a new token (and, when signed, a new secret): the archive holds
/// neither. Appends the cells the table needs beyond the section's columns.
fn restore_hook(cells: &mut Vec<Cell>, public_base: &str) -> RestoredHook {
    let text = |i: usize| match &cells[i] {
        Cell::Text(Some(t)) => t.clone(),
        _ => String::new(),
    };
    let (token, lookup, hash) = crate::hooks::HookToken::restored();
    let scheme = match &cells[5] {
        Cell::Text(scheme) => scheme.clone(),
        _ => None,
    };
    let secret = scheme.as_deref().map(crate::hooks::new_signature_secret);
    let restored = RestoredHook {
        id: text(0),
        name: text(1),
        url: token.url(public_base),
        secret: secret.clone(),
    };
    cells.push(Cell::Text(Some(lookup)));
    cells.push(Cell::Text(Some(hash)));
    cells.push(Cell::Text(secret));
    restored
}

/// Gives a restored webhook a new signing secret (the archive holds none) and its cursor
/// at `newest_event`: it sends what is logged after the import, not the old log.
fn restore_webhook(cells: &mut Vec<Cell>, newest_event: i64) -> RestoredWebhook {
    let text = |i: usize| match &cells[i] {
        Cell::Text(Some(t)) => t.clone(),
        _ => String::new(),
    };
    let secret = crate::hooks::new_standard_secret();
    let restored = RestoredWebhook {
        id: text(0),
        url: text(1),
        secret: secret.clone(),
    };
    cells.push(Cell::Text(Some(secret)));
    cells.push(Cell::Int(Some(newest_event)));
    restored
}

async fn write_batch<B: Backend>(
    conn: &mut B::Db,
    section: &Section,
    ws: &str,
    batch: &mut Vec<Vec<Cell>>,
) -> Result<()> {
    let mut columns: Vec<&str> = section.columns.iter().map(|c| c.name).collect();
    if section.name == "hooks" {
        columns.extend(["lookup", "token_hash", "signature_secret"]);
    }
    if section.name == "webhooks" {
        columns.extend(["secret", "cursor_seq"]);
    }
    if section.in_workspace {
        columns.push("workspace_id");
        for row in batch.iter_mut() {
            row.push(Cell::Text(Some(ws.to_owned())));
        }
    }
    rows::insert::<B>(conn, section.table, &columns, batch, false)
        .await
        .map_err(|e| {
            if is_unique_violation(&e) {
                refuse(format!(
                    "a row of {} in the archive is already in this store (an id, key or name taken); nothing was written",
                    section.name
                ))
            } else if matches!(&e, sqlx::Error::Database(db) if db.is_foreign_key_violation()) {
                refuse(format!(
                    "a row of {} names something the store does not hold; nothing was written",
                    section.name
                ))
            } else {
                e.into()
            }
        })?;
    batch.clear();
    Ok(())
}

/// A row of the archive as the cells of its section's columns: every column present,
/// of its kind, and nothing else.
fn cells_of(section: &Section, mut row: Map<String, Value>) -> Result<Vec<Cell>> {
    let mut cells = Vec::with_capacity(section.columns.len() + 4);
    for column in section.columns {
        let value = row.remove(column.name).unwrap_or(Value::Null);
        let cell = cell_of(column.kind, value).ok_or_else(|| {
            refuse(format!(
                "{}.{}: not {}",
                section.name,
                column.name,
                expected(column.kind)
            ))
        })?;
        cells.push(cell);
    }
    if let Some(extra) = row.keys().next() {
        return Err(refuse(format!("{}.{extra}: unknown field", section.name)));
    }
    Ok(cells)
}

fn cell_of(kind: Kind, value: Value) -> Option<Cell> {
    Some(match (kind, value) {
        (Text, Value::String(s)) => Cell::Text(Some(s)),
        (OptText | OptJson, Value::Null) => Cell::Text(None),
        (OptText, Value::String(s)) => Cell::Text(Some(s)),
        (Json, Value::Null) => return None,
        (Json | OptJson, value) => Cell::Text(Some(value.to_string())),
        (Int, Value::Number(n)) => Cell::Int(Some(n.as_i64()?)),
        (OptInt, Value::Null) => Cell::Int(None),
        (OptInt, Value::Number(n)) => Cell::Int(Some(n.as_i64()?)),
        (Bool, Value::Bool(b)) => Cell::Bool(b),
        (List, Value::Array(items)) => Cell::List(
            items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

fn expected(kind: Kind) -> &'static str {
    match kind {
        Text => "a string",
        OptText => "a string or null",
        Int => "an integer",
        OptInt => "an integer or null",
        Bool => "a boolean",
        List => "an array of strings",
        Json => "JSON",
        OptJson => "JSON or null",
    }
}

/// Reads the archive from `reader` as it comes, handing the writer its workspace and then
/// each row; stops early when the writer has gone.
fn parse(reader: impl std::io::Read, items: &mpsc::Sender<Item>) {
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(reader));
    let outcome =
        serde::de::DeserializeSeed::deserialize(Archive { items }, &mut de).and_then(|()| de.end());
    if let Err(e) = outcome {
        let _ = items.blocking_send(Item::Bad(format!(
            "not a corkboard archive of version {VERSION}: {e}"
        )));
    }
}

/// The archive's top-level object, visited member by member (see [`parse`]).
struct Archive<'a> {
    items: &'a mpsc::Sender<Item>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Archive<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Archive<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a corkboard archive (a JSON object)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        use serde::de::Error as _;
        let mut format = None;
        let mut version = None;
        let mut workspace = None;
        // The next section an archive may hold: they come in `SECTIONS`' order.
        let mut next = 0;
        while let Some(member) = map.next_key::<String>()? {
            match member.as_str() {
                "format" => format = Some(map.next_value::<String>()?),
                "version" => version = Some(map.next_value::<u64>()?),
                "workspace" => workspace = Some(map.next_value::<String>()?),
                "exported_at" => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                name => {
                    let Some(section) = SECTIONS.iter().position(|s| s.name == name) else {
                        return Err(A::Error::custom(format!("unknown member `{name}`")));
                    };
                    if section < next {
                        return Err(A::Error::custom(format!(
                            "section `{name}` out of order or repeated"
                        )));
                    }
                    if format.as_deref() != Some(FORMAT) || version != Some(VERSION) {
                        return Err(A::Error::custom(format!(
                            "`format` must be \"{FORMAT}\" and `version` {VERSION}, before any section (found {} and {})",
                            format.as_deref().unwrap_or("nothing"),
                            version.map_or("nothing".into(), |v| v.to_string()),
                        )));
                    }
                    if next == 0 {
                        let Some(name) = workspace.take() else {
                            return Err(A::Error::custom(
                                "`workspace` must come before any section",
                            ));
                        };
                        if self.items.blocking_send(Item::Workspace(name)).is_err() {
                            return Ok(());
                        }
                    }
                    next = section + 1;
                    let sent = map.next_value_seed(Rows {
                        section,
                        items: self.items,
                    })?;
                    if !sent {
                        return Ok(());
                    }
                }
            }
        }
        if format.as_deref() != Some(FORMAT) || version != Some(VERSION) {
            return Err(A::Error::custom(format!(
                "`format` must be \"{FORMAT}\" and `version` {VERSION}"
            )));
        }
        if next == 0 {
            let Some(name) = workspace.take() else {
                return Err(A::Error::custom("no `workspace`"));
            };
            let _ = self.items.blocking_send(Item::Workspace(name));
        }
        Ok(())
    }
}

/// One section's array, each row handed on as it is read. `false`: the writer has gone.
struct Rows<'a> {
    section: usize,
    items: &'a mpsc::Sender<Item>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Rows<'_> {
    type Value = bool;

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<bool, D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Rows<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while let Some(row) = seq.next_element::<Map<String, Value>>()? {
            if self
                .items
                .blocking_send(Item::Row(self.section, row))
                .is_err()
            {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
