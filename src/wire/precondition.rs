//! `If-Match` preconditions of writes.

use crate::error::{Error, Result};

/// An `If-Match` precondition: the versions the client accepts (`None` = any).
#[derive(Debug, Clone, Default)]
pub struct Precondition(pub Option<Vec<i64>>);

impl Precondition {
    /// `If-Match`: `*`, or a list of `"<version>"` entity tags (weak ones compare too); an
    /// empty value is an empty list (RFC 9110 `#entity-tag`), which asks for nothing.
    /// Anything else is malformed: 400 `VALIDATION_FAILED` at `If-Match` (a stale version
    /// is the 412 of [`Precondition::check_version`]).
    pub fn parse(value: Option<&str>) -> Result<Precondition> {
        let Some(text) = value else {
            return Ok(Precondition(None));
        };
        if matches!(text.trim(), "*" | "") {
            return Ok(Precondition(None));
        }
        let versions = text
            .split(',')
            .map(|tag| {
                let tag = tag.trim();
                let tag = tag.strip_prefix("W/").unwrap_or(tag);
                tag.strip_prefix('"')?
                    .strip_suffix('"')
                    .filter(|digits| (1..=18).contains(&digits.len()))
                    .filter(|digits| digits.bytes().all(|b| b.is_ascii_digit()))?
                    .parse()
                    .ok()
            })
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(Precondition::malformed)?;
        Ok(Precondition(Some(versions)))
    }

    /// The 400 of an `If-Match` that is no list of entity tags.
    pub fn malformed() -> Error {
        Error::validation(
            "If-Match",
            "`*` or a list of `\"<version>\"` entity tags (the ETag of a read, e.g. `\"3\"`)",
        )
    }

    /// 412 `PRECONDITION_FAILED` unless the client accepts version `current`.
    pub fn check_version(&self, current: i64) -> Result<()> {
        match &self.0 {
            Some(versions) if !versions.contains(&current) => {
                Err(Error::PreconditionFailed { current })
            }
            _ => Ok(()),
        }
    }
}
