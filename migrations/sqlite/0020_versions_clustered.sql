-- Past versions clustered by pin (issue 35): a table WITHOUT ROWID keeps one b-tree ordered
-- by (pin_id, version), so saving a version and pruning a pin's oldest touch that pin's pages
-- alone, where a rowid table wrote the row at the table's end, its key in a second b-tree,
-- and deleted from wherever the pruned row sat.
CREATE TABLE pin_versions_clustered (
    pin_id              TEXT NOT NULL REFERENCES pins (id) ON DELETE CASCADE,
    version             INTEGER NOT NULL,
    pin_type            TEXT NOT NULL,
    pin_config          TEXT NOT NULL,
    pin_layout          TEXT NOT NULL,
    is_public           INTEGER NOT NULL,
    title               TEXT,
    tags                TEXT NOT NULL,
    provenance          TEXT,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    allow_edit          INTEGER NOT NULL DEFAULT 0,
    require_sign_in     INTEGER NOT NULL DEFAULT 0,
    allow_comments      INTEGER NOT NULL DEFAULT 0,
    key                 TEXT,
    expected_every_secs BIGINT,
    last_pushed_at      BIGINT NOT NULL DEFAULT 0,
    status_rules        TEXT,
    status              TEXT,
    PRIMARY KEY (pin_id, version)
) WITHOUT ROWID;
INSERT INTO pin_versions_clustered (pin_id, version, pin_type, pin_config, pin_layout, is_public,
    title, tags, provenance, created_at, updated_at, allow_edit, require_sign_in, allow_comments,
    key, expected_every_secs, last_pushed_at, status_rules, status)
SELECT pin_id, version, pin_type, pin_config, pin_layout, is_public, title, tags, provenance,
    created_at, updated_at, allow_edit, require_sign_in, allow_comments, key, expected_every_secs,
    last_pushed_at, status_rules, status FROM pin_versions;
DROP TABLE pin_versions;
ALTER TABLE pin_versions_clustered RENAME TO pin_versions;
