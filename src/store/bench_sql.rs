//! `bench/sql/` runs, beside the service, the statements one create, one read, one list, one
//! batch and one update run (pgbench on PostgreSQL, `bench/sqlite_ceiling.py` on SQLite). These tests keep them the same text:
//! each file's statements must equal the store's constants with every `$n` replaced by the
//! file's value for it (a `:variable`, or the literal `NULL` pgbench can't send).
//!
//! Normalisation before comparing: lines starting with `--` (comments) or `\` (pgbench
//! meta-commands) are dropped, the rest is split at `;` and at `\gset`, queries ended by
//! `\gset` (the benchmark's own, filling variables) are dropped, and each run of whitespace
//! becomes one space.

use super::{
    pins::{INSERT_PIN, LIST_PIN_KEYS},
    postgres,
};
use crate::limits::postgres::CHECK;

/// The statements of a `bench/sql/` file, normalised.
fn statements(file: &str) -> Vec<String> {
    let path = format!("{}/bench/sql/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let sql = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("--") && !l.trim_start().starts_with('\\'))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("\\gset", "\\gset;");
    sql.split(';')
        .map(collapse)
        .filter(|s| !s.is_empty() && !s.ends_with("\\gset"))
        .collect()
}

fn collapse(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `sql` with `$1`, `$2`, ... replaced by `values[0]`, `values[1]`, ...
fn substituted(sql: &str, values: &[&str]) -> String {
    let mut text = sql.to_owned();
    // Highest first, so `$1` never eats the start of `$10`.
    for (i, value) in values.iter().enumerate().rev() {
        text = text.replace(&format!("${}", i + 1), value);
    }
    assert!(!text.contains('$'), "a parameter has no value in: {text}");
    collapse(&text)
}

fn assert_runs(file: &str, expected: &[(&str, &[&str])]) {
    let found = statements(file);
    let expected: Vec<String> = expected
        .iter()
        .map(|(sql, values)| substituted(sql, values))
        .collect();
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(
            found.get(i),
            Some(want),
            "statement {} of bench/sql/{file} is not what the store runs; expected:\n{want};",
            i + 1
        );
    }
    assert_eq!(
        found.len(),
        expected.len(),
        "bench/sql/{file}: extra statements"
    );
}

const LIMIT_CHECK: [&str; 10] = [
    ":key",
    ":now",
    ":minute_ms",
    ":hour_ms",
    ":write_ms",
    ":cost",
    ":write_cost",
    ":per_minute",
    ":per_hour",
    ":write_capacity",
];

const PG_INSERT_PIN: [&str; 19] = [
    ":id",
    ":ws",
    ":pin_type",
    ":config",
    ":layout",
    ":public",
    "NULL",
    ":tags",
    "NULL",
    ":version",
    ":now",
    ":now",
    "NULL",
    "NULL",
    ":now",
    "NULL",
    "NULL",
    "NULL",
    "NULL",
];

#[test]
fn pgbench_create_runs_what_a_postgres_create_runs() {
    assert_runs(
        "create.sql",
        &[(&CHECK, &LIMIT_CHECK), (INSERT_PIN, &PG_INSERT_PIN)],
    );
}

#[test]
fn pgbench_read_runs_what_a_postgres_get_runs() {
    assert_runs(
        "read.sql",
        &[(&CHECK, &LIMIT_CHECK), (postgres::GET_PIN, &[":ws", ":id"])],
    );
}

#[test]
fn pgbench_list_runs_what_a_postgres_list_runs() {
    let keys = format!("{}{}201", LIST_PIN_KEYS, postgres::NEWEST_FIRST);
    assert_runs("list.sql", &[(&CHECK, &LIMIT_CHECK), (&keys, &[":ws"])]);
}

#[test]
fn pgbench_batch_runs_what_a_postgres_batch_runs() {
    let arrays = [
        ":wss",
        ":ids",
        ":types",
        ":configs",
        ":layouts",
        ":publics",
        ":nulls",
        ":tags",
        ":nulls",
        ":versions",
        ":nows",
        ":nows",
        ":nulls",
        ":nullints",
        ":nows",
        ":nullints",
        ":nulls",
        ":nulls",
        ":nullints",
    ];
    assert_runs(
        "batch.sql",
        &[
            (&CHECK, &LIMIT_CHECK),
            (postgres::insert::INSERT_PINS, &arrays),
        ],
    );
}

/// One update as the group commit writes it alone: stored from one-element arrays, then its
/// event appended, in one transaction.
#[test]
fn pgbench_update_runs_what_a_postgres_update_runs() {
    let update = [
        ":wss",
        ":ids",
        ":expected",
        ":types",
        ":configs",
        ":layouts",
        ":publics",
        ":titles",
        ":tags",
        ":provenances",
        ":versions",
        ":nows",
        ":edits",
        ":sign_ins",
        ":comments",
        ":pin_keys",
        ":keep_above",
        ":expecteds",
        ":nows",
        ":dues",
        ":rules",
        ":statuses",
        ":status_dues",
        ":prune_above",
    ];
    let event = [
        ":wss",
        ":events",
        ":ids",
        ":versions",
        ":boards",
        ":nows",
        ":datas",
    ];
    assert_runs(
        "update.sql",
        &[
            (&CHECK, &LIMIT_CHECK),
            (postgres::GET_PIN, &[":ws", ":id"]),
            ("BEGIN", &[]),
            (postgres::commit::UPDATE_PINS, &update),
            (postgres::events::APPEND_EVENTS, &event),
            ("COMMIT", &[]),
        ],
    );
}

#[test]
fn sqlite_ceiling_runs_what_a_sqlite_create_runs() {
    let insert = [
        ":id",
        ":ws",
        ":pin_type",
        ":config",
        ":layout",
        ":public",
        ":title",
        ":tags",
        ":provenance",
        ":version",
        ":now",
        ":now",
        ":key",
        ":expected",
        ":now",
        ":due",
        "NULL",
        "NULL",
        "NULL",
    ];
    assert_runs("sqlite_create.sql", &[(INSERT_PIN, &insert)]);
}
