-- Freshness (CONTRACT.md 15): a pin may say how often it expects a push
-- (`expected_every_secs`, NULL: no expectation); `last_pushed_at` is the last create, update,
-- upsert (changed or not) or append. `stale_due_at` is when the pin's next `pin.stale` event
-- is due: set by every push of a pin with an expectation, cleared when the event is logged
-- (once per lapse). The sweep reads only the due pins, through its partial index. Versions
-- keep each state's expectation and push time.
ALTER TABLE pins ADD COLUMN expected_every_secs BIGINT;
ALTER TABLE pins ADD COLUMN last_pushed_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pins ADD COLUMN stale_due_at BIGINT;
UPDATE pins SET last_pushed_at = updated_at;
ALTER TABLE pin_versions ADD COLUMN expected_every_secs BIGINT;
ALTER TABLE pin_versions ADD COLUMN last_pushed_at BIGINT NOT NULL DEFAULT 0;
UPDATE pin_versions SET last_pushed_at = updated_at;
CREATE INDEX pins_stale_due ON pins (stale_due_at) WHERE stale_due_at IS NOT NULL;
