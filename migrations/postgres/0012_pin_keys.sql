-- A pin's key (CONTRACT.md 14): the automation's own name for it, unique within its
-- workspace, so a caller can upsert and append without keeping our ids. Versions keep the
-- key each state had.
ALTER TABLE pins ADD COLUMN key TEXT;
ALTER TABLE pin_versions ADD COLUMN key TEXT;
CREATE UNIQUE INDEX pins_workspace_key ON pins (workspace_id, key) WHERE key IS NOT NULL;
