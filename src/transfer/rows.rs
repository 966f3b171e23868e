//! Rows of any table as typed cells, read a page at a time and written many to a statement,
//! over [`Backend`] (both databases, one piece of code).

use std::fmt::Write as _;

use crate::error::Result;
use crate::store::sql::{Backend, Db, Record, Statement};

/// What a column holds, as both databases store it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    OptText,
    Int,
    OptInt,
    /// `INTEGER` 0/1 in SQLite, `BOOLEAN` in PostgreSQL.
    Bool,
    /// A list of strings: JSON text in SQLite, `text[]` in PostgreSQL.
    List,
    /// Text holding JSON (a pin's configuration): embedded as JSON in an archive.
    Json,
    OptJson,
}

/// A column of a table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Col {
    pub name: &'static str,
    pub kind: Kind,
}

pub(crate) const fn col(name: &'static str, kind: Kind) -> Col {
    Col { name, kind }
}

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Text(Option<String>),
    Int(Option<i64>),
    Bool(bool),
    List(Vec<String>),
}

impl Cell {
    fn read(row: &impl Record, index: usize, kind: Kind) -> Result<Cell> {
        Ok(match kind {
            Kind::Text | Kind::Json => Cell::Text(Some(row.get::<String>(index)?)),
            Kind::OptText | Kind::OptJson => Cell::Text(row.get::<Option<String>>(index)?),
            Kind::Int => Cell::Int(Some(row.get::<i64>(index)?)),
            Kind::OptInt => Cell::Int(row.get::<Option<i64>>(index)?),
            Kind::Bool => Cell::Bool(row.get::<bool>(index)?),
            Kind::List => Cell::List(row.list(index)?),
        })
    }

    fn bind<'q, C: Db>(&'q self, statement: Statement<'q, C>) -> Statement<'q, C> {
        match self {
            Cell::Text(text) => statement.bind(text.as_deref()),
            Cell::Int(n) => statement.bind(*n),
            Cell::Bool(b) => statement.bind(*b),
            Cell::List(list) => statement.bind_list(list),
        }
    }
}

/// Where a page of rows is read from: `FROM <from>` (the table as `t`, with its joins),
/// filtered by `filter` (`$1` is the workspace when `workspace` is given), in the order of
/// `key` (columns of `t`, unique together), which the next page starts after.
pub(crate) struct Source<'a> {
    pub from: &'a str,
    pub filter: Option<&'a str>,
    pub key: &'a [Col],
    pub columns: &'a [Col],
}

/// A page of rows: the key's cells, then the columns' cells.
pub(crate) struct Page {
    pub rows: Vec<Vec<Cell>>,
    /// Where the next page starts (the last row's key), `None` after the last page.
    pub after: Option<Vec<Cell>>,
}

impl Source<'_> {
    fn select(&self, after: bool, workspace: bool, limit: usize) -> String {
        let key: Vec<String> = self.key.iter().map(|c| format!("t.{}", c.name)).collect();
        let key = key.join(", ");
        let mut sql = format!("SELECT {key}");
        for c in self.columns {
            let _ = write!(sql, ", t.{}", c.name);
        }
        let _ = write!(sql, " FROM {}", self.from);
        let mut conditions = Vec::new();
        if let Some(filter) = self.filter {
            conditions.push(filter.to_owned());
        }
        if after {
            let first = usize::from(workspace) + 1;
            let params: Vec<String> = (first..first + self.key.len())
                .map(|n| format!("${n}"))
                .collect();
            conditions.push(format!("({key}) > ({})", params.join(", ")));
        }
        if !conditions.is_empty() {
            let _ = write!(sql, " WHERE {}", conditions.join(" AND "));
        }
        let _ = write!(sql, " ORDER BY {key} LIMIT {limit}");
        sql
    }

    /// The page after `after` (the first page for `None`), at most `limit` rows, read on
    /// `conn` (the caller's snapshot).
    pub(crate) async fn page<B: Backend>(
        &self,
        conn: &mut B::Db,
        workspace: Option<&str>,
        after: Option<&[Cell]>,
        limit: usize,
    ) -> Result<Page> {
        let sql = self.select(after.is_some(), workspace.is_some(), limit);
        let mut statement = B::query(&sql);
        if let Some(ws) = workspace {
            statement = statement.bind(ws);
        }
        for cell in after.unwrap_or_default() {
            statement = cell.bind(statement);
        }
        let found = statement.fetch_all(conn).await?;
        let kinds = self.key.iter().chain(self.columns).map(|c| c.kind);
        let kinds: Vec<Kind> = kinds.collect();
        let mut rows = Vec::with_capacity(found.len());
        for row in &found {
            let cells = kinds
                .iter()
                .enumerate()
                .map(|(i, kind)| Cell::read(row, i, *kind))
                .collect::<Result<Vec<_>>>()?;
            rows.push(cells);
        }
        let after = match rows.last() {
            Some(last) if rows.len() == limit => Some(last[..self.key.len()].to_vec()),
            _ => None,
        };
        Ok(Page { rows, after })
    }
}

/// Inserts `rows` (cells in the order of `columns`) into `table`, as many rows a
/// statement as the databases' parameter limits allow. `overriding`: the table's `seq` is
/// an identity column PostgreSQL only takes a value for when told to.
pub(crate) async fn insert<B: Backend>(
    conn: &mut B::Db,
    table: &str,
    columns: &[&str],
    rows: &[Vec<Cell>],
    overriding: bool,
) -> Result<(), sqlx::Error> {
    // SQLite takes at most 32,766 parameters in a statement, PostgreSQL 65,535.
    const PARAMETERS: usize = 30_000;
    let per_statement = (PARAMETERS / columns.len().max(1)).clamp(1, 500);
    for chunk in rows.chunks(per_statement) {
        let mut sql = format!("INSERT INTO {table} ({})", columns.join(", "));
        if overriding {
            sql.push_str(" OVERRIDING SYSTEM VALUE");
        }
        sql.push_str(" VALUES ");
        let mut n = 0;
        for (i, _) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            for c in 0..columns.len() {
                n += 1;
                let _ = write!(sql, "{}${n}", if c > 0 { ", " } else { "" });
            }
            sql.push(')');
        }
        let mut statement = B::query(&sql);
        for row in chunk {
            for cell in row {
                statement = cell.bind(statement);
            }
        }
        statement.execute(conn).await?;
    }
    Ok(())
}

/// The rows of `table` (under `filter`, `$1` the workspace when given).
pub(crate) async fn count<B: Backend>(
    conn: &mut B::Db,
    from: &str,
    filter: Option<&str>,
    workspace: Option<&str>,
) -> Result<i64> {
    let mut sql = format!("SELECT COUNT(*) FROM {from}");
    if let Some(filter) = filter {
        let _ = write!(sql, " WHERE {filter}");
    }
    let mut statement = B::query(&sql);
    if let Some(ws) = workspace {
        statement = statement.bind(ws);
    }
    let row = statement.fetch_optional(conn).await?;
    Ok(row.map(|r| r.get::<i64>(0)).transpose()?.unwrap_or(0))
}
