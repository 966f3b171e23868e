//! The state of each pin this replica last wrote, by id: what the pin's next single-pin
//! update decides from, instead of reading it first.
//!
//! An update is decided from a read of the pin and stored by a compare-and-set on the
//! version read ([`crate::store::group_commit`]). The read is a round trip to the database
//! on the request's path, for a state this replica usually has already: automations rewrite
//! the same pins again and again (SPEC.md 8.4), and the last write of a pin was most often
//! this replica's. A pin's state at a version never changes (every write of a pin gives it a
//! new version, which the record caches rely on too), so the kept state is the stored one
//! as long as the version is; the one exception, `last_pushed_at` moved by a push that
//! changed nothing, is set anew by every update, and the replaced state is saved as a past
//! version from the row, not from this copy. When another replica (or a write this one did
//! not keep: a batch, a block, the status sweep) has moved the pin on, the compare-and-set
//! answers "moved" and the update is decided again from a read, so a stale copy costs a
//! turn of the group commit, never a wrong write; an error is only ever decided from a read.
//! A pin another writer moved on is read first for [`MISSED_FOR_MS`], so replicas taking
//! turns on one pin don't each pay that turn on every update. This replica's own writes of
//! one pin take turns ([`KnownPins::turn`]), so each decides from the state the one before
//! it kept.
//!
//! Memory is bounded in bytes, by the same two generations as the record caches
//! ([`super::records::Generational`]).

use std::{
    collections::HashMap,
    future::Future,
    mem::size_of,
    sync::{Arc, Mutex},
};

use tokio::sync::OwnedMutexGuard;

use super::records::{Generational, Weight};
use crate::store::Pin;

/// How long a pin whose kept state turned out stale is read before each update.
pub const MISSED_FOR_MS: i64 = 60_000;

/// The last state written of each pin, by id (see the module's doc).
pub struct KnownPins {
    kept: Generational<Known>,
    /// The single-pin writes of each pin this replica is making or waiting to make (at most
    /// one entry per request in flight).
    writing: Mutex<HashMap<String, Writes>>,
}

/// This replica's single-pin writes of one pin.
#[derive(Default)]
struct Writes {
    /// How many are under way (see [`KnownPins::moved_by_another`]).
    under_way: usize,
    /// How many guards name the pin, waiting for their turn or holding one: the entry goes
    /// with the last.
    guards: usize,
    /// Taken by each write that decides from the kept state ([`KnownPins::turn`]).
    turn: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Clone)]
enum Known {
    /// The pin as this replica last wrote it, in workspace `ws`.
    Written { ws: String, pin: Box<Pin> },
    /// Another writer moved the pin on; read it before each update until `until` (ms).
    Missed { until: i64 },
    /// Under [`key_entry`]: the pin last written with that key.
    Keyed { id: String },
}

/// Where the pin of a key is found: no pin id holds a NUL.
fn key_entry(ws: &str, key: &str) -> String {
    format!("\0{ws}\0{key}")
}

impl Weight for Known {
    fn bytes(&self) -> usize {
        size_of::<Known>()
            + match self {
                Known::Written { ws, pin } => {
                    let texts = [
                        Some(&pin.pin_type),
                        Some(&pin.pin_config),
                        Some(&pin.pin_layout),
                        pin.title.as_ref(),
                        pin.provenance.as_ref(),
                        pin.key.as_ref(),
                        pin.status_rules.as_ref(),
                        pin.status.as_ref(),
                    ];
                    size_of::<Pin>()
                        + ws.len()
                        + pin.id.len()
                        + texts.into_iter().flatten().map(String::len).sum::<usize>()
                        + pin
                            .tags
                            .iter()
                            .map(|t| t.len() + size_of::<String>())
                            .sum::<usize>()
                }
                Known::Missed { .. } => 0,
                Known::Keyed { id } => id.len(),
            }
    }
}

impl KnownPins {
    /// At most `bytes` of pins.
    pub fn new(bytes: usize) -> Self {
        KnownPins {
            kept: Generational::new(bytes),
            writing: Mutex::default(),
        }
    }

