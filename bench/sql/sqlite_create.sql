-- What one POST /v1/pins (stat-cards) runs on SQLite, its key's principal kept
-- (auth/key_cache.rs: no lookup of the key): the insert (store::INSERT_PIN) on the writer. The text is the store's with
-- named parameters for `$n`; `cargo test bench_sql` fails if they differ.
-- bench/sqlite_ceiling.py runs it in a loop with the store's pragmas.
INSERT INTO pins (id, workspace_id, pin_type, pin_config, pin_layout, is_public, title, tags, provenance, version, created_at, updated_at, key,
    expected_every_secs, last_pushed_at, stale_due_at, status_rules, status, status_due)
  VALUES (:id, :ws, :pin_type, :config, :layout, :public, :title, :tags, :provenance, :version, :now, :now, :key, :expected, :now, :due,
    NULL, NULL, NULL);
