-- What one GET /v1/pins/{id} runs on PostgreSQL, its key's principal kept (no lookup of the
-- key): the rate-limit check (limits::postgres::CHECK, a read: no write cost) and the select
-- (store::postgres::GET_PIN). The text is the store's with pgbench variables for `$n`;
-- `cargo test bench_sql` fails if they differ.
-- pgbench -M prepared -D key=<key id> -D ws=<workspace id> -D now=<ms>
--   -D id=<pin id>
\set minute_ms 60000
\set hour_ms 3600000
\set write_ms 60000
\set cost 1
\set write_cost 0
\set per_minute 2000000000
\set per_hour 2000000000
\set write_capacity 2000000000
INSERT INTO rate_limit_windows AS r
  (subject, minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted)
  VALUES (:key, :now,
    CASE WHEN (:cost::int8 <= :per_minute::int8 AND :cost::int8 <= :per_hour::int8 AND :write_cost::int8 <= :write_capacity::int8) THEN :cost ELSE 0 END, :now,
    CASE WHEN (:cost::int8 <= :per_minute::int8 AND :cost::int8 <= :per_hour::int8 AND :write_cost::int8 <= :write_capacity::int8) THEN :cost ELSE 0 END, :now,
    CASE WHEN (:cost::int8 <= :per_minute::int8 AND :cost::int8 <= :per_hour::int8 AND :write_cost::int8 <= :write_capacity::int8) THEN :write_cost ELSE 0 END,
    (:cost::int8 <= :per_minute::int8 AND :cost::int8 <= :per_hour::int8 AND :write_cost::int8 <= :write_capacity::int8))
  ON CONFLICT (subject) DO UPDATE SET
    minute_start = CASE WHEN r.minute_start + :minute_ms > :now THEN r.minute_start ELSE :now END,
    minute_used = (CASE WHEN r.minute_start + :minute_ms > :now THEN r.minute_used ELSE 0 END) + CASE WHEN ((CASE WHEN r.minute_start + :minute_ms > :now THEN r.minute_used ELSE 0 END) + :cost <= :per_minute AND (CASE WHEN r.hour_start + :hour_ms > :now THEN r.hour_used ELSE 0 END) + :cost <= :per_hour AND (CASE WHEN r.write_start + :write_ms > :now THEN r.write_used ELSE 0 END) + :write_cost <= :write_capacity) THEN :cost ELSE 0 END,
    hour_start = CASE WHEN r.hour_start + :hour_ms > :now THEN r.hour_start ELSE :now END,
    hour_used = (CASE WHEN r.hour_start + :hour_ms > :now THEN r.hour_used ELSE 0 END) + CASE WHEN ((CASE WHEN r.minute_start + :minute_ms > :now THEN r.minute_used ELSE 0 END) + :cost <= :per_minute AND (CASE WHEN r.hour_start + :hour_ms > :now THEN r.hour_used ELSE 0 END) + :cost <= :per_hour AND (CASE WHEN r.write_start + :write_ms > :now THEN r.write_used ELSE 0 END) + :write_cost <= :write_capacity) THEN :cost ELSE 0 END,
    write_start = CASE WHEN r.write_start + :write_ms > :now THEN r.write_start ELSE :now END,
    write_used = (CASE WHEN r.write_start + :write_ms > :now THEN r.write_used ELSE 0 END) + CASE WHEN ((CASE WHEN r.minute_start + :minute_ms > :now THEN r.minute_used ELSE 0 END) + :cost <= :per_minute AND (CASE WHEN r.hour_start + :hour_ms > :now THEN r.hour_used ELSE 0 END) + :cost <= :per_hour AND (CASE WHEN r.write_start + :write_ms > :now THEN r.write_used ELSE 0 END) + :write_cost <= :write_capacity) THEN :write_cost ELSE 0 END,
    granted = ((CASE WHEN r.minute_start + :minute_ms > :now THEN r.minute_used ELSE 0 END) + :cost <= :per_minute AND (CASE WHEN r.hour_start + :hour_ms > :now THEN r.hour_used ELSE 0 END) + :cost <= :per_hour AND (CASE WHEN r.write_start + :write_ms > :now THEN r.write_used ELSE 0 END) + :write_cost <= :write_capacity)
  RETURNING minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted,
    (SELECT n FROM auth_changes WHERE one) AS auth_changes;
SELECT id, pin_type, pin_config, pin_layout, is_public, allow_edit, require_sign_in, allow_comments,
  title, tags, provenance, version, created_at, updated_at, key, expected_every_secs, last_pushed_at,
  status_rules, status
  FROM pins WHERE id = :id AND (workspace_id = :ws) IS TRUE;
