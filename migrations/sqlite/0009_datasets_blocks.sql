-- Datasets (CONTRACT.md 7): JSON or markdown that pins refer to with {{name.path}}. data is
-- JSON text (a markdown dataset's text as a JSON string). seq orders them for keyset pages.
CREATE TABLE datasets (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    format       TEXT NOT NULL,
    data         TEXT NOT NULL,
    description  TEXT,
    version      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    UNIQUE (workspace_id, name)
);
CREATE INDEX datasets_workspace_seq ON datasets (workspace_id, seq DESC);

-- A pin's blocks, in position order (0-based, dense). They are part of the pin: deleted
-- with it, and every block write bumps the pin's version.
CREATE TABLE blocks (
    id         TEXT PRIMARY KEY,
    pin_id     TEXT NOT NULL REFERENCES pins (id) ON DELETE CASCADE,
    block_type TEXT NOT NULL,
    config     TEXT NOT NULL,
    position   INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX blocks_pin_position ON blocks (pin_id, position);
