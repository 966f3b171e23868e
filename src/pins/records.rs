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
//! Memory is bounded in bytes (`render.cache_bytes`, shared by this cache and the rendered
//! one of [`super::rendered`]): records live in two generations of at most a quarter of it
//! each. When the newer one is full it becomes the older one and the older one is dropped;
//! a record found in the older one moves back to the newer one. The pins that keep being
//! listed stay. A record larger than a generation is not kept.

use std::{collections::HashMap, mem, sync::Mutex};

use super::PinRecord;
use crate::store::{PinKey, Serialized};

/// A rendered record, the JSON of [`super::PinRecord`].
pub type Record = Serialized<PinRecord>;

/// What a kept value costs: its bytes, as far as they can grow with input.
pub trait Weight {
    fn bytes(&self) -> usize;
}

/// Values kept by pin id in two generations bounded in bytes (see the module's doc); what a
/// value stands for is checked by the caller's test on each find.
pub struct Generational<T> {
    /// Bytes one generation may hold.
    generation_bytes: usize,
    generations: Mutex<Generations<T>>,
}

impl<T> Generational<T> {
    /// A cache holding at most `bytes` in all (two generations of half each).
    pub fn new(bytes: usize) -> Self {
        Generational {
            generation_bytes: bytes / 2,
            generations: Mutex::new(Generations {
                newer: HashMap::new(),
                newer_bytes: 0,
                older: HashMap::new(),
            }),
        }
    }
}

struct Generations<T> {
    newer: HashMap<String, T>,
    /// What `newer` holds, by [`Weight::bytes`] plus the ids.
    newer_bytes: usize,
    older: HashMap<String, T>,
}

impl<T: Weight> Generations<T> {
    fn keep(&mut self, id: String, kept: T, limit: usize) {
        let cost = id.len() + kept.bytes();
        if cost > limit {
            return;
        }
        self.forget(&id);
        if self.newer_bytes + cost > limit {
            self.older = mem::take(&mut self.newer);
            self.newer_bytes = 0;
        }
        self.newer_bytes += cost;
        self.newer.insert(id, kept);
    }

    /// Drops what is kept for `id`, in either generation.
    fn forget(&mut self, id: &str) {
        if let Some(old) = self.newer.remove(id) {
            self.newer_bytes -= id.len() + old.bytes();
        }
        self.older.remove(id);
    }
}

impl<T: Clone + Weight> Generational<T> {
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
                kept.keep(id.to_owned(), found.clone(), self.generation_bytes);
                Some(found)
            })
            .collect()
    }

    /// Keeps `value` for pin `id`.
    pub fn keep(&self, id: &str, value: T) {
        if let Ok(mut kept) = self.generations.lock() {
            kept.keep(id.to_owned(), value, self.generation_bytes);
        }
    }

    /// Drops what is kept for each of `ids`.
    pub fn forget<'k>(&self, ids: impl IntoIterator<Item = &'k str>) {
        if let Ok(mut kept) = self.generations.lock() {
            for id in ids {
                kept.forget(id);
            }
        }
    }
}

/// The list's records: the record of a pin's state, named by its version and `updated_at`.
pub struct RecordCache(Generational<Kept>);

#[derive(Clone)]
pub struct Kept {
    version: i64,
    updated_at: i64,
    /// `last_pushed_at` and `stale` as the record says them.
    freshness: (i64, bool),
    record: Record,
}

impl Weight for Kept {
    fn bytes(&self) -> usize {
        self.record.as_str().len()
    }
}

impl RecordCache {
    /// A cache of at most `bytes` of records.
    pub fn new(bytes: usize) -> Self {
        RecordCache(Generational::new(bytes))
    }

    /// The record of each key's state, where one is kept that says the same of freshness
    /// at `now`.
    pub fn find(&self, keys: &[PinKey], now: i64) -> Vec<Option<Record>> {
        self.0
            .find(keys.iter().map(|k| k.id.as_str()), |i, kept| {
                keys.get(i).is_some_and(|k| {
                    kept.version == k.version
                        && kept.updated_at == k.updated_at
                        && kept.freshness == k.freshness(now)
                })
            })
            .into_iter()
            .map(|kept| kept.map(|k| k.record))
            .collect()
    }

    /// Keeps `record` as the record of pin `id` at `version` and `updated_at`, saying
    /// `freshness` (`last_pushed_at`, `stale`).
    pub fn keep(
        &self,
        id: &str,
        (version, updated_at): (i64, i64),
        freshness: (i64, bool),
        record: Record,
    ) {
        self.0.keep(
            id,
            Kept {
                version,
                updated_at,
                freshness,
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
            last_pushed_at: 10 * version,
            expected_every_secs: None,
        }
    }

    fn record(text: &str) -> Record {
        Serialized::stored(serde_json::to_string(text).unwrap()).unwrap()
    }

    #[test]
    fn a_record_is_found_only_for_its_own_state() {
        let cache = RecordCache::new(1 << 20);
        cache.keep("p-1", (1, 10), (10, false), record("one"));
        let found = cache.find(&[key("p-1", 1), key("p-1", 2), key("p-2", 1)], 0);
        assert_eq!(found[0].as_ref().map(|r| r.as_str()), Some("\"one\""));
        assert!(found[1].is_none(), "another version");
        assert!(found[2].is_none(), "another pin");
        let mut moved = key("p-1", 1);
        moved.updated_at = 11;
        assert!(cache.find(&[moved], 0)[0].is_none(), "another updated_at");
    }

    #[test]
    fn memory_is_bounded_in_bytes_and_listed_records_stay() {
        // Two generations of 10,000 bytes: about 500 of these 20-byte entries each.
        let cache = RecordCache::new(20_000);
        cache.keep("listed", (1, 10), (10, false), record("listed"));
        for i in 0..3_000 {
            cache.keep(
                &format!("p-{i:05}"),
                (1, 10),
                (10, false),
                record("xxxxxxxxx"),
            );
            if i % 100 == 0 {
                assert!(cache.find(&[key("listed", 1)], 0)[0].is_some(), "after {i}");
            }
        }
        let kept = cache.0.generations.lock().unwrap();
        let bytes = |generation: &HashMap<String, Kept>| -> usize {
            generation.iter().map(|(id, k)| id.len() + k.bytes()).sum()
        };
        assert!(bytes(&kept.newer) <= 10_000 && bytes(&kept.older) <= 10_000);
        assert_eq!(bytes(&kept.newer), kept.newer_bytes);
        // 18-byte entries: a full generation holds over 500 (the bound is bytes, not a count).
        assert!(
            kept.newer.len() + kept.older.len() > 500,
            "the budget is used"
        );
        assert!(
            !kept.older.contains_key("p-00000"),
            "the oldest records are gone"
        );
    }

    #[test]
    fn a_record_larger_than_a_generation_is_not_kept() {
        let cache = RecordCache::new(200);
        cache.keep("big", (1, 10), (10, false), record(&"x".repeat(150)));
        assert!(cache.find(&[key("big", 1)], 0)[0].is_none());
    }
}
