//! `corkboard migrate-store --from URL --to URL`: every table of one store copied into an
//! empty other, SQLite or PostgreSQL either side, a page at a time, in one transaction of
//! the target; then the rows of each table counted on both sides.

use super::rows::{self, col, Col, Kind::*, Source};
use super::{Dialect, Progress};
use crate::error::{Error, Result};
use crate::store::sql::{Backend, Record};
use crate::store::Store;

/// A table and all its columns, in an order that satisfies the foreign keys.
struct Table {
    name: &'static str,
    /// Columns that order its rows uniquely (the keyset of its pages).
    key: &'static [Col],
    columns: &'static [Col],
    /// Has an identity `seq` (PostgreSQL wants `OVERRIDING SYSTEM VALUE` and its sequence
    /// moved past the copied values).
    identity: bool,
}

const ID: &[Col] = &[col("id", Text)];
/// The events' key. Tables with both a `seq` and an `id` go by `id`, their primary key on
/// PostgreSQL, where `seq` is indexed only after the workspace: pages by `seq` across
/// workspaces sorted the whole table for each page (bench/README.md, "Moving a store").
const SEQ: &[Col] = &[col("seq", Int)];

/// Every table of the schema but `rate_limit_windows` (PostgreSQL's counters of the
/// current minute and hour: state of the running replicas, not of the data), in the order
/// the foreign keys ask for.
const TABLES: &[Table] = &[
    Table {
        name: "workspaces",
        key: ID,
        columns: &[col("id", Text), col("name", Text), col("created_at", Int)],
        identity: false,
    },
    Table {
        name: "users",
        key: ID,
        columns: &[
            col("id", Text),
            col("subject", Text),
            col("email", OptText),
            col("created_at", Int),
            col("name", OptText),
            col("password_hash", OptText),
        ],
        identity: false,
    },
    Table {
        name: "api_keys",
        key: ID,
        columns: &[
            col("id", Text),
            col("workspace_id", Text),
            col("name", Text),
            col("lookup", Text),
            col("secret_hash", Text),
            col("scopes", Text),
            col("tier", Text),
            col("created_at", Int),
            col("last_used_at", OptInt),
            col("revoked_at", OptInt),
            col("expires_at", OptInt),
            col("created_by", OptText),
        ],
        identity: false,
    },
    Table {
        name: "memberships",
        key: &[col("workspace_id", Text), col("user_id", Text)],
        columns: &[
            col("workspace_id", Text),
            col("user_id", Text),
            col("role", Text),
            col("created_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "roles",
        key: &[col("workspace_id", Text), col("name", Text)],
        columns: &[
            col("workspace_id", Text),
            col("name", Text),
            col("scopes", Text),
            col("created_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "pins",
        key: ID,
        columns: &[
            col("seq", Int),
            col("id", Text),
            col("workspace_id", Text),
            col("pin_type", Text),
            col("pin_config", Text),
            col("pin_layout", Text),
            col("is_public", Bool),
            col("allow_edit", Bool),
            col("require_sign_in", Bool),
            col("allow_comments", Bool),
            col("title", OptText),
            col("tags", List),
            col("provenance", OptText),
            col("key", OptText),
            col("version", Int),
            col("created_at", Int),
            col("updated_at", Int),
            col("expected_every_secs", OptInt),
            col("last_pushed_at", Int),
            col("stale_due_at", OptInt),
            col("status_rules", OptText),
            col("status", OptText),
            col("status_due", OptInt),
        ],
        identity: true,
    },
    Table {
        name: "pin_versions",
        key: &[col("pin_id", Text), col("version", Int)],
        columns: &[
            col("pin_id", Text),
            col("version", Int),
            col("pin_type", Text),
            col("pin_config", Text),
            col("pin_layout", Text),
            col("is_public", Bool),
            col("allow_edit", Bool),
            col("require_sign_in", Bool),
            col("allow_comments", Bool),
            col("title", OptText),
            col("tags", List),
            col("provenance", OptText),
            col("key", OptText),
            col("created_at", Int),
            col("updated_at", Int),
            col("expected_every_secs", OptInt),
            col("last_pushed_at", Int),
            col("status_rules", OptText),
            col("status", OptText),
        ],
        identity: false,
    },
    Table {
        name: "pinboards",
        key: ID,
        columns: &[
            col("seq", Int),
            col("id", Text),
            col("workspace_id", Text),
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
        identity: true,
    },
    Table {
        name: "placements",
        key: &[col("pinboard_id", Text), col("pin_id", Text)],
        columns: &[
            col("pinboard_id", Text),
            col("pin_id", Text),
            col("x", Int),
            col("y", Int),
            col("w", Int),
            col("h", Int),
        ],
        identity: false,
    },
    Table {
        name: "collaborators",
        key: &[col("pinboard_id", Text), col("user_id", Text)],
        columns: &[
            col("pinboard_id", Text),
            col("user_id", Text),
            col("role", Text),
            col("added_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "datasets",
        key: ID,
        columns: &[
            col("seq", Int),
            col("id", Text),
            col("workspace_id", Text),
            col("name", Text),
            col("format", Text),
            col("data", Text),
            col("description", OptText),
            col("version", Int),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        identity: true,
    },
    Table {
        name: "blocks",
        key: ID,
        columns: &[
            col("id", Text),
            col("pin_id", Text),
            col("block_type", Text),
            col("config", Text),
            col("position", Int),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "hooks",
        key: ID,
        columns: &[
            col("seq", Int),
            col("id", Text),
            col("workspace_id", Text),
            col("name", Text),
            col("dataset", Text),
            col("mode", Text),
            col("max_items", Int),
            col("lookup", Text),
            col("token_hash", Text),
            col("signature_scheme", OptText),
            col("signature_secret", OptText),
            col("created_at", Int),
        ],
        identity: true,
    },
    Table {
        name: "webhooks",
        key: ID,
        columns: &[
            col("seq", Int),
            col("id", Text),
            col("workspace_id", Text),
            col("url", Text),
            col("event_types", List),
            col("pinboard_id", OptText),
            col("pin_id", OptText),
            col("description", OptText),
            col("secret", Text),
            col("enabled", Bool),
            col("disabled_reason", OptText),
            col("cursor_seq", Int),
            col("attempts", Int),
            col("failing_since", OptInt),
            col("next_attempt_at", Int),
            col("lease_until", Int),
            col("leased_by", OptText),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        identity: true,
    },
    Table {
        name: "webhook_deliveries",
        key: SEQ,
        columns: &[
            col("seq", Int),
            col("webhook_id", Text),
            col("event_id", Int),
            col("event_type", Text),
            col("status_code", OptInt),
            col("duration_ms", Int),
            col("error", OptText),
            col("at", Int),
        ],
        identity: true,
    },
    Table {
        name: "events",
        key: SEQ,
        columns: &[
            col("seq", Int),
            col("workspace_id", Text),
            col("event", Text),
            col("resource_id", Text),
            col("version", OptInt),
            col("boards", List),
            col("at", Int),
            col("data", Text),
        ],
        identity: true,
    },
    Table {
        name: "idempotency_keys",
        key: &[col("workspace_id", Text), col("key", Text)],
        columns: &[
            col("workspace_id", Text),
            col("key", Text),
            col("request_hash", Text),
            col("response", Text),
            col("created_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "web_sessions",
        key: &[col("id_hash", Text)],
        columns: &[
            col("id_hash", Text),
            col("subject", Text),
            col("workspace", Text),
            col("created_at", Int),
            col("expires_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "setup_tokens",
        key: &[col("token_hash", Text)],
        columns: &[
            col("token_hash", Text),
            col("created_at", Int),
            col("expires_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "invitations",
        key: ID,
        columns: &[
            col("id", Text),
            col("workspace_id", Text),
            col("email", Text),
            col("role", Text),
            col("token_hash", Text),
            col("invited_by", OptText),
            col("created_at", Int),
            col("expires_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "pending_collaborators",
        key: &[col("pinboard_id", Text), col("email", Text)],
        columns: &[
            col("pinboard_id", Text),
            col("email", Text),
            col("role", Text),
            col("added_at", Int),
        ],
        identity: false,
    },
    Table {
        name: "playlists",
        key: ID,
        columns: &[
            col("seq", Int),
            col("id", Text),
            col("workspace_id", Text),
            col("name", Text),
            col("created_at", Int),
            col("updated_at", Int),
        ],
        identity: true,
    },
    Table {
        name: "playlist_items",
        key: &[col("playlist_id", Text), col("position", Int)],
        columns: &[
            col("playlist_id", Text),
            col("position", Int),
            col("pinboard_id", Text),
            col("seconds", Int),
        ],
        identity: false,
    },
    Table {
        name: "embed_origins",
        key: &[col("item_id", Text)],
        columns: &[
            col("item_id", Text),
            col("workspace_id", Text),
            col("pin_id", OptText),
            col("pinboard_id", OptText),
            col("origins", List),
        ],
        identity: false,
    },
    Table {
        name: "meta",
        key: &[col("key", Text)],
        columns: &[col("key", Text), col("value", Text)],
        identity: false,
    },
];

/// Tables of the schema a copy leaves out on purpose (see [`TABLES`]).
const LEFT_OUT: &[&str] = &["rate_limit_windows", "auth_changes"];

/// Rows read and written a statement at a time.
const PAGE: usize = 1000;

/// One table's rows on each side after the copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub table: &'static str,
    pub source: i64,
    pub target: i64,
}

/// Copies every table of the store at `from` into the empty store at `to` (its migrations
/// applied first) and returns the rows of each table on both sides, which are equal: any
/// difference, a non-empty target or a table this version doesn't know rolls the copy back
/// and is an error.
pub async fn migrate_store(from: &str, to: &str, progress: &Progress) -> Result<Vec<Counted>> {
    let render = crate::events::Records::shared("http://127.0.0.1");
    let source = Store::open(from, 2, render.clone()).await?;
    let target = Store::open(to, 2, render).await?;
    let result = match (&source, &target) {
        (Store::Sqlite(s), Store::Sqlite(t)) => {
            copy(s, Dialect::Sqlite, t, Dialect::Sqlite, progress).await
        }
        (Store::Sqlite(s), Store::Postgres(t)) => {
            copy(s, Dialect::Sqlite, t, Dialect::Postgres, progress).await
        }
        (Store::Postgres(s), Store::Sqlite(t)) => {
            copy(s, Dialect::Postgres, t, Dialect::Sqlite, progress).await
        }
        (Store::Postgres(s), Store::Postgres(t)) => {
            copy(s, Dialect::Postgres, t, Dialect::Postgres, progress).await
        }
    };
    source.close().await;
    target.close().await;
    result
}

async fn copy<S: Backend, T: Backend>(
    source: &S,
    from: Dialect,
    target: &T,
    to: Dialect,
    progress: &Progress,
) -> Result<Vec<Counted>> {
    let mut reader = source.reader().await?;
    let mut read = sqlx::Connection::begin(&mut *reader).await?;
    from.snapshot::<S>(&mut read).await?;
    check_tables::<S>(&mut read, from).await?;
    let mut writer = target.writer().await?;
    let mut write = sqlx::Connection::begin_with(&mut *writer, to.begin_write()).await?;
    check_tables::<T>(&mut write, to).await?;
    let mut total = 0;
    for table in TABLES {
        // `meta` gets a row from the target's own start (its share-token key), which the
        // source's replaces: share links must keep their meaning.
        if table.name != "meta" && rows::count::<T>(&mut write, table.name, None, None).await? > 0 {
            return Err(Error::Conflict(format!(
                "the target store is not empty (table {} has rows); migrate-store copies only into an empty store",
                table.name
            )));
        }
        total += rows::count::<S>(&mut read, table.name, None, None).await?;
    }
    to.patient::<T>(&mut write).await?;
    progress.start(total);
    let mut counted = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let from_table = format!("{} t", table.name);
        let source_rows = Source {
            from: &from_table,
            filter: None,
            key: table.key,
            columns: table.columns,
        };
        let names: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
        if table.name == "meta" {
            T::query("DELETE FROM meta").execute(&mut write).await?;
        }
        let mut after = None;
        loop {
            let page = source_rows
                .page::<S>(&mut read, None, after.as_deref(), PAGE)
                .await?;
            let data: Vec<_> = page
                .rows
                .into_iter()
                .map(|mut row| row.split_off(table.key.len()))
                .collect();
            let overriding = table.identity && to == Dialect::Postgres;
            rows::insert::<T>(&mut write, table.name, &names, &data, overriding).await?;
            progress.advance(data.len());
            match page.after {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        if table.identity {
            to.after_identity_copy::<T>(&mut write, table.name).await?;
        }
        counted.push(Counted {
            table: table.name,
            source: rows::count::<S>(&mut read, table.name, None, None).await?,
            target: rows::count::<T>(&mut write, table.name, None, None).await?,
        });
    }
    if let Some(off) = counted.iter().find(|c| c.source != c.target) {
        return Err(Error::internal(format!(
            "table {} has {} rows in the source but {} in the target; nothing was written",
            off.table, off.source, off.target
        )));
    }
    let committed = write.commit().await;
    target.auth().changed();
    committed?;
    read.rollback().await?;
    progress.finish();
    Ok(counted)
}

/// Refuses a store with a table this version doesn't copy (one a newer version added):
/// a copy must not leave data behind silently.
async fn check_tables<B: Backend>(conn: &mut B::Db, dialect: Dialect) -> Result<()> {
    for row in B::query(dialect.list_tables()).fetch_all(conn).await? {
        let name: String = row.get(0)?;
        let known = TABLES.iter().any(|t| t.name == name) || LEFT_OUT.contains(&name.as_str());
        if !known {
            return Err(Error::Conflict(format!(
                "table {name} is unknown to this version of corkboard; use the version that made the store"
            )));
        }
    }
    Ok(())
}
