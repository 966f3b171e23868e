-- The event log (CONTRACT.md 10): one row per committed change, written in the change's
-- transaction. seq is the event id. Appends of one workspace are serialised by an advisory
-- lock held to the commit, taken before seq is drawn, so within a workspace seq order is
-- commit order and a reader of "seq > last" can't skip an event that commits late
-- (docs/ARCHITECTURE.md, "Live events"). boards: the pinboards the change concerns (a pin's
-- placements at the time). data: the record as a GET returns it after the change, JSON text.
CREATE TABLE events (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    event        TEXT NOT NULL,
    resource_id  TEXT NOT NULL,
    version      BIGINT,
    boards       TEXT[] NOT NULL,
    at           BIGINT NOT NULL,
    data         TEXT NOT NULL
);
CREATE INDEX events_workspace_seq ON events (workspace_id, seq);
CREATE INDEX events_at ON events (at);
