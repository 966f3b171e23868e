//! Web sign-in sessions ([`SessionStore`]) and the boards a signed-in user reaches through
//! collaborator roles: written once for both databases. A session is found by the SHA-256
//! of its cookie's random id, only while unexpired; logout deletes it, so every replica
//! refuses the cookie at once.

use super::boards::board_columns_at;
use super::sql::{Backend, Record};
use super::Pinboard;
use crate::error::Result;

/// A stored session: who signed in (the ID token's `sub` and workspace name) and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Hex SHA-256 of the cookie's id.
    pub id_hash: String,
    pub subject: String,
    pub workspace: String,
    pub created_at: i64,
    pub expires_at: i64,
}

pub(crate) trait SessionStore {
    /// Stores a new session and drops the expired ones.
    async fn insert_session(&self, session: &SessionRow) -> Result<()>;
    /// The session of `id_hash` when it is still valid at `now`.
    async fn find_session(&self, id_hash: &str, now: i64) -> Result<Option<SessionRow>>;
    /// False when there was no such session.
    async fn delete_session(&self, id_hash: &str) -> Result<bool>;
    /// Boards of any workspace where `user_id` is a collaborator, newest first, at most
    /// `limit`.
    async fn collaborator_boards(&self, user_id: &str, limit: i64) -> Result<Vec<Pinboard>>;
}

const INSERT_SESSION: &str = "INSERT INTO web_sessions (id_hash, subject, workspace, created_at, \
     expires_at) VALUES ($1, $2, $3, $4, $5)";
const PRUNE_SESSIONS: &str = "DELETE FROM web_sessions WHERE expires_at <= $1";
const FIND_SESSION: &str = "SELECT id_hash, subject, workspace, created_at, expires_at \
     FROM web_sessions WHERE id_hash = $1 AND expires_at > $2";
const DELETE_SESSION: &str = "DELETE FROM web_sessions WHERE id_hash = $1";

fn session_from_row(row: &impl Record) -> Result<SessionRow> {
    Ok(SessionRow {
        id_hash: row.get("id_hash")?,
        subject: row.get("subject")?,
        workspace: row.get("workspace")?,
        created_at: row.get("created_at")?,
        expires_at: row.get("expires_at")?,
    })
}

impl<B: Backend> SessionStore for B {
    async fn insert_session(&self, session: &SessionRow) -> Result<()> {
        let mut conn = self.writer().await?;
        B::query(PRUNE_SESSIONS)
            .bind(session.created_at)
            .execute(&mut *conn)
            .await?;
        B::query(INSERT_SESSION)
            .bind(&session.id_hash)
            .bind(&session.subject)
            .bind(&session.workspace)
            .bind(session.created_at)
            .bind(session.expires_at)
            .execute(&mut *conn)
            .await?;
        Ok(())
    }

    async fn find_session(&self, id_hash: &str, now: i64) -> Result<Option<SessionRow>> {
        let row = B::query(FIND_SESSION)
            .bind(id_hash)
            .bind(now)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(session_from_row).transpose()
    }

    async fn delete_session(&self, id_hash: &str) -> Result<bool> {
        let done = B::query(DELETE_SESSION)
            .bind(id_hash)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn collaborator_boards(&self, user_id: &str, limit: i64) -> Result<Vec<Pinboard>> {
        let sql = format!(
            "SELECT {} FROM pinboards p JOIN collaborators c ON c.pinboard_id = p.id \
             WHERE c.user_id = $1 ORDER BY p.updated_at DESC, p.id LIMIT $2",
            board_columns_at("p.")
        );
        let rows = B::query(&sql)
            .bind(user_id)
            .bind(limit)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(|r| super::boards::board_at(r, 0)).collect()
    }
}
