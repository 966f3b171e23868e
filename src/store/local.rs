//! Local accounts in the store ([`LocalStore`]): setup tokens and the users who sign in with
//! a password, written once for both databases. A setup is one transaction that consumes
//! its token first, so a link makes at most one owner however many tabs submit it.

use super::sql::Begin as _;
use subtle::ConstantTimeEq;

use super::keys::ENSURE_WORKSPACE;
use super::sql::{Backend, Record};
use crate::error::Result;

/// What a completed setup writes: the owner of workspace `workspace`.
#[derive(Clone)]
pub struct NewOwner<'a> {
    /// Hex SHA-256 of the link's token.
    pub token_hash: &'a str,
    pub name: &'a str,
    /// Lower-case.
    pub email: &'a str,
    /// The password's Argon2id PHC string.
    pub password_hash: &'a str,
    pub workspace: &'a str,
    pub now: i64,
}

impl std::fmt::Debug for NewOwner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewOwner")
            .field("email", &self.email)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

/// A user who may sign in with a password, and the workspace a session of theirs opens.
#[derive(Clone)]
pub struct PasswordUser {
    pub subject: String,
    /// The workspace's name.
    pub workspace: String,
    pub password_hash: String,
}

impl std::fmt::Debug for PasswordUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordUser")
            .field("subject", &self.subject)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

pub(crate) trait LocalStore {
    /// Stores a new setup token, removing every older one.
    async fn replace_setup_token(&self, token_hash: &str, now: i64, expires_at: i64) -> Result<()>;
    /// Whether `token_hash` is the hash of a setup token still valid at `now`.
    async fn setup_token_open(&self, token_hash: &str, now: i64) -> Result<bool>;
    /// Consumes the token and makes its person (a new password user, or the one of that
    /// email, whose name and password it sets) the workspace's owner; their subject, or `None`
    /// when the token is unknown, used or expired (then nothing is written).
    async fn complete_setup(&self, owner: &NewOwner<'_>) -> Result<Option<String>>;
    /// The password user of `email` (lower-case), with their membership of `prefer` when
    /// they have one, else their first; `None` without a password or a membership.
    async fn password_user(&self, email: &str, prefer: &str) -> Result<Option<PasswordUser>>;
}

const DELETE_SETUP_TOKENS: &str = "DELETE FROM setup_tokens";
const INSERT_SETUP_TOKEN: &str =
    "INSERT INTO setup_tokens (token_hash, created_at, expires_at) VALUES ($1, $2, $3)";
/// Every live token (at most one: a new link removes the older ones), so the caller can
/// compare hashes in constant time rather than let an index lookup do it.
const LIVE_SETUP_TOKENS: &str = "SELECT token_hash FROM setup_tokens WHERE expires_at > $1";
const FIND_PASSWORD_USER_ID: &str =
    "SELECT id, subject FROM users WHERE email = $1 AND password_hash IS NOT NULL";
const SET_PASSWORD: &str = "UPDATE users SET name = $2, password_hash = $3 WHERE id = $1";
const INSERT_PASSWORD_USER: &str = "INSERT INTO users (id, subject, email, created_at, name, \
     password_hash) VALUES ($1, $2, $3, $4, $5, $6)";
const MAKE_OWNER: &str = "INSERT INTO memberships (workspace_id, user_id, role, created_at) \
     SELECT w.id, $2, 'owner', $3 FROM workspaces w WHERE w.name = $1 \
     ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role";
const PASSWORD_USER: &str = "SELECT u.subject, u.password_hash, w.name AS workspace \
     FROM users u JOIN memberships m ON m.user_id = u.id JOIN workspaces w ON w.id = m.workspace_id \
     WHERE u.email = $1 AND u.password_hash IS NOT NULL \
     ORDER BY CASE WHEN w.name = $2 THEN 0 ELSE 1 END, m.created_at LIMIT 1";

/// Whether `given` is among `live`, comparing every one in constant time.
fn any_matches(live: &[String], given: &str) -> bool {
    live.iter().fold(false, |found, hash| {
        found | bool::from(hash.as_bytes().ct_eq(given.as_bytes()))
    })
}

fn hashes(rows: &[impl Record]) -> Result<Vec<String>> {
    Ok(rows
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, sqlx::Error>>()?)
}

impl<B: Backend> LocalStore for B {
    async fn replace_setup_token(&self, token_hash: &str, now: i64, expires_at: i64) -> Result<()> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        B::query(DELETE_SETUP_TOKENS).execute(&mut *tx).await?;
        B::query(INSERT_SETUP_TOKEN)
            .bind(token_hash)
            .bind(now)
            .bind(expires_at)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn setup_token_open(&self, token_hash: &str, now: i64) -> Result<bool> {
        let rows = B::query(LIVE_SETUP_TOKENS)
            .bind(now)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        Ok(any_matches(&hashes(&rows)?, token_hash))
    }

