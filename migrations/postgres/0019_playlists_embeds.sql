-- Playlists (CONTRACT.md 17): boards of one workspace shown in turn, each for its seconds.
-- seq orders them for keyset pagination (newest first).
CREATE TABLE playlists (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY,
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX playlists_workspace_seq ON playlists (workspace_id, seq DESC);

-- A playlist's boards in order. Deleting the board drops its items from every playlist.
CREATE TABLE playlist_items (
    playlist_id TEXT NOT NULL REFERENCES playlists (id) ON DELETE CASCADE,
    position    BIGINT NOT NULL,
    pinboard_id TEXT NOT NULL REFERENCES pinboards (id) ON DELETE CASCADE,
    seconds     BIGINT NOT NULL,
    PRIMARY KEY (playlist_id, position)
);
CREATE INDEX playlist_items_board ON playlist_items (pinboard_id);

-- The share setting `embed_origins` of a pin or a board: the origins whose pages may frame
-- `/embed/{id}`. No row: none. `item_id` is the pin's or the board's id, whichever of the two
-- foreign keys is set, so the row goes with its item.
CREATE TABLE embed_origins (
    item_id      TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    pin_id       TEXT REFERENCES pins (id) ON DELETE CASCADE,
    pinboard_id  TEXT REFERENCES pinboards (id) ON DELETE CASCADE,
    origins      TEXT[] NOT NULL,
    CHECK (item_id = COALESCE(pin_id, pinboard_id) AND (pin_id IS NULL OR pinboard_id IS NULL))
);
CREATE INDEX embed_origins_pin ON embed_origins (pin_id);
CREATE INDEX embed_origins_board ON embed_origins (pinboard_id);
