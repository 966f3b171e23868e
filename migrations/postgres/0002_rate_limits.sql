-- Rate-limit windows per key. UNLOGGED: counters are not data that must survive a crash,
-- and skipping the WAL keeps the one statement per check cheap.
CREATE UNLOGGED TABLE rate_limit_windows (
    subject      TEXT PRIMARY KEY,
    minute_start BIGINT NOT NULL,
    minute_used  BIGINT NOT NULL,
    hour_start   BIGINT NOT NULL,
    hour_used    BIGINT NOT NULL,
    write_start  BIGINT NOT NULL,
    write_used   BIGINT NOT NULL,
    granted      BOOLEAN NOT NULL
);
