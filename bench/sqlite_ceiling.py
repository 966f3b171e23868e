"""The SQLite ceiling for POST /v1/pins: the same statements (key lookup, insert) with the same
pragmas (WAL, synchronous=FULL), one transaction per pin, for SECONDS. Prints inserts/s.

usage: sqlite_ceiling.py DB_FILE LOOKUP WORKSPACE_ID SECONDS
"""
import os
import sqlite3
import sys
import time

db, lookup, ws, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
conn = sqlite3.connect(db, isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA synchronous=FULL")
config = '{"cards":[{"change":"+4%","title":"Revenue","trend":"up","value":"$1.2M"}]}'
n = 0
start = time.monotonic()
while time.monotonic() - start < seconds:
    conn.execute("SELECT * FROM api_keys WHERE lookup = ?", (lookup,)).fetchall()
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO pins (id, workspace_id, pin_type, pin_config, pin_layout, is_public, title, tags,"
        " provenance, version, created_at, updated_at) VALUES (?, ?, 'stat-cards', ?, '1x1', 0, NULL, '[]', NULL, 1, 0, 0)",
        (f"p-ceiling-{os.getpid()}-{n}", ws, config),
    )
    conn.execute("COMMIT")
    n += 1
print(f"{n / (time.monotonic() - start):.1f}")
