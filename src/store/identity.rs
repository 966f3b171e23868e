//! Users, their workspace roles, custom roles and a workspace's API keys in the store:
//! [`IdentityStore`], written once for both databases. A sign-in is one transaction, and
//! concurrent first sign-ins of one user meet in the upserts.

use super::sql::Begin as _;

use super::keys::{key_from_row, ENSURE_WORKSPACE};
use super::sql::{is_unique_violation, Backend, Record};
use super::KeyRow;
use crate::error::{Error, Result};

/// A user as a member of one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub user_id: String,
    pub workspace_id: String,
    pub email: Option<String>,
    /// `owner`, `editor`, `viewer` or a custom role's name.
    pub role: String,
}

/// Who signed in, as their ID token says.
#[derive(Debug, Clone)]
pub struct SignIn<'a> {
    /// The token's `sub`.
    pub subject: &'a str,
    pub email: Option<&'a str>,
    /// Workspace name, `[a-z0-9-]{1,64}`; created when new.
    pub workspace: &'a str,
    /// The role the token names; `None` keeps a member's stored role.
    pub claimed_role: Option<&'a str>,
    /// The role of a new member when the token names none.
    pub default_role: &'a str,
    pub now: i64,
}

/// A custom role of a workspace.
#[derive(Debug, Clone)]
pub struct RoleRow {
    pub name: String,
    /// Comma list, as `api_keys.scopes`.
    pub scopes: String,
    pub created_at: i64,
}

/// A user as found by id or email.
#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: String,
    pub email: Option<String>,
}

/// A user's role on one board.
#[derive(Debug, Clone)]
pub struct Collaborator {
    pub user_id: String,
    pub email: Option<String>,
    pub role: String,
    pub added_at: i64,
}

