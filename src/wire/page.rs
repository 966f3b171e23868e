//! Keyset pages: the `limit` and `cursor` of a list, the opaque cursors, and [`Page`], a
//! list's answer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Query of the lists without filters: `GET /pinboards`, `GET /pins/{id}/versions`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct PageParams {
    /// Page size, 1 to 200 (default 50).
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = PAGE_MAX))]
    pub limit: Option<String>,
    /// `pagination.next_cursor` of the previous page.
    #[serde(default)]
    #[schemars(with = "String", regex(pattern = CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

impl PageParams {
    /// The page size, and the position the page starts after.
    pub fn window(&self) -> Result<(i64, Option<i64>)> {
        window(self.limit.as_deref(), self.cursor.as_deref())
    }
}

/// A list's `limit` and `cursor`: the page size, and the position the page starts after.
pub fn window(limit: Option<&str>, cursor: Option<&str>) -> Result<(i64, Option<i64>)> {
    Ok((page_limit(limit)?, cursor.map(decode_cursor).transpose()?))
}

/// `pagination` of a list response.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Pagination {
    pub next_cursor: Option<String>,
    pub has_more: bool,
}

/// One page of a list: its items and where the next page starts. On the API `data` and
/// `pagination` stand side by side in the envelope; MCP gives them as one object.
#[derive(Debug, Serialize)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub pagination: Pagination,
}

impl<T> Page<T> {
    /// The page of `rows`, read with one row more than `limit` to learn whether more follow;
    /// `position` is what a row's cursor names.
    pub fn of(mut rows: Vec<T>, limit: i64, position: impl Fn(&T) -> i64) -> Page<T> {
        let has_more = rows.len() as i64 > limit;
        rows.truncate(usize::try_from(limit).unwrap_or(0));
        let next_cursor = has_more
            .then(|| rows.last().map(|r| encode_cursor(position(r))))
            .flatten();
        Page {
            data: rows,
            pagination: Pagination {
                next_cursor,
                has_more,
            },
        }
    }

    /// The same page with each item mapped.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            data: self.data.into_iter().map(f).collect(),
            pagination: self.pagination,
        }
    }

    /// The same page with each item mapped by a function that may fail.
    pub fn try_map<U>(self, f: impl FnMut(T) -> Result<U>) -> Result<Page<U>> {
        Ok(Page {
            data: self.data.into_iter().map(f).collect::<Result<_>>()?,
            pagination: self.pagination,
        })
    }
}

/// Largest page of a list.
pub const PAGE_MAX: i64 = 200;
/// Page size of a list without `limit`.
const PAGE_DEFAULT: i64 = 50;

fn page_limit(limit: Option<&str>) -> Result<i64> {
    match limit {
        None => Ok(PAGE_DEFAULT),
        Some(text) => text
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=PAGE_MAX).contains(n))
            .ok_or_else(|| Error::validation("limit", format!("an integer from 1 to {PAGE_MAX}"))),
    }
}

/// Most digits of a cursor's position (so it always fits an i64).
const CURSOR_DIGITS: usize = 18;

/// Every cursor [`decode_cursor`] accepts, and no other: `c1.` and 1 to 18 digits, in
/// URL-safe base64 without padding. `c1.` is `YzEu`; each 3 digits are 4 characters (the
/// first digit gives `M`/`N`/`O`, ...), a last 1 or 2 digits 2 or 3 characters.
pub const CURSOR_PATTERN: &str = concat!(
    "^YzEu(?:",
    "(?:(?:[MN][DTjz]|O[DT])[AEIMQUYcgk][w-z0-5]){1,6}",
    "|(?:(?:[MN][DTjz]|O[DT])[AEIMQUYcgk][w-z0-5]){0,5}",
    "(?:[MN][AQgw]|O[AQ]|(?:[MN][DTjz]|O[DT])[AEIMQUYcgk])",
    ")$"
);

/// Cursors are opaque to clients: `c1.<position>` in URL-safe base64.
fn encode_cursor(position: i64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("c1.{position}"))
}

fn decode_cursor(cursor: &str) -> Result<i64> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| {
            let digits = text.strip_prefix("c1.")?;
            let ok = (1..=CURSOR_DIGITS).contains(&digits.len())
                && digits.bytes().all(|b| b.is_ascii_digit());
            digits.parse().ok().filter(|_| ok)
        })
        .ok_or_else(|| Error::validation("cursor", "a cursor returned by a previous page"))
}
