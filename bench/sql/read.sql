-- What one GET /v1/pins/{id} runs on PostgreSQL: the key lookup, the rate-limit check, the
-- select. pgbench -M prepared -D lookup=... -D ws=... -D key=... -D pin=<pin id>
SELECT * FROM api_keys WHERE lookup = :lookup;
INSERT INTO rate_limit_windows AS r (subject, minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted) VALUES (:key, 0, 1, 0, 1, 0, 0, true) ON CONFLICT (subject) DO UPDATE SET minute_start = CASE WHEN r.minute_start + 60000 > 0 THEN r.minute_start ELSE 0 END, minute_used = (CASE WHEN r.minute_start + 60000 > 0 THEN r.minute_used ELSE 0 END) + 1, hour_start = r.hour_start, hour_used = r.hour_used + 1, write_start = r.write_start, write_used = r.write_used, granted = true RETURNING minute_start, minute_used, hour_start, hour_used, write_start, write_used, granted;
SELECT id, pin_type, pin_config, pin_layout, is_public, title, tags, provenance, version, created_at, updated_at FROM pins WHERE workspace_id = :ws AND id = ANY(ARRAY[:pin::text]);