    async fn complete_setup(&self, owner: &NewOwner<'_>) -> Result<Option<String>> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let live = format!("{LIVE_SETUP_TOKENS}{}", B::FOR_UPDATE);
        let rows = B::query(&live).bind(owner.now).fetch_all(&mut *tx).await?;
        if !any_matches(&hashes(&rows)?, owner.token_hash) {
            return Ok(None);
        }
        B::query(DELETE_SETUP_TOKENS).execute(&mut *tx).await?;
        B::query(ENSURE_WORKSPACE)
            .bind(crate::ids::new_id("ws-"))
            .bind(owner.workspace)
            .bind(owner.now)
            .execute(&mut *tx)
            .await?;
        let find = format!("{FIND_PASSWORD_USER_ID}{}", B::FOR_UPDATE);
        let found = B::query(&find)
            .bind(owner.email)
            .fetch_optional(&mut *tx)
            .await?;
        let (user_id, subject): (String, String) = match found {
            Some(row) => {
                let id: String = row.get("id")?;
                B::query(SET_PASSWORD)
                    .bind(&id)
                    .bind(owner.name)
                    .bind(owner.password_hash)
                    .execute(&mut *tx)
                    .await?;
                (id, row.get("subject")?)
            }
            None => {
                let id = crate::ids::new_id("usr-");
                let subject = format!("local:{id}");
                B::query(INSERT_PASSWORD_USER)
                    .bind(&id)
                    .bind(&subject)
                    .bind(owner.email)
                    .bind(owner.now)
                    .bind(owner.name)
                    .bind(owner.password_hash)
                    .execute(&mut *tx)
                    .await?;
                (id, subject)
            }
        };
        B::query(MAKE_OWNER)
            .bind(owner.workspace)
            .bind(&user_id)
            .bind(owner.now)
            .execute(&mut *tx)
            .await?;
        super::invitations::bind_pending::<B>(&mut *tx, owner.email, &user_id).await?;
        let committed = tx.commit().await;
        self.auth().changed();
        committed?;
        Ok(Some(subject))
    }

    async fn password_user(&self, email: &str, prefer: &str) -> Result<Option<PasswordUser>> {
        let row = B::query(PASSWORD_USER)
            .bind(email)
            .bind(prefer)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.map(|r| {
            Ok(PasswordUser {
                subject: r.get("subject")?,
                workspace: r.get("workspace")?,
                password_hash: r.get("password_hash")?,
            })
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::any_matches;

    #[test]
    fn a_token_matches_only_its_own_hash() {
        let live = vec!["ab".repeat(32)];
        assert!(any_matches(&live, &"ab".repeat(32)));
        assert!(!any_matches(&live, &"ab".repeat(31)));
        assert!(!any_matches(&live, &"cd".repeat(32)));
        assert!(!any_matches(&[], &"ab".repeat(32)));
    }
}
