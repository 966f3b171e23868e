-- Outbound webhooks (CONTRACT.md 15). A webhook POSTs its workspace's matching events, read
-- from the event log after `cursor_seq` (the last event id it is done with: delivered, or
-- not its to deliver), one at a time in log order. `secret` is kept as made: signing needs
-- it. A failed delivery sets `attempts` (of the event after the cursor), `failing_since`
-- (the streak's first failure) and `next_attempt_at` (the retry's time). Replicas share the
-- work through a lease: a replica delivers for a webhook only while it holds `lease_until`
-- (ms) as `leased_by`, taken with a compare-and-set on an expired lease.
CREATE TABLE webhooks (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY,
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id),
    url             TEXT NOT NULL,
    event_types     TEXT[] NOT NULL,
    pinboard_id     TEXT,
    pin_id          TEXT,
    description     TEXT,
    secret          TEXT NOT NULL,
    enabled         BOOLEAN NOT NULL,
    disabled_reason TEXT,
    cursor_seq      BIGINT NOT NULL,
    attempts        BIGINT NOT NULL DEFAULT 0,
    failing_since   BIGINT,
    next_attempt_at BIGINT NOT NULL DEFAULT 0,
    lease_until     BIGINT NOT NULL DEFAULT 0,
    leased_by       TEXT,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX webhooks_workspace_seq ON webhooks (workspace_id, seq DESC);
-- The delivery worker's look for due webhooks, over every workspace.
CREATE INDEX webhooks_due ON webhooks (next_attempt_at) WHERE enabled;

-- Each attempt to deliver, the newest 100 per webhook kept.
CREATE TABLE webhook_deliveries (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id   TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id     BIGINT NOT NULL,
    event_type   TEXT NOT NULL,
    status_code  BIGINT,
    duration_ms  BIGINT NOT NULL,
    error        TEXT,
    at           BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_webhook_seq ON webhook_deliveries (webhook_id, seq DESC);
