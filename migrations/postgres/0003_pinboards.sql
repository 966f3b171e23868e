-- Share settings of pins (is_public already exists). Past versions keep them too, so a
-- version is the whole pin as it was.
ALTER TABLE pins
    ADD COLUMN allow_edit BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN require_sign_in BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN allow_comments BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE pin_versions
    ADD COLUMN allow_edit BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN require_sign_in BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN allow_comments BOOLEAN NOT NULL DEFAULT false;

-- seq orders boards for keyset pagination (newest first).
CREATE TABLE pinboards (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY,
    id              TEXT PRIMARY KEY,
    workspace_id    TEXT NOT NULL REFERENCES workspaces (id),
    title           TEXT NOT NULL,
    description     TEXT,
    tags            TEXT[] NOT NULL,
    is_public       BOOLEAN NOT NULL,
    allow_edit      BOOLEAN NOT NULL,
    require_sign_in BOOLEAN NOT NULL,
    allow_comments  BOOLEAN NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX pinboards_workspace_seq ON pinboards (workspace_id, seq DESC);

-- A pin on a board's 12-column grid. Both sides belong to the same workspace (checked when
-- placed); deleting either removes the placement.
CREATE TABLE placements (
    pinboard_id TEXT NOT NULL REFERENCES pinboards (id) ON DELETE CASCADE,
    pin_id      TEXT NOT NULL REFERENCES pins (id) ON DELETE CASCADE,
    x           BIGINT NOT NULL,
    y           BIGINT NOT NULL,
    w           BIGINT NOT NULL,
    h           BIGINT NOT NULL,
    PRIMARY KEY (pinboard_id, pin_id)
);
CREATE INDEX placements_pin ON placements (pin_id);
