"""The SQLite ceiling for POST /v1/pins: the statement of sql/sqlite_create.sql (the insert
the store runs; a kept key needs no lookup) with the store's pragmas (WAL, synchronous=FULL), one
transaction per request, for SECONDS. Prints requests/s.

With PINS (default 1), each request stores that many pins in its transaction, the insert run
once per pin (`executemany`), as the ceiling for POST /v1/pins/batch (the store sends them
in one multi-row INSERT).

usage: sqlite_ceiling.py DB_FILE WORKSPACE_ID SECONDS [PINS]
"""
import os
import sqlite3
import sys
import time

db, ws, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
pins = int(sys.argv[4]) if len(sys.argv) > 4 else 1
# The same normalisation as src/bench_sql.rs: comments out, one statement per `;`.
text = open(os.path.join(os.path.dirname(__file__), "sql", "sqlite_create.sql")).read()
sql = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("--"))
(insert_pin,) = [s.strip() for s in sql.split(";") if s.strip()]
conn = sqlite3.connect(db, isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA synchronous=FULL")
pin = {
    "ws": ws,
    "pin_type": "stat-cards",
    "config": '{"cards":[{"change":"+4%","title":"Revenue","trend":"up","value":"$1.2M"}]}',
    "layout": "1x1",
    "public": False,
    "title": None,
    "tags": "[]",
    "provenance": None,
    "key": None,
    "expected": None,
    "due": None,
    "version": 1,
}
n = 0
start = time.monotonic()
while time.monotonic() - start < seconds:
    conn.execute("BEGIN")
    now = int(time.time() * 1000)
    rows = [{**pin, "id": f"p-ceiling-{os.getpid()}-{n:09}-{i:03}", "now": now} for i in range(pins)]
    conn.executemany(insert_pin, rows)
    conn.execute("COMMIT")
    n += 1
print(f"{n / (time.monotonic() - start):.1f}")
