-- Outbound webhooks (CONTRACT.md 15). A webhook POSTs its workspace's matching events, read
-- from the event log after `cursor_seq` (the last event id it is done with: delivered, or
-- not its to deliver), one at a time in log order. `secret` is kept as made: signing needs
-- it. A failed delivery sets `attempts` (of the event after the cursor), `failing_since`
-- (the streak's first failure) and `next_attempt_at` (the retry's time). Replicas share the
-- work through a lease: a replica delivers for a webhook only while it holds `lease_until`
-- (ms) as `leased_by`, taken with a compare-and-set on an expired lease.
-- `event_types` is a JSON text array, as tags are.
CREATE TABLE webhooks (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id),
    url             TEXT NOT NULL,
    event_types     TEXT NOT NULL,
    pinboard_id     TEXT,
    pin_id          TEXT,
    description     TEXT,
    secret          TEXT NOT NULL,
    enabled         INTEGER NOT NULL,
    disabled_reason TEXT,
    cursor_seq      INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    failing_since   INTEGER,
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    lease_until     INTEGER NOT NULL DEFAULT 0,
    leased_by       TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX webhooks_workspace_seq ON webhooks (workspace_id, seq DESC);
-- The delivery worker's look for due webhooks, over every workspace.
CREATE INDEX webhooks_due ON webhooks (next_attempt_at) WHERE enabled;

-- Each attempt to deliver, the newest 100 per webhook kept.
CREATE TABLE webhook_deliveries (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id   TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id     INTEGER NOT NULL,
    event_type   TEXT NOT NULL,
    status_code  INTEGER,
    duration_ms  INTEGER NOT NULL,
    error        TEXT,
    at           INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_webhook_seq ON webhook_deliveries (webhook_id, seq DESC);
