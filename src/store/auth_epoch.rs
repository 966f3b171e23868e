//! When an API key's principal, built from stored rows, may be kept between requests
//! (`auth/key_cache.rs`): the changes this process can see.
//!
//! A kept principal must never outlive a change: a revoked key fails at once (CONTRACT.md 9,
//! README "keys created or revoked with the CLI count at once everywhere"), a demoted user's
//! keys lose their power at once. [`AuthEpoch`] counts the changes of keys, memberships and
//! roles this process can see. A request reads the count before it reads the rows and keeps
//! what it built under that count; a later request uses it only while the count is the same.
//! A change counts after its commit, so a request that read the rows before the commit kept
//! them under the count before it, already stale. Where changes come from:
//!
//! - this process: the store's writes of keys, memberships and roles call
//!   [`AuthEpoch::changed`] after their commit;
//! - a SQLite file: every writer (the CLI is another process) appends one byte to the stamp
//!   file `<database>-auth` after its change; a request looks at the stamp's size (one
//!   `stat`, no round trip to the database) before it uses anything kept;
//! - PostgreSQL: other replicas, the CLI and psql are not seen here, but in the database:
//!   triggers count every change in `auth_changes`, which each request's rate-limit statement
//!   reads (`limits::enforce` confirms a kept principal with it).

use std::{
    io::Write,
    os::unix::fs::MetadataExt,
    path::PathBuf,
    sync::{
        atomic::{AtomicU64, Ordering},
        Mutex,
    },
};

/// The count of changes to stored credentials that this process knows of.
pub struct AuthEpoch {
    count: AtomicU64,
    watch: Watch,
}

enum Watch {
    /// Only this process's changes: an in-memory database, or PostgreSQL (which counts the
    /// others' itself).
    InProcess,
    /// A SQLite file: its stamp file, and the stamp's (inode, size) when last looked at.
    Stamp {
        path: PathBuf,
        seen: Mutex<Option<(u64, u64)>>,
    },
}

impl AuthEpoch {
    pub(super) fn in_process() -> Self {
        Self::watching(Watch::InProcess)
    }

    /// For the SQLite database at `database`.
    pub(super) fn stamped(database: &std::path::Path) -> Self {
        let mut path = database.as_os_str().to_owned();
        path.push("-auth");
        Self::watching(Watch::Stamp {
            path: path.into(),
            seen: Mutex::new(None),
        })
    }

    fn watching(watch: Watch) -> Self {
        AuthEpoch {
            count: AtomicU64::new(0),
            watch,
        }
    }

    /// The count now, or `None` when nothing may be kept (the stamp can't be read).
    pub fn current(&self) -> Option<u64> {
        match &self.watch {
            Watch::InProcess => {}
            Watch::Stamp { path, seen } => {
                let now = match std::fs::metadata(path) {
                    Ok(meta) => (meta.ino(), meta.len()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => (0, 0),
                    Err(_) => return None,
                };
                let mut seen = seen.lock().ok()?;
                if *seen != Some(now) {
                    *seen = Some(now);
                    self.count.fetch_add(1, Ordering::AcqRel);
                }
            }
        }
        Some(self.count.load(Ordering::Acquire))
    }

    /// A key, membership or role was written and committed by this process.
    pub(crate) fn changed(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
        if let Watch::Stamp { path, .. } = &self.watch {
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut stamp| stamp.write_all(b"."));
            if let Err(e) = appended {
                tracing::warn!(
                    error = %e,
                    stamp = %path.display(),
                    "could not mark a change of keys: a server on this database may accept \
                     a revoked key until it restarts"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_by_this_process_moves_the_count() {
        let epoch = AuthEpoch::in_process();
        let before = epoch.current();
        assert!(before.is_some());
        assert_eq!(epoch.current(), before);
        epoch.changed();
        assert_ne!(epoch.current(), before);
    }

    #[test]
    fn another_process_appending_to_the_stamp_moves_the_count() {
        let dir = std::env::temp_dir().join(format!("corkboard-epoch-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let database = dir.join("corkboard.db");
        let server = AuthEpoch::stamped(&database);
        let cli = AuthEpoch::stamped(&database);
        let before = server.current().expect("no stamp yet reads as empty");
        assert_eq!(server.current(), Some(before));
        cli.changed();
        let after = server.current().expect("stamp readable");
        assert_ne!(after, before);
        assert_eq!(server.current(), Some(after));
        cli.changed();
        assert_ne!(server.current(), Some(after));
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
