//! PostgreSQL's inserts of pins: one row, or many from arrays in one statement, with the
//! idempotency claim in the same statement when there is one.

use sqlx::PgConnection;

use super::PgStore;
use crate::store::pins::{bind_new_pin, INSERT_PIN};
use crate::store::{sql::Backend, Idempotent, Pin};

/// Pins from arrays, each with its workspace (`$1`); see [`insert_rows`].
macro_rules! insert_from_arrays {
    () => {
        concat!(
            insert_pins_into!(),
            " SELECT u.id, u.ws, u.pin_type, u.pin_config, u.pin_layout, u.is_public, u.title, \
             ARRAY(SELECT jsonb_array_elements_text(u.tags::jsonb)), u.provenance, u.version, \
             u.created_at, u.updated_at, u.key, u.expected_every_secs, u.last_pushed_at, u.stale_due_at, \
             u.status_rules, u.status, u.status_due \
             FROM UNNEST($1::text[], $2::text[], $3::text[], \
             $4::text[], $5::text[], $6::bool[], $7::text[], $8::text[], $9::text[], $10::int8[], \
             $11::int8[], $12::int8[], $13::text[], $14::int8[], $15::int8[], $16::int8[], \
             $17::text[], $18::text[], $19::int8[]) \
             AS u (ws, id, pin_type, pin_config, pin_layout, is_public, title, tags, provenance, \
             version, created_at, updated_at, key, expected_every_secs, last_pushed_at, stale_due_at, \
             status_rules, status, status_due)"
        )
    };
}
pub(crate) const INSERT_PINS: &str = insert_from_arrays!();
/// The same behind an idempotency claim: the pins are inserted only if the claim is taken
/// (no live claim holds the key).
const INSERT_CLAIMED_PINS: &str = concat!(
    "WITH claim AS (INSERT INTO idempotency_keys (workspace_id, key, request_hash, response, created_at) \
     SELECT $1[1], $20, $21, $22, $23 ON CONFLICT (workspace_id, key) DO UPDATE SET \
     request_hash = excluded.request_hash, response = excluded.response, created_at = excluded.created_at \
     WHERE idempotency_keys.created_at < $24 RETURNING 1) ",
    insert_from_arrays!(),
    " WHERE EXISTS (SELECT 1 FROM claim)"
);

/// Inserts `rows`, each into its workspace, in one statement: [`INSERT_PIN`] for one row,
/// else from arrays (one prepared statement whatever the count). With `claim`, the
/// idempotency claim (in the rows' workspace) is part of the same statement, and the rows
/// are inserted only if the claim is taken: both happen or neither. Returns the rows stored.
pub(super) async fn insert_rows(
    conn: &mut PgConnection,
    rows: &[(&str, &Pin)],
    claim: Option<&Idempotent>,
) -> Result<u64, sqlx::Error> {
    if let ([(ws, pin)], None) = (rows, claim) {
        return bind_new_pin(PgStore::query(INSERT_PIN), ws, pin)
            .execute(conn)
            .await;
    }
    let column = |f: fn(&Pin) -> String| rows.iter().map(|(_, p)| f(p)).collect::<Vec<_>>();
    let tags = rows
        .iter()
        .map(|(_, p)| serde_json::to_string(&p.tags).unwrap_or_else(|_| "[]".into()))
        .collect::<Vec<_>>();
    let sql = if claim.is_some() {
        INSERT_CLAIMED_PINS
    } else {
        INSERT_PINS
    };
    let mut query = sqlx::query(sql)
        .bind(rows.iter().map(|(ws, _)| *ws).collect::<Vec<_>>())
        .bind(column(|p| p.id.clone()))
        .bind(column(|p| p.pin_type.clone()))
        .bind(column(|p| p.pin_config.clone()))
        .bind(column(|p| p.pin_layout.clone()))
        .bind(rows.iter().map(|(_, p)| p.is_public).collect::<Vec<_>>())
        .bind(
            rows.iter()
                .map(|(_, p)| p.title.clone())
                .collect::<Vec<_>>(),
        )
        .bind(tags)
        .bind(
            rows.iter()
                .map(|(_, p)| p.provenance.clone())
                .collect::<Vec<_>>(),
        )
        .bind(rows.iter().map(|(_, p)| p.version).collect::<Vec<_>>())
        .bind(rows.iter().map(|(_, p)| p.created_at).collect::<Vec<_>>())
        .bind(rows.iter().map(|(_, p)| p.updated_at).collect::<Vec<_>>())
        .bind(rows.iter().map(|(_, p)| p.key.clone()).collect::<Vec<_>>())
        .bind(
            rows.iter()
                .map(|(_, p)| p.expected_every_secs)
                .collect::<Vec<_>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, p)| p.last_pushed_at)
                .collect::<Vec<_>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, p)| p.stale_due_at())
                .collect::<Vec<_>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, p)| p.status_rules.clone())
                .collect::<Vec<_>>(),
        )
        .bind(
            rows.iter()
                .map(|(_, p)| p.status.clone())
                .collect::<Vec<_>>(),
        )
        .bind(rows.iter().map(|(_, p)| p.status_due()).collect::<Vec<_>>());
    if let Some(claim) = claim {
        query = query
            .bind(&claim.key)
            .bind(&claim.request_hash)
            .bind(&claim.response)
            .bind(claim.created_at)
            .bind(claim.live_since);
    }
    Ok(query.execute(conn).await?.rows_affected())
}