    /// Counts a write of pin `id` by this replica until the guard is dropped.
    pub fn writing(&self, id: &str) -> Writing<'_> {
        let (mut guard, _) = self.guard(id);
        guard.count();
        guard
    }

    /// Waits until no other write of pin `id` by this replica that took its turn is under
    /// way, then counts this one ([`KnownPins::writing`]) until the guard is dropped. A
    /// write that then decides from the kept state decides from the one its forerunner
    /// kept: without the wait, two updates of one pin a moment apart both decided from the
    /// same version, and the later was answered "moved" by the group commit and decided
    /// again from a read (the most common "moved" of a busy feed, on one replica).
    pub async fn turn(&self, id: &str) -> Writing<'_> {
        let (mut guard, turn) = self.guard(id);
        if let Some(turn) = turn {
            guard.held = Some(turn.lock_owned().await);
        }
        guard.count();
        guard
    }

    /// A guard naming pin `id`, not yet counted, and the pin's turn to take.
    fn guard(&self, id: &str) -> (Writing<'_>, Option<Arc<tokio::sync::Mutex<()>>>) {
        let turn = self.writing.lock().ok().map(|mut writing| {
            let writes = writing.entry(id.to_owned()).or_default();
            writes.guards += 1;
            writes.turn.clone()
        });
        let guard = Writing {
            known: self,
            id: id.to_owned(),
            counted: false,
            held: None,
        };
        (guard, turn)
    }

    /// After an update decided from the kept state was moved and the pin read again:
    /// whether another writer than this replica moved it on. Not when the read finds the
    /// state kept (an update of this replica came first and has kept its state) or one before
    /// it (another update of this replica committed after the read), nor while another write
    /// of the pin by this replica is under way (it may be the one that came first, not kept
    /// yet). Counting the read of an older state too marked a pin read-first for a minute
    /// whenever two updates of this replica crossed, with no other writer at all.
    pub fn moved_by_another(&self, ws: &str, read: &Pin) -> bool {
        let others_writing = self.writing.lock().map_or(true, |writing| {
            writing.get(&read.id).is_some_and(|w| w.under_way > 1)
        });
        !others_writing
            && self
                .find(ws, &read.id)
                .is_none_or(|kept| kept.version < read.version)
    }

    /// The state of pin `id` of workspace `ws` as this replica last wrote it, unless another
    /// writer has since been seen to move it on.
    pub fn find(&self, ws: &str, id: &str) -> Option<Pin> {
        let found = self.kept.find([id], |_, known| match known {
            Known::Written { ws: kept_in, .. } => kept_in == ws,
            Known::Missed { .. } | Known::Keyed { .. } => false,
        });
        match found.into_iter().next().flatten() {
            Some(Known::Written { pin, .. }) => Some(*pin),
            _ => None,
        }
    }

    /// The state of the pin keyed `key` in workspace `ws` as this replica last wrote it
    /// (as [`KnownPins::find`]), if it still held the key then.
    pub fn find_by_key(&self, ws: &str, key: &str) -> Option<Pin> {
        let found = self.kept.find([key_entry(ws, key).as_str()], |_, known| {
            matches!(known, Known::Keyed { .. })
        });
        let Some(Known::Keyed { id }) = found.into_iter().next().flatten() else {
            return None;
        };
        self.find(ws, &id)
            .filter(|pin| pin.key.as_deref() == Some(key))
    }

    /// [`KnownPins::find_by_key`] once this write has its turn at the pin found (see
    /// [`KnownPins::turn`]), with the guard; a write that finds none takes its guard once it
    /// has read the pin.
    pub async fn guess_by_key(&self, ws: &str, key: &str) -> (Option<Pin>, Option<Writing<'_>>) {
        let Some(pin) = self.find_by_key(ws, key) else {
            return (None, None);
        };
        let writing = self.turn(&pin.id).await;
        (self.find_by_key(ws, key), Some(writing))
    }

    /// Keeps `pin` as written in workspace `ws` at `now` (ms), unless it is read first for
    /// a while yet or a later version of it is kept already: two updates of one pin commit
    /// in turn, but their requests may come to keep their states the other way round, and
    /// the older one kept would make the pin's next update a moved one, and the read after
    /// it take the newer version for another writer's.
    pub fn keep(&self, ws: &str, pin: &Pin, now: i64) {
        let newer_or_missed = self.kept.find([pin.id.as_str()], |_, known| match known {
            Known::Missed { until } => *until > now,
            Known::Written {
                ws: kept_in,
                pin: kept,
            } => kept_in == ws && kept.version > pin.version,
            Known::Keyed { .. } => false,
        });
        if newer_or_missed.into_iter().next().flatten().is_none() {
            let known = Known::Written {
                ws: ws.to_owned(),
                pin: Box::new(pin.clone()),
            };
            self.kept.keep(&pin.id, known);
            if let Some(key) = &pin.key {
                let id = pin.id.clone();
                self.kept.keep(&key_entry(ws, key), Known::Keyed { id });
            }
        }
    }

    /// Forgets what is kept of the pins `ids`, deleted: a kept state only ever gives way to
    /// a later version ([`KnownPins::keep`]), and a pin brought back with its id (an archive
    /// imported into the emptied workspace) starts its versions again.
    pub fn forget(&self, ids: &[String]) {
        self.kept.forget(ids.iter().map(String::as_str));
    }

    /// Runs `write`, a write of pin `id` by this replica, and forgets what is kept of the pin
    /// unless the write answers: a request that goes away while its write is in the store
    /// (its client gone, or the write's outcome unknown, a 503) may leave the pin moved on
    /// with nothing kept of the new state. Guessing from the state kept before would be
    /// answered "moved", and the read after it would take this replica's own write for
    /// another writer's and read the pin before each update for a minute: wrk stopping its
    /// warm-up with 32 writes in flight left one pin in twelve read first in the run after.
    pub async fn sent<T, E>(
        &self,
        id: &str,
        write: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        let mut unanswered = Unanswered {
            known: self,
            id: Some(id),
        };
        let result = write.await;
        if result.is_ok() {
            unanswered.id = None;
        }
        result
    }

    /// Pin `id` was moved on by another writer than this replica at `now` (ms): read it
    /// before each update for [`MISSED_FOR_MS`].
    pub fn missed(&self, id: &str, now: i64) {
        let until = now.saturating_add(MISSED_FOR_MS);
        self.kept.keep(id, Known::Missed { until });
    }
}

