//! Rendered pin records, kept by pin id and version for the lists.
//!
//! A dashboard polls the same page of pins again and again, and rendering its 200 records
//! (decoding the rows, RFC 3339 times, checking the stored JSON, serialising) cost more of
//! the machine than the database's part of the page. A list now reads only each pin's
//! position, id, version and `updated_at`, and renders only the pins whose state it hasn't
//! rendered yet. Every write of a pin gives it a new version, in the database, so a record
//! kept here is never served for another state, whichever replica wrote it: nothing needs
//! invalidating.
//!
//! Memory is bounded: records live in two generations of at most [`GENERATION`] each. When
//! the newer one is full it becomes the older one and the older one is dropped; a record
//! found in the older one moves back to the newer one. The pins that keep being listed stay.

use std::{
    collections::HashMap,
    mem,
    sync::{Arc, Mutex},
};

use serde_json::value::RawValue;

use crate::store::PinKey;

/// Records per generation: at about 0.5 KB a record, at most ~10 MiB for both.
const GENERATION: usize = 10_000;

/// A rendered record, the JSON of [`super::PinRecord`].
pub type Record = Arc<RawValue>;

#[derive(Default)]
pub struct RecordCache {
    generations: Mutex<Generations>,
}

#[derive(Default)]
struct Generations {
    newer: HashMap<String, Kept>,
    older: HashMap<String, Kept>,
}

struct Kept {
    version: i64,
    updated_at: i64,
    record: Record,
}

impl Kept {
    fn is(&self, key: &PinKey) -> bool {
        self.version == key.version && self.updated_at == key.updated_at
    }
}

impl Generations {
    fn keep(&mut self, id: String, kept: Kept) {
        if self.newer.len() >= GENERATION && !self.newer.contains_key(&id) {
            self.older = mem::take(&mut self.newer);
        }
        self.newer.insert(id, kept);
    }
}

impl RecordCache {
    /// The record of each key's state, where one is kept.
    pub fn find(&self, keys: &[PinKey]) -> Vec<Option<Record>> {
        let Ok(mut kept) = self.generations.lock() else {
            return vec![None; keys.len()];
        };
        keys.iter()
            .map(|key| {
                if let Some(found) = kept.newer.get(&key.id) {
                    return found.is(key).then(|| found.record.clone());
                }
                let found = kept.older.remove(&key.id).filter(|found| found.is(key))?;
                let record = found.record.clone();
                kept.keep(key.id.clone(), found);
                Some(record)
            })
            .collect()
    }

    /// Keeps `record` as the record of pin `id` at `version` and `updated_at`.
    pub fn keep(&self, id: &str, version: i64, updated_at: i64, record: Record) {
        if let Ok(mut kept) = self.generations.lock() {
            kept.keep(
                id.to_owned(),
                Kept {
                    version,
                    updated_at,
                    record,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str, version: i64) -> PinKey {
        PinKey {
            seq: 1,
            id: id.into(),
            version,
            updated_at: 10 * version,
        }
    }

    fn record(text: &str) -> Record {
        Arc::from(serde_json::value::to_raw_value(text).unwrap())
    }

    #[test]
    fn a_record_is_found_only_for_its_own_state() {
        let cache = RecordCache::default();
        cache.keep("p-1", 1, 10, record("one"));
        let found = cache.find(&[key("p-1", 1), key("p-1", 2), key("p-2", 1)]);
        assert_eq!(found[0].as_ref().map(|r| r.get()), Some("\"one\""));
        assert!(found[1].is_none(), "another version");
        assert!(found[2].is_none(), "another pin");
        let mut moved = key("p-1", 1);
        moved.updated_at = 11;
        assert!(cache.find(&[moved])[0].is_none(), "another updated_at");
    }

    #[test]
    fn memory_is_bounded_and_listed_records_stay() {
        let cache = RecordCache::default();
        cache.keep("listed", 1, 10, record("listed"));
        for i in 0..3 * GENERATION {
            cache.keep(&format!("p-{i}"), 1, 10, record("x"));
            if i % (GENERATION / 2) == 0 {
                assert!(cache.find(&[key("listed", 1)])[0].is_some(), "after {i}");
            }
        }
        let kept = cache.generations.lock().unwrap();
        assert!(kept.newer.len() <= GENERATION && kept.older.len() <= GENERATION);
        assert!(
            !kept.older.contains_key("p-0"),
            "the oldest records are gone"
        );
    }
}
