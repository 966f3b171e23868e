//! Users, their workspace roles, custom roles and a workspace's API keys in the store:
//! [`IdentityBackend`], which both stores implement next to [`super::Backend`] (in
//! `sqlite_identity.rs` and `postgres_identity.rs`).

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
pub(crate) trait IdentityBackend {
    /// The user of `subject` in workspace `workspace` (a name): one read, the path of
    /// every request made with an ID token.
    async fn find_member(&self, subject: &str, workspace: &str) -> Result<Option<Member>>;
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
}

pub(super) fn already_collaborator() -> Error {
    Error::Conflict("the user is already a collaborator of this pinboard".into())
}

pub(super) fn role_taken(name: &str) -> Error {
    Error::Conflict(format!("a role named `{name}` already exists"))
}

/// SQLite's and PostgreSQL's codes for a unique violation.
pub(super) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("2067" | "1555" | "23505")))
}

pub(super) const FIND_MEMBER: &str =
    "SELECT u.id AS user_id, m.workspace_id, u.email, m.role FROM users u \
     JOIN memberships m ON m.user_id = u.id JOIN workspaces w ON w.id = m.workspace_id \
     WHERE u.subject = $1 AND w.name = $2";
pub(super) const ENSURE_WORKSPACE: &str =
    "INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING";
pub(super) const UPSERT_USER: &str =
    "INSERT INTO users (id, subject, email, created_at) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (subject) DO UPDATE SET email = excluded.email";
/// `$5` true: the token named the role, which replaces the stored one.
pub(super) const UPSERT_MEMBERSHIP: &str = "INSERT INTO memberships (workspace_id, user_id, role, created_at) \
     SELECT w.id, u.id, $3, $4 FROM workspaces w, users u WHERE w.name = $1 AND u.subject = $2 \
     ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = CASE WHEN $5 THEN excluded.role ELSE memberships.role END";
pub(super) const INSERT_ROLE: &str =
    "INSERT INTO roles (workspace_id, name, scopes, created_at) VALUES ($1, $2, $3, $4)";
pub(super) const FIND_ROLE: &str =
    "SELECT name, scopes, created_at FROM roles WHERE workspace_id = $1 AND name = $2";
pub(super) const LIST_ROLES: &str =
    "SELECT name, scopes, created_at FROM roles WHERE workspace_id = $1 ORDER BY created_at, name";
pub(super) const WORKSPACE_KEYS: &str =
    "SELECT * FROM api_keys WHERE workspace_id = $1 ORDER BY created_at DESC, id";
pub(super) const REVOKE_WORKSPACE_KEY: &str = "UPDATE api_keys SET revoked_at = $3 \
     WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL";
pub(super) const FIND_USERS: &str =
    "SELECT id, email FROM users WHERE id = $1 OR email = $1 ORDER BY id LIMIT 2";
pub(super) const ADD_COLLABORATOR: &str =
    "INSERT INTO collaborators (pinboard_id, user_id, role, added_at) \
     SELECT id, $3, $4, $5 FROM pinboards WHERE workspace_id = $1 AND id = $2";
pub(super) const COLLABORATORS: &str =
    "SELECT c.user_id, u.email, c.role, c.added_at FROM collaborators c \
     JOIN users u ON u.id = c.user_id JOIN pinboards p ON p.id = c.pinboard_id \
     WHERE p.workspace_id = $1 AND c.pinboard_id = $2 ORDER BY c.added_at, c.user_id";
pub(super) const SET_COLLABORATOR_ROLE: &str =
    "UPDATE collaborators SET role = $4 WHERE pinboard_id = $2 AND user_id = $3 \
     AND pinboard_id IN (SELECT id FROM pinboards WHERE workspace_id = $1)";
pub(super) const REMOVE_COLLABORATOR: &str =
    "DELETE FROM collaborators WHERE pinboard_id = $2 AND user_id = $3 \
     AND pinboard_id IN (SELECT id FROM pinboards WHERE workspace_id = $1)";
pub(super) const BOARD_GRANT: &str = "SELECT p.workspace_id, c.role FROM collaborators c \
     JOIN pinboards p ON p.id = c.pinboard_id WHERE c.pinboard_id = $1 AND c.user_id = $2";
