//! HTTP tests of the whole API against the real router, on SQLite and on PostgreSQL.
//! One binary: every module below shares it, and tests run in parallel.

mod helpers;
mod smoke;
mod batch;
mod lists;
mod pins;
