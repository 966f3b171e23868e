-- What one POST /v1/pins (stat-cards) runs on PostgreSQL: the key lookup, the rate-limit
-- check (one upsert), and the insert (one statement, no explicit transaction).
-- pgbench -M prepared -D lookup=<key lookup> -D ws=<workspace id> -D key=<key id>
\set n random(1, 2000000000)
SELECT * FROM api_keys WHERE lookup = :lookup;
INSERT INTO rate_limit_windows AS r (subject, minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted) VALUES (:key, 0, 1, 0, 1, 0, 1, true) ON CONFLICT (subject) DO UPDATE SET minute_start = CASE WHEN r.minute_start + 60000 > 0 THEN r.minute_start ELSE 0 END, minute_used = (CASE WHEN r.minute_start + 60000 > 0 THEN r.minute_used ELSE 0 END) + 1, hour_start = r.hour_start, hour_used = r.hour_used + 1, write_start = r.write_start, write_used = r.write_used + 1, granted = true RETURNING minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted;
INSERT INTO pins (id, workspace_id, pin_type, pin_config, pin_layout, is_public, title, tags, provenance, version, created_at, updated_at) VALUES ('p-bench-' || :client_id || '-' || :n || '-' || md5(random()::text), :ws, 'stat-cards', '{"cards":[{"change":"+4%","title":"Revenue","trend":"up","value":"$1.2M"}]}', '1x1', false, NULL, '{}', NULL, 1, 0, 0);
