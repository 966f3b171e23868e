-- What one POST /v1/pins/batch of 100 stat-cards runs on PostgreSQL with its key's principal
-- kept (auth/key_cache.rs: no lookup of the key), the rate-limit check (limits::postgres::CHECK,
-- 10 tokens for 100 items, reading auth_changes) and the one INSERT of every row from arrays (store::postgres::INSERT_PINS). The text is the
-- store's with pgbench variables for `$n`; `cargo test bench_sql` fails if they differ.
-- pgbench can't build arrays, so a query of the benchmark's own, ended by `\gset`, makes
-- them first: 100 fresh time-ordered ids, and the pin's values 100 times (its cost counts
-- against the baseline). bench/run.sh compares this with create.sql: what a batch costs
-- the database itself, in pins.
-- pgbench -M prepared -D key=<key id> -D ws=<workspace id> -D now=<ms>
--   -D pin_type=stat-cards -D layout=1x1 -D config=<pin_config JSON>
\set minute_ms 60000
\set hour_ms 3600000
\set write_ms 60000
\set cost 10
\set write_cost 10
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
SELECT array_agg('p-' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::int8), 12, '0')
    || md5(random()::text || i)) AS ids,
  array_fill(:ws::text, ARRAY[100]) AS wss, array_fill(:pin_type::text, ARRAY[100]) AS types,
  array_fill(:config::text, ARRAY[100]) AS configs, array_fill(:layout::text, ARRAY[100]) AS layouts,
  array_fill(false, ARRAY[100]) AS publics, array_fill(NULL::text, ARRAY[100]) AS nulls,
  array_fill('[]'::text, ARRAY[100]) AS tags, array_fill(1::int8, ARRAY[100]) AS versions,
  array_fill(:now::int8, ARRAY[100]) AS nows, array_fill(NULL::int8, ARRAY[100]) AS nullints
  FROM generate_series(1, 100) AS i \gset
INSERT INTO pins (id, workspace_id, pin_type, pin_config, pin_layout, is_public, title, tags, provenance, version, created_at, updated_at, key,
    expected_every_secs, last_pushed_at, stale_due_at, status_rules, status, status_due)
  SELECT u.id, u.ws, u.pin_type, u.pin_config, u.pin_layout, u.is_public, u.title,
    ARRAY(SELECT jsonb_array_elements_text(u.tags::jsonb)), u.provenance, u.version, u.created_at, u.updated_at, u.key,
    u.expected_every_secs, u.last_pushed_at, u.stale_due_at, u.status_rules, u.status, u.status_due
  FROM UNNEST(:wss::text[], :ids::text[], :types::text[], :configs::text[], :layouts::text[], :publics::bool[],
    :nulls::text[], :tags::text[], :nulls::text[], :versions::int8[], :nows::int8[], :nows::int8[], :nulls::text[],
    :nullints::int8[], :nows::int8[], :nullints::int8[], :nulls::text[], :nulls::text[], :nullints::int8[])
  AS u (ws, id, pin_type, pin_config, pin_layout, is_public, title, tags, provenance,
    version, created_at, updated_at, key, expected_every_secs, last_pushed_at, stale_due_at, status_rules, status, status_due);
