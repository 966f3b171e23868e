-- The event log (CONTRACT.md 10): one row per committed change, written in the change's
-- transaction. seq is the event id; AUTOINCREMENT never reuses one, even after pruning, so a
-- client's Last-Event-ID can't name a different event later. SQLite's one writer commits in
-- seq order. boards: the pinboards the change concerns (a pin's placements at the time), a
-- JSON text array. data: the record as a GET returns it after the change, JSON text.
CREATE TABLE events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id TEXT NOT NULL,
    event        TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    version      INTEGER,
    boards       TEXT NOT NULL,
    at           INTEGER NOT NULL,
    data         TEXT NOT NULL
);
CREATE INDEX events_workspace_seq ON events (workspace_id, seq);
CREATE INDEX events_at ON events (at);