/// The identity half of what both stores implement. Every method but the sign-in ones
/// takes the caller's workspace id.
pub(crate) trait IdentityStore {
    /// The user of `subject` in workspace `workspace` (a name): one read, the path of
    /// every request made with an ID token.
    async fn find_member(&self, subject: &str, workspace: &str) -> Result<Option<Member>>;
    /// The role of user `user_id` in the workspace `ws`, if a member.
    async fn member_role(&self, ws: &str, user_id: &str) -> Result<Option<String>>;
    /// Creates what is missing (workspace, user, membership) and records the token's
    /// email and claimed role, in one transaction.
    async fn enroll(&self, who: &SignIn<'_>) -> Result<Member>;
    /// 409 `CONFLICT` when the workspace already has a role of that name.
    async fn insert_role(&self, ws: &str, role: &RoleRow) -> Result<()>;
    async fn find_role(&self, ws: &str, name: &str) -> Result<Option<RoleRow>>;
    /// Oldest first.
    async fn list_roles(&self, ws: &str) -> Result<Vec<RoleRow>>;
    /// The workspace's keys (no secrets), newest first.
    async fn workspace_keys(&self, ws: &str) -> Result<Vec<KeyRow>>;
    /// False when the workspace has no live key of that id.
    async fn revoke_workspace_key(&self, ws: &str, id: &str, at: i64) -> Result<bool>;
    /// Users whose id or email is `user` (at most two: enough to tell one from many).
    async fn find_users(&self, user: &str) -> Result<Vec<UserRow>>;
    /// False when the workspace has no such board; 409 when the user is on it already.
    async fn add_collaborator(&self, ws: &str, board_id: &str, who: &Collaborator) -> Result<bool>;
    /// The board's collaborators, first added first (the board is known to exist).
    async fn collaborators(&self, ws: &str, board_id: &str) -> Result<Vec<Collaborator>>;
    /// False when the user is not a collaborator of the workspace's board.
    async fn set_collaborator_role(
        &self,
        ws: &str,
        board_id: &str,
        user_id: &str,
        role: &str,
    ) -> Result<bool>;
    async fn remove_collaborator(&self, ws: &str, board_id: &str, user_id: &str) -> Result<bool>;
    /// For a user's request on a board: the board's workspace and the user's role on it.
    /// The one lookup without a workspace, as the grant itself is what crosses workspaces.
    async fn board_grant(&self, board_id: &str, user_id: &str) -> Result<Option<(String, String)>>;
    /// The user's collaborator roles on the boards of workspace `ws` where pin `pin_id` is
    /// placed.
    async fn grants_holding_pin(
        &self,
        ws: &str,
        pin_id: &str,
        user_id: &str,
    ) -> Result<Vec<String>>;
}

fn already_collaborator() -> Error {
    Error::Conflict("the user is already a collaborator of this pinboard".into())
}

fn role_taken(name: &str) -> Error {
    Error::Conflict(format!("a role named `{name}` already exists"))
}

const FIND_MEMBER: &str = "SELECT u.id AS user_id, m.workspace_id, u.email, m.role FROM users u \
     JOIN memberships m ON m.user_id = u.id JOIN workspaces w ON w.id = m.workspace_id \
     WHERE u.subject = $1 AND w.name = $2";
const MEMBER_ROLE: &str = "SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2";
const UPSERT_USER: &str =
    "INSERT INTO users (id, subject, email, created_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (subject) DO UPDATE SET email = excluded.email";
/// `$5` true: the token named the role, which replaces the stored one. A row is written only
/// when new or when its role changes (the count tells the key cache, see `auth_epoch.rs`).
const UPSERT_MEMBERSHIP: &str =
    "INSERT INTO memberships (workspace_id, user_id, role, created_at) \
     SELECT w.id, u.id, $3, $4 FROM workspaces w, users u WHERE w.name = $1 AND u.subject = $2 \
     ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role \
     WHERE $5 AND memberships.role <> excluded.role";
const INSERT_ROLE: &str =
    "INSERT INTO roles (workspace_id, name, scopes, created_at) VALUES ($1, $2, $3, $4)";
const FIND_ROLE: &str =
    "SELECT name, scopes, created_at FROM roles WHERE workspace_id = $1 AND name = $2";
const LIST_ROLES: &str =
    "SELECT name, scopes, created_at FROM roles WHERE workspace_id = $1 ORDER BY created_at, name";
const WORKSPACE_KEYS: &str =
    "SELECT * FROM api_keys WHERE workspace_id = $1 ORDER BY created_at DESC, id";
const REVOKE_WORKSPACE_KEY: &str = "UPDATE api_keys SET revoked_at = $3 \
     WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL";
const FIND_USERS: &str =
    "SELECT id, email FROM users WHERE id = $1 OR email = $1 ORDER BY id LIMIT 2";
const ADD_COLLABORATOR: &str = "INSERT INTO collaborators (pinboard_id, user_id, role, added_at) \
     SELECT id, $3, $4, $5 FROM pinboards WHERE workspace_id = $1 AND id = $2";
const COLLABORATORS: &str = "SELECT c.user_id, u.email, c.role, c.added_at FROM collaborators c \
     JOIN users u ON u.id = c.user_id JOIN pinboards p ON p.id = c.pinboard_id \
     WHERE p.workspace_id = $1 AND c.pinboard_id = $2 ORDER BY c.added_at, c.user_id";
const SET_COLLABORATOR_ROLE: &str =
    "UPDATE collaborators SET role = $4 WHERE pinboard_id = $2 AND user_id = $3 \
     AND pinboard_id IN (SELECT id FROM pinboards WHERE workspace_id = $1)";
const REMOVE_COLLABORATOR: &str =
    "DELETE FROM collaborators WHERE pinboard_id = $2 AND user_id = $3 \
     AND pinboard_id IN (SELECT id FROM pinboards WHERE workspace_id = $1)";
const BOARD_GRANT: &str = "SELECT p.workspace_id, c.role FROM collaborators c \
     JOIN pinboards p ON p.id = c.pinboard_id WHERE c.pinboard_id = $1 AND c.user_id = $2";

const GRANTS_HOLDING_PIN: &str = "SELECT c.role FROM placements pl \
     JOIN pinboards b ON b.id = pl.pinboard_id \
     JOIN collaborators c ON c.pinboard_id = pl.pinboard_id \
     WHERE b.workspace_id = $1 AND pl.pin_id = $2 AND c.user_id = $3";

fn member_from_row(row: &impl Record) -> Result<Member> {
    Ok(Member {
        user_id: row.get("user_id")?,
        workspace_id: row.get("workspace_id")?,
        email: row.get("email")?,
        role: row.get("role")?,
    })
}

fn collaborator_from_row(row: &impl Record) -> Result<Collaborator> {
    Ok(Collaborator {
        user_id: row.get("user_id")?,
        email: row.get("email")?,
        role: row.get("role")?,
        added_at: row.get("added_at")?,
    })
}

fn role_from_row(row: &impl Record) -> Result<RoleRow> {
    Ok(RoleRow {
        name: row.get("name")?,
        scopes: row.get("scopes")?,
        created_at: row.get("created_at")?,
    })
}

impl<B: Backend> IdentityStore for B {
    async fn member_role(&self, ws: &str, user_id: &str) -> Result<Option<String>> {
        let row = B::query(MEMBER_ROLE)
            .bind(ws)
            .bind(user_id)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        Ok(row.map(|r| r.get(0)).transpose()?)
    }

    async fn find_member(&self, subject: &str, workspace: &str) -> Result<Option<Member>> {
        let row = B::query(FIND_MEMBER)
            .bind(subject)
            .bind(workspace)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(member_from_row).transpose()
    }

