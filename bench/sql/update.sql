-- What one PATCH /v1/pins/{id} (a stat-cards pin's configuration) runs on PostgreSQL, its
-- key's principal kept (no lookup of the key): the rate-limit check (limits::postgres::CHECK, a
-- write) and the pin read (store::postgres::GET_PIN) on the request's connection, then what the group
-- commit runs for it (store/postgres/commit.rs): BEGIN, the compare-and-set update from
-- arrays (UPDATE_PINS, which locks the pin, saves the replaced state as a past version and
-- prunes beyond the retention), the event's append
-- (store/postgres/events.rs APPEND_EVENTS), COMMIT. The text is the store's with pgbench
-- variables for `$n`; `cargo test bench_sql` fails if they differ. Under load the service
-- writes many updates (and creates) in one transaction; this commits each update alone, as
-- a server without group commit would. bench/run.sh runs it with `enable_seqscan = off` and
-- generic plans, as the group commit's connection plans (store/postgres/commit.rs `start`).
-- pgbench can't build arrays or pick a row, so a query of the benchmark's own, ended by
-- `\gset`, first picks one of the workspace's pins at random (bench/run.sh makes exactly
-- 200 there) and makes the one-element arrays the statements take from it: one round trip
-- and one index read more than the service (its cost counts against the baseline). Its
-- `version` is the one the update expects, as the service's read gives it; two clients
-- picking one pin at once make the later one's update write nothing (the service would
-- decide it again), which at 32 clients over 200 pins is rare.
-- pgbench -M prepared -D key=<key id> -D ws=<workspace id> -D now=<ms>
--   -D config=<the new pin_config JSON> -D data=<a pin record as GET returns it (the event)>
\set minute_ms 60000
\set hour_ms 3600000
\set write_ms 60000
\set cost 1
\set write_cost 1
\set per_minute 2000000000
\set per_hour 2000000000
\set write_capacity 2000000000
\set retention 20
\set n random(0, 199)
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
SELECT id, ARRAY[workspace_id]::text AS wss, ARRAY[id]::text AS ids, ARRAY[version]::text AS expected,
  ARRAY[version + 1]::text AS versions, ARRAY[version - :retention]::text AS keep_above,
  ARRAY[CASE WHEN (version + 1) % 64 = 0 THEN 0 ELSE version - :retention - 1 END]::text AS prune_above,
  ARRAY[pin_type]::text AS types, ARRAY[:config::text]::text AS configs, ARRAY[pin_layout]::text AS layouts,
  ARRAY[is_public]::text AS publics, ARRAY[title]::text AS titles, ARRAY[to_jsonb(tags)::text]::text AS tags,
  ARRAY[provenance]::text AS provenances, ARRAY[:now::int8]::text AS nows, ARRAY[allow_edit]::text AS edits,
  ARRAY[require_sign_in]::text AS sign_ins, ARRAY[allow_comments]::text AS comments,
  ARRAY[key]::text AS pin_keys, ARRAY['pin.updated']::text AS events, ARRAY['[]']::text AS boards,
  ARRAY[:data::text]::text AS datas, ARRAY[expected_every_secs]::text AS expecteds,
  ARRAY[:now::int8 + expected_every_secs * 1000]::text AS dues, ARRAY[status_rules]::text AS rules,
  ARRAY[status]::text AS statuses, ARRAY[NULL::int8]::text AS status_dues
  FROM pins WHERE workspace_id = :ws ORDER BY id OFFSET :n LIMIT 1 \gset
SELECT id, pin_type, pin_config, pin_layout, is_public, allow_edit, require_sign_in, allow_comments,
  title, tags, provenance, version, created_at, updated_at, key, expected_every_secs, last_pushed_at,
  status_rules, status
  FROM pins WHERE id = :id AND (workspace_id = :ws) IS TRUE;
