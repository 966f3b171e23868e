-- Past versions saved by grouped updates, in the order they were written (issue 35). A rowid
-- table with no index: a group's saves fill the table's last page or two, where saving into
-- `pin_versions` (clustered by pin) wrote a page, often two with a split, for each pin the
-- group updated: 45 WAL frames a group of 14 updates against 28 (bench/README.md, "Updates").
-- The commit loop moves these rows into `pin_versions` in bulk, a page of each pin's versions
-- at a time, and prunes there (`sqlite/commit.rs`, `move_versions`); versions are read from
-- both. `keep_above`: the write's newest version beyond the retention (`pins::keep_above`).
CREATE TABLE pin_versions_pending (
    pin_id              TEXT NOT NULL,
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
    allow_edit          INTEGER NOT NULL,
    require_sign_in     INTEGER NOT NULL,
    allow_comments      INTEGER NOT NULL,
    key                 TEXT,
    expected_every_secs BIGINT,
    last_pushed_at      BIGINT NOT NULL,
    status_rules        TEXT,
    status              TEXT,
    keep_above          INTEGER NOT NULL
);
