-- The smallest durable write: one row of 200 changed and committed, nothing else. pgbench runs
-- it at the updates' 32 clients on a database of its own (bench/run.sh, bench_updates); its
-- p99 is what this machine's disk lets any durable write show, the floor beside our PATCH p99.
\set id random(1, 200)
UPDATE commit_floor SET n = n + 1 WHERE id = :id;