BEGIN;
WITH u AS (SELECT * FROM UNNEST(:wss::text[], :ids::text[], :expected::int8[], :types::text[], :configs::text[], :layouts::text[], :publics::bool[], :titles::text[], :tags::text[],
  :provenances::text[], :versions::int8[], :nows::int8[], :edits::bool[], :sign_ins::bool[], :comments::bool[], :pin_keys::text[], :keep_above::int8[], :expecteds::int8[],
  :nows::int8[], :dues::int8[], :rules::text[], :statuses::text[], :status_dues::int8[], :prune_above::int8[]) AS u (ws, id, expected, pin_type, pin_config, pin_layout, is_public,
  title, tags, provenance, version, updated_at, allow_edit, require_sign_in, allow_comments, key, keep_above, expected_every_secs, last_pushed_at, stale_due_at, status_rules,
  status, status_due, prune_above)), changed AS (UPDATE pins p SET pin_type = u.pin_type, pin_config = u.pin_config, pin_layout = u.pin_layout, is_public = u.is_public, title =
  u.title, tags = ARRAY(SELECT jsonb_array_elements_text(u.tags::jsonb)), provenance = u.provenance, version = u.version, updated_at = u.updated_at, allow_edit = u.allow_edit,
  require_sign_in = u.require_sign_in, allow_comments = u.allow_comments, key = u.key, expected_every_secs = u.expected_every_secs, last_pushed_at = u.last_pushed_at, stale_due_at
  = u.stale_due_at, status_rules = u.status_rules, status = u.status, status_due = COALESCE(p.status_due, u.status_due) FROM u, pins o WHERE p.id = u.id AND (p.workspace_id = u.ws)
  IS TRUE AND p.version = u.expected AND o.id = p.id RETURNING o.id, o.version, o.pin_type, o.pin_config, o.pin_layout, o.is_public, o.allow_edit, o.require_sign_in,
  o.allow_comments, o.title, o.tags, o.provenance, o.created_at, o.updated_at, o.key, o.expected_every_secs, o.last_pushed_at, o.status_rules, o.status, u.keep_above,
  u.prune_above), saved AS (INSERT INTO pin_versions (pin_id, version, pin_type, pin_config, pin_layout, is_public, allow_edit, require_sign_in, allow_comments, title, tags,
  provenance, created_at, updated_at, key, expected_every_secs, last_pushed_at, status_rules, status) SELECT id, version, pin_type, pin_config, pin_layout, is_public, allow_edit,
  require_sign_in, allow_comments, title, tags, provenance, created_at, updated_at, key, expected_every_secs, last_pushed_at, status_rules, status FROM changed WHERE version >
  keep_above), pruned AS (DELETE FROM pin_versions v USING changed c WHERE v.pin_id = c.id AND v.version <= c.keep_above AND v.version > c.prune_above) SELECT c.id,
  COALESCE(array_agg(pl.pinboard_id) FILTER (WHERE pl.pinboard_id IS NOT NULL), '{}') FROM changed c LEFT JOIN placements pl ON pl.pin_id = c.id GROUP BY c.id;
WITH locked AS MATERIALIZED ( SELECT pg_advisory_xact_lock(7277, hashtext(w)) FROM (SELECT DISTINCT unnest(:wss::text[]) AS w ORDER BY 1) ws),
  appended AS (INSERT INTO events (workspace_id, event, resource_id, version, boards, at, data) SELECT e.ws, e.event, e.id, e.version, ARRAY(SELECT jsonb_array_elements_text(e.boards::jsonb)), e.at, e.data FROM UNNEST(:wss::text[], :events::text[], :ids::text[], :versions::int8[], :boards::text[], :nows::int8[], :datas::text[]) WITH ORDINALITY AS e (ws, event, id, version, boards, at, data, n) WHERE (SELECT count(*) FROM locked) >= 0 ORDER BY e.n RETURNING workspace_id)
  SELECT count(pg_notify('corkboard_events', w)) FROM (SELECT DISTINCT workspace_id AS w FROM appended) n;
COMMIT;
