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

use std::{collections::HashMap, mem, sync::Mutex};

use super::PinRecord;
use crate::store::{PinKey, Serialized};

/// Records per generation: at about 0.5 KB a record, at most ~10 MiB for both.
const GENERATION: usize = 10_000;

/// A rendered record, the JSON of [`super::PinRecord`].
pub type Record = Serialized<PinRecord>;

/// Values kept by pin id in two bounded generations (see the module's doc); what a value
/// stands for is checked by the caller's test on each find.
pub struct Generational<T> {
    generations: Mutex<Generations<T>>,
}

impl<T> Default for Generational<T> {
    fn default() -> Self {
        Generational {
            generations: Mutex::new(Generations {
                newer: HashMap::new(),
                older: HashMap::new(),
            }),
        }
    }
}

struct Generations<T> {
    newer: HashMap<String, T>,
    older: HashMap<String, T>,
}

impl<T> Generations<T> {
    fn keep(&mut self, id: String, kept: T) {
        if self.newer.len() >= GENERATION && !self.newer.contains_key(&id) {
            self.older = mem::take(&mut self.newer);
        }
        self.newer.insert(id, kept);
    }
}

impl<T: Clone> Generational<T> {
    /// The value kept for each id that `current` accepts (a value found in the older
    /// generation moves back to the newer one).
    pub fn find<'k>(
        &self,
        ids: impl IntoIterator<Item = &'k str>,
        current: impl Fn(usize, &T) -> bool,
    ) -> Vec<Option<T>> {
        let ids = ids.into_iter();
        let Ok(mut kept) = self.generations.lock() else {
            return ids.map(|_| None).collect();
        };
        ids.enumerate()
            .map(|(i, id)| {
                if let Some(found) = kept.newer.get(id) {
                    return current(i, found).then(|| found.clone());
                }
                let found = kept.older.remove(id).filter(|found| current(i, found))?;
                kept.keep(id.to_owned(), found.clone());
                Some(found)
            })
            .collect()
    }

    /// Keeps `value` for pin `id`.
    pub fn keep(&self, id: &str, value: T) {
        if let Ok(mut kept) = self.generations.lock() {
            kept.keep(id.to_owned(), value);
        }
    }
}

/// The list's records: the record of a pin's state, named by its version and `updated_at`.
#[derive(Default)]
pub struct RecordCache(Generational<Kept>);

#[derive(Clone)]
pub struct Kept {
    version: i64,
    updated_at: i64,
    record: Record,
}

impl RecordCache {
    /// The record of each key's state, where one is kept.
    pub fn find(&self, keys: &[PinKey]) -> Vec<Option<Record>> {
        self.0
            .find(keys.iter().map(|k| k.id.as_str()), |i, kept| {
                keys.get(i)
                    .is_some_and(|k| kept.version == k.version && kept.updated_at == k.updated_at)
            })
            .into_iter()
            .map(|kept| kept.map(|k| k.record))
            .collect()
    }

    /// Keeps `record` as the record of pin `id` at `version` and `updated_at`.
    pub fn keep(&self, id: &str, version: i64, updated_at: i64, record: Record) {
        self.0.keep(
            id,
            Kept {
                version,
                updated_at,
                record,
            },
        );
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
        Serialized::stored(serde_json::to_string(text).unwrap()).unwrap()
    }

    #[test]
    fn a_record_is_found_only_for_its_own_state() {
        let cache = RecordCache::default();
        cache.keep("p-1", 1, 10, record("one"));
        let found = cache.find(&[key("p-1", 1), key("p-1", 2), key("p-2", 1)]);
        assert_eq!(found[0].as_ref().map(|r| r.as_str()), Some("\"one\""));
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
        let kept = cache.0.generations.lock().unwrap();
        assert!(kept.newer.len() <= GENERATION && kept.older.len() <= GENERATION);
        assert!(
            !kept.older.contains_key("p-0"),
            "the oldest records are gone"
        );
    }
}
