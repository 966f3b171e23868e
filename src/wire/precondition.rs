//! `If-Match` preconditions of writes.

use crate::error::{Error, Result};

/// An `If-Match` precondition: the versions the client accepts (`None` = any).
#[derive(Debug, Clone, Default)]
pub struct Precondition(pub Option<Vec<i64>>);

impl Precondition {
    /// `If-Match`: `*`, or a list of `"<version>"` entity tags (weak ones compare too). A
    /// value that names no version can never match.
    pub fn parse(value: Option<&str>) -> Precondition {
        let Some(text) = value else {
            return Precondition(None);
        };
        if text.trim() == "*" {
            return Precondition(None);
        }
        let versions = text
            .split(',')
            .filter_map(|tag| {
                let tag = tag.trim();
                let tag = tag.strip_prefix("W/").unwrap_or(tag);
                tag.strip_prefix('"')?.strip_suffix('"')?.parse().ok()
            })
            .collect();
        Precondition(Some(versions))
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
