//! SQLite's many-pin reads come back as one JSON array of rows: sqlx-sqlite hands each row
//! of a result over from its worker thread, which cost twice the page.

use serde_json::value::RawValue;

use crate::store::Pin;
use crate::{error::Result, Error};

/// One pin of a many-pin read, which comes back as one JSON array of rows: [`PIN_COLUMNS`]
/// in order (flags as 0/1; config, tags and provenance as JSON, see [`PAGE_ROW`]). Decoding
/// it costs a fraction of what sqlx-sqlite spends on each row of a many-row result.
#[derive(serde::Deserialize)]
pub(super) struct PageRow<'a>(
    String,
    String,
    #[serde(borrow)] &'a RawValue,
    String,
    i64,
    i64,
    i64,
    i64,
    Option<String>,
    Vec<String>,
    #[serde(borrow)] Option<&'a RawValue>,
    i64,
    i64,
    i64,
    Option<String>,
    Option<i64>,
    i64,
    Option<String>,
    Option<String>,
);

/// A [`PageRow`] in SQL. The stored JSON columns go in as JSON (`json(...)`), not as
/// strings: escaping them as strings, and unescaping them here, cost more than the rest of
/// the page.
pub(super) const PAGE_ROW: &str =
    "json_array(id, pin_type, json(pin_config), pin_layout, is_public, \
     allow_edit, require_sign_in, allow_comments, title, json(tags), json(provenance), version, \
     created_at, updated_at, key, expected_every_secs, last_pushed_at, status_rules, status)";

impl PageRow<'_> {
    /// The pins of a page, in no particular order.
    pub(super) fn decode(page: &str) -> Result<Vec<Pin>> {
        let rows: Vec<PageRow> =
            serde_json::from_str(page).map_err(|e| Error::internal_in("stored page", e))?;
        Ok(rows.into_iter().map(PageRow::into_pin).collect())
    }

    fn into_pin(self) -> Pin {
        let PageRow(
            id,
            pin_type,
            pin_config,
            pin_layout,
            is_public,
            allow_edit,
            require_sign_in,
            allow_comments,
            title,
            tags,
            provenance,
            version,
            created_at,
            updated_at,
            key,
            expected_every_secs,
            last_pushed_at,
            status_rules,
            status,
        ) = self;
        Pin {
            id,
            pin_type,
            pin_config: pin_config.get().to_owned(),
            pin_layout,
            is_public: is_public != 0,
            allow_edit: allow_edit != 0,
            require_sign_in: require_sign_in != 0,
            allow_comments: allow_comments != 0,
            title,
            tags,
            provenance: provenance.map(|raw| raw.get().to_owned()),
            version,
            created_at,
            updated_at,
            key,
            expected_every_secs,
            last_pushed_at,
            status_rules,
            status,
        }
    }
}
