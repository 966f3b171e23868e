CREATE TABLE workspaces (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    lookup       TEXT NOT NULL UNIQUE,
    secret_hash  TEXT NOT NULL,
    scopes       TEXT NOT NULL,
    tier         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);

-- seq orders pins for keyset pagination (newest first).
CREATE TABLE pins (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY,
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    pin_type     TEXT NOT NULL,
    pin_config   TEXT NOT NULL,
    pin_layout   TEXT NOT NULL,
    is_public    BOOLEAN NOT NULL,
    title        TEXT,
    tags         TEXT[] NOT NULL,
    provenance   TEXT,
    version      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX pins_workspace_seq ON pins (workspace_id, seq DESC);
CREATE INDEX pins_workspace_type_seq ON pins (workspace_id, pin_type, seq DESC);
CREATE INDEX pins_tags ON pins USING GIN (tags);

CREATE TABLE pin_versions (
    pin_id     TEXT NOT NULL REFERENCES pins (id) ON DELETE CASCADE,
    version    BIGINT NOT NULL,
    pin_type   TEXT NOT NULL,
    pin_config TEXT NOT NULL,
    pin_layout TEXT NOT NULL,
    is_public  BOOLEAN NOT NULL,
    title      TEXT,
    tags       TEXT[] NOT NULL,
    provenance TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (pin_id, version)
);

CREATE TABLE idempotency_keys (
    workspace_id TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
