-- Share settings of pins (is_public already exists). Past versions keep them too, so a
-- version is the whole pin as it was.
ALTER TABLE pins ADD COLUMN allow_edit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pins ADD COLUMN require_sign_in INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pins ADD COLUMN allow_comments INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pin_versions ADD COLUMN allow_edit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pin_versions ADD COLUMN require_sign_in INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pin_versions ADD COLUMN allow_comments INTEGER NOT NULL DEFAULT 0;

-- seq orders boards for keyset pagination (newest first).
CREATE TABLE pinboards (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id),
    title           TEXT NOT NULL,
    description     TEXT,
    tags            TEXT NOT NULL,
    is_public       INTEGER NOT NULL,
    allow_edit      INTEGER NOT NULL,
    require_sign_in INTEGER NOT NULL,
    allow_comments  INTEGER NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE INDEX pinboards_workspace_seq ON pinboards (workspace_id, seq DESC);

-- A pin on a board's 12-column grid. Both sides belong to the same workspace (checked when
-- placed); deleting either removes the placement.
CREATE TABLE placements (
    pinboard_id TEXT NOT NULL REFERENCES pinboards (id) ON DELETE CASCADE,
    pin_id      TEXT NOT NULL REFERENCES pins (id) ON DELETE CASCADE,
    x           INTEGER NOT NULL,
    y           INTEGER NOT NULL,
    w           INTEGER NOT NULL,
    h           INTEGER NOT NULL,
    PRIMARY KEY (pinboard_id, pin_id)
);
CREATE INDEX placements_pin ON placements (pin_id);