    async fn enroll(&self, who: &SignIn<'_>) -> Result<Member> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        B::query(ENSURE_WORKSPACE)
            .bind(crate::ids::new_id("ws-"))
            .bind(who.workspace)
            .bind(who.now)
            .execute(&mut *tx)
            .await?;
        B::query(UPSERT_USER)
            .bind(crate::ids::new_id("usr-"))
            .bind(who.subject)
            .bind(who.email)
            .bind(who.now)
            .execute(&mut *tx)
            .await?;
        let joined_or_moved = B::query(UPSERT_MEMBERSHIP)
            .bind(who.workspace)
            .bind(who.subject)
            .bind(who.claimed_role.unwrap_or(who.default_role))
            .bind(who.now)
            .bind(who.claimed_role.is_some())
            .execute(&mut *tx)
            .await?
            > 0;
        let row = B::query(FIND_MEMBER)
            .bind(who.subject)
            .bind(who.workspace)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(sqlx::Error::RowNotFound)?;
        let member = member_from_row(&row)?;
        if let Some(email) = who.email {
            super::invitations::bind_pending::<B>(&mut *tx, email, &member.user_id).await?;
        }
        let committed = tx.commit().await;
        if joined_or_moved {
            self.auth().changed();
        }
        committed?;
        Ok(member)
    }

    async fn insert_role(&self, ws: &str, role: &RoleRow) -> Result<()> {
        let done = B::query(INSERT_ROLE)
            .bind(ws)
            .bind(&role.name)
            .bind(&role.scopes)
            .bind(role.created_at)
            .execute(&mut *self.writer().await?)
            .await;
        self.auth().changed();
        match done {
            Err(e) if is_unique_violation(&e) => Err(role_taken(&role.name)),
            other => other.map(|_| ()).map_err(Into::into),
        }
    }

    async fn find_role(&self, ws: &str, name: &str) -> Result<Option<RoleRow>> {
        let row = B::query(FIND_ROLE)
            .bind(ws)
            .bind(name)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.as_ref().map(role_from_row).transpose()
    }

    async fn list_roles(&self, ws: &str) -> Result<Vec<RoleRow>> {
        let rows = B::query(LIST_ROLES)
            .bind(ws)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(role_from_row).collect()
    }

    async fn workspace_keys(&self, ws: &str) -> Result<Vec<KeyRow>> {
        let rows = B::query(WORKSPACE_KEYS)
            .bind(ws)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(key_from_row).collect()
    }

    async fn revoke_workspace_key(&self, ws: &str, id: &str, at: i64) -> Result<bool> {
        let done = B::query(REVOKE_WORKSPACE_KEY)
            .bind(ws)
            .bind(id)
            .bind(at)
            .execute(&mut *self.writer().await?)
            .await;
        self.auth().changed();
        Ok(done? == 1)
    }

    async fn find_users(&self, user: &str) -> Result<Vec<UserRow>> {
        let rows = B::query(FIND_USERS)
            .bind(user)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(UserRow {
                    id: r.get("id")?,
                    email: r.get("email")?,
                })
            })
            .collect()
    }

    async fn add_collaborator(&self, ws: &str, board_id: &str, who: &Collaborator) -> Result<bool> {
        let done = B::query(ADD_COLLABORATOR)
            .bind(ws)
            .bind(board_id)
            .bind(&who.user_id)
            .bind(&who.role)
            .bind(who.added_at)
            .execute(&mut *self.writer().await?)
            .await;
        match done {
            Err(e) if is_unique_violation(&e) => Err(already_collaborator()),
            other => Ok(other? == 1),
        }
    }

    async fn collaborators(&self, ws: &str, board_id: &str) -> Result<Vec<Collaborator>> {
        let rows = B::query(COLLABORATORS)
            .bind(ws)
            .bind(board_id)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(collaborator_from_row).collect()
    }

    async fn set_collaborator_role(
        &self,
        ws: &str,
        board_id: &str,
        user_id: &str,
        role: &str,
    ) -> Result<bool> {
        let done = B::query(SET_COLLABORATOR_ROLE)
            .bind(ws)
            .bind(board_id)
            .bind(user_id)
            .bind(role)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn remove_collaborator(&self, ws: &str, board_id: &str, user_id: &str) -> Result<bool> {
        let done = B::query(REMOVE_COLLABORATOR)
            .bind(ws)
            .bind(board_id)
            .bind(user_id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn board_grant(&self, board_id: &str, user_id: &str) -> Result<Option<(String, String)>> {
        let row = B::query(BOARD_GRANT)
            .bind(board_id)
            .bind(user_id)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.map(|r| Ok((r.get("workspace_id")?, r.get("role")?)))
            .transpose()
    }

    async fn grants_holding_pin(
        &self,
        ws: &str,
        pin_id: &str,
        user_id: &str,
    ) -> Result<Vec<String>> {
        let rows = B::query(GRANTS_HOLDING_PIN)
            .bind(ws)
            .bind(pin_id)
            .bind(user_id)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(|r| Ok(r.get("role")?)).collect()
    }
}
