CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    lookup       TEXT NOT NULL UNIQUE,
    secret_hash  TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    tier         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at   INTEGER
);

-- seq orders pins for keyset pagination (newest first).
CREATE TABLE pins (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    pin_type     TEXT NOT NULL,
    pin_config   TEXT NOT NULL,
    pin_layout   TEXT NOT NULL,
    is_public    INTEGER NOT NULL,
    title        TEXT,
    tags         TEXT NOT NULL,
    provenance   TEXT,
    version      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE INDEX pins_workspace_seq ON pins (workspace_id, seq DESC);
CREATE INDEX pins_workspace_type_seq ON pins (workspace_id, pin_type, seq DESC);

CREATE TABLE pin_versions (
    pin_id     TEXT NOT NULL REFERENCES pins (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    pin_type   TEXT NOT NULL,
    pin_config TEXT NOT NULL,
    pin_layout TEXT NOT NULL,
    is_public  INTEGER NOT NULL,
    title      TEXT,
    tags       TEXT NOT NULL,
    provenance TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (pin_id, version)
);

CREATE TABLE idempotency_keys (
    workspace_id TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, key)
);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