/// Forgets what is kept of pin `id` when dropped ([`KnownPins::sent`]).
struct Unanswered<'k, 'i> {
    known: &'k KnownPins,
    id: Option<&'i str>,
}

impl Drop for Unanswered<'_, '_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.known.kept.forget([id]);
        }
    }
}

/// A write of a pin under way, or waiting for its turn ([`KnownPins::writing`],
/// [`KnownPins::turn`]).
pub struct Writing<'k> {
    known: &'k KnownPins,
    id: String,
    /// Counted in its `under_way`.
    counted: bool,
    /// The pin's turn, while this write holds it.
    held: Option<OwnedMutexGuard<()>>,
}

impl Writing<'_> {
    fn count(&mut self) {
        if let Ok(mut writing) = self.known.writing.lock() {
            if let Some(writes) = writing.get_mut(&self.id) {
                writes.under_way += 1;
                self.counted = true;
            }
        }
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.held = None;
        // A lock poisoned when the guard was made stays poisoned: a guard that never
        // counted itself in the entry never takes itself off.
        if let Ok(mut writing) = self.known.writing.lock() {
            if let Some(writes) = writing.get_mut(&self.id) {
                writes.under_way -= usize::from(self.counted);
                writes.guards -= 1;
                if writes.guards == 0 {
                    writing.remove(&self.id);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_is_found_in_its_own_workspace_only() {
        let known = KnownPins::new(1 << 20);
        known.keep("ws1", &Pin::new("p1", "json", "{}"), 0);
        assert_eq!(known.find("ws1", "p1").map(|p| p.id), Some("p1".into()));
        assert!(known.find("ws2", "p1").is_none());
        assert!(known.find("ws1", "p2").is_none());
    }

    #[test]
    fn a_missed_pin_is_read_until_its_time_is_up() {
        let known = KnownPins::new(1 << 20);
        let pin = Pin::new("p1", "json", "{}");
        known.keep("ws", &pin, 0);
        known.missed("p1", 1_000);
        assert!(known.find("ws", "p1").is_none());
        known.keep("ws", &pin, 1_000 + MISSED_FOR_MS - 1);
        assert!(known.find("ws", "p1").is_none(), "kept while still missed");
        known.keep("ws", &pin, 1_000 + MISSED_FOR_MS);
        assert!(known.find("ws", "p1").is_some());
    }

    #[test]
    fn a_pin_read_at_another_version_was_moved_by_another_unless_this_replica_is_writing_it() {
        let known = KnownPins::new(1 << 20);
        let mut pin = Pin::new("p1", "json", "{}");
        known.keep("ws", &pin, 0);
        let mine = known.writing("p1");
        assert!(!known.moved_by_another("ws", &pin), "the state kept");
        pin.version = 2;
        assert!(known.moved_by_another("ws", &pin));
        let other = known.writing("p1");
        assert!(
            !known.moved_by_another("ws", &pin),
            "the other write may be it"
        );
        drop(other);
        assert!(known.moved_by_another("ws", &pin));
        pin.version = 0;
        assert!(
            !known.moved_by_another("ws", &pin),
            "read before this replica's last write"
        );
        drop(mine);
        assert!(known.writing.lock().unwrap().is_empty());
    }

    /// A write waits for this replica's write of the same pin that took its turn first (not
    /// for other pins' writes), counts as under way only once it has its turn, and a write
    /// given up while waiting leaves nothing behind.
    #[tokio::test]
    async fn a_write_of_a_pin_waits_for_the_earlier_ones_turn() {
        let known = KnownPins::new(1 << 20);
        let counts = |id: &str| {
            let writing = known.writing.lock().unwrap();
            writing.get(id).map(|w| (w.under_way, w.guards))
        };
        let first = known.turn("p1").await;
        let other_pin = known.turn("p2").await;
        let mut second = Box::pin(known.turn("p1"));
        assert!(
            futures::poll!(second.as_mut()).is_pending(),
            "waits for the first"
        );
        let mut given_up = Box::pin(known.turn("p1"));
        assert!(futures::poll!(given_up.as_mut()).is_pending());
        assert_eq!(counts("p1"), Some((1, 3)), "only the first is under way");
        drop(given_up);
        assert_eq!(counts("p1"), Some((1, 2)));
        drop(first);
        let second = second.await;
        assert_eq!(counts("p1"), Some((1, 1)));
        drop(second);
        drop(other_pin);
        assert!(known.writing.lock().unwrap().is_empty());
    }

    /// Pin `id` at `version`.
    fn at(id: &str, version: i64) -> Pin {
        let mut pin = Pin::new(id, "json", "{}");
        pin.version = version;
        pin
    }

    #[test]
    fn a_state_kept_after_a_later_one_does_not_replace_it() {
        let known = KnownPins::new(1 << 20);
        known.keep("ws", &at("p1", 3), 0);
        known.keep("ws", &at("p1", 2), 0);
        assert_eq!(known.find("ws", "p1").map(|p| p.version), Some(3));
        assert!(
            !known.moved_by_another("ws", &at("p1", 3)),
            "the read finds the state kept"
        );
        known.keep("ws", &at("p1", 4), 0);
        assert_eq!(known.find("ws", "p1").map(|p| p.version), Some(4));
    }

    #[test]
    fn a_deleted_pin_is_forgotten_in_either_generation_and_kept_again_at_any_version() {
        let cost = |pin: &Pin| {
            let known = Known::Written {
                ws: "ws".into(),
                pin: Box::new(pin.clone()),
            };
            pin.id.len() + known.bytes()
        };
        // Generations of two and a half pins: keeping a third sends the first two to the older.
        let known = KnownPins::new(5 * cost(&at("p1", 10)));
        for id in ["p1", "p2", "p3"] {
            known.keep("ws", &at(id, 10), 0);
        }
        known.forget(&["p2".to_owned(), "p3".to_owned()]);
        assert!(known.find("ws", "p2").is_none(), "forgotten from the older");
        assert!(known.find("ws", "p3").is_none(), "forgotten from the newer");
        assert!(known.find("ws", "p1").is_some(), "only the deleted pins");
        known.keep("ws", &at("p3", 3), 0);
        assert_eq!(known.find("ws", "p3").map(|p| p.version), Some(3));
    }

    #[test]
    fn a_keyed_pin_is_found_by_its_key_while_it_holds_it() {
        let known = KnownPins::new(1 << 20);
        let mut pin = Pin::new("p1", "json", "{}");
        pin.key = Some("k".into());
        known.keep("ws", &pin, 0);
        assert_eq!(
            known.find_by_key("ws", "k").map(|p| p.id),
            Some("p1".into())
        );
        assert!(known.find_by_key("ws2", "k").is_none());
        pin.key = Some("other".into());
        known.keep("ws", &pin, 0);
        assert!(known.find_by_key("ws", "k").is_none(), "the key moved away");
    }

    #[test]
    fn a_pin_larger_than_a_generation_is_not_kept() {
        let known = KnownPins::new(1_000);
        known.keep("ws", &Pin::new("p1", "json", "x".repeat(1_000)), 0);
        assert!(known.find("ws", "p1").is_none());
    }

    /// A write that answers leaves the state kept; one that fails, or whose request goes
    /// away while it is in the store, forgets it (its outcome is unknown).
    #[tokio::test]
    async fn a_write_gone_before_its_answer_forgets_the_state_kept() {
        let known = KnownPins::new(1 << 20);
        for id in ["answered", "failed", "gone"] {
            known.keep("ws", &at(id, 3), 0);
        }
        let answered = known.sent("answered", async { Ok::<_, ()>(()) }).await;
        assert_eq!(answered, Ok(()));
        assert!(known.find("ws", "answered").is_some());
        let failed = known.sent("failed", async { Err::<(), _>(()) }).await;
        assert_eq!(failed, Err(()));
        assert!(known.find("ws", "failed").is_none());
        let mut gone = Box::pin(known.sent("gone", std::future::pending::<Result<(), ()>>()));
        assert!(futures::poll!(gone.as_mut()).is_pending());
        assert!(known.find("ws", "gone").is_some(), "kept while under way");
        drop(gone);
        assert!(known.find("ws", "gone").is_none());
    }
}
