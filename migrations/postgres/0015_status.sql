-- Status rules (CONTRACT.md 15): a pin may carry `status_rules` (JSON text, NULL: none) that
-- give it a `status` (ok, warning, critical; NULL without rules), read on its rendered
-- configuration. Versions keep each state's rules and status. `status_due` marks a pin whose
-- status must be read again against its datasets (a templated pin written, or a dataset it
-- may name changed); the status sweep reads only the marked pins, through its partial index,
-- and clears a mark only if it is still the one it read.
ALTER TABLE pins ADD COLUMN status_rules TEXT;
ALTER TABLE pins ADD COLUMN status TEXT;
ALTER TABLE pins ADD COLUMN status_due BIGINT;
ALTER TABLE pin_versions ADD COLUMN status_rules TEXT;
ALTER TABLE pin_versions ADD COLUMN status TEXT;
CREATE INDEX pins_status_due ON pins (status_due) WHERE status_due IS NOT NULL;
CREATE INDEX pins_with_status_rules ON pins (workspace_id) WHERE status_rules IS NOT NULL;
