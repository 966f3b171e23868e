//! People in the store ([`InvitationStore`]): a workspace's members, its invitations (only
//! the SHA-256 of a link's token is kept) and the board collaborators invited by an email
//! that has no user yet, written once for both databases. Accepting an invitation is one
//! transaction that consumes it first, so a link makes at most one member however many
//! tabs submit it; the pending board roles of the person's email are bound in it too (and
//! in every enrollment of an identity provider's user: [`bind_pending`]).

use sqlx::Connection as _;

use super::sql::{is_unique_violation, Backend, Record};
use crate::error::{Error, Result};

/// An invitation as stored (never its token).
#[derive(Debug, Clone)]
pub struct InvitationRow {
    /// `inv-...`
    pub id: String,
    /// Lower-case.
    pub email: String,
    pub role: String,
    /// Hex SHA-256 of the link's token.
    pub token_hash: String,
    /// The user or key that made it.
    pub invited_by: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
}

/// A live invitation found by its token: what its page shows.
#[derive(Debug, Clone)]
pub struct OpenInvitation {
    pub email: String,
    pub role: String,
    /// The workspace's name.
    pub workspace: String,
}

/// A member of a workspace, as its people page lists them.
#[derive(Debug, Clone)]
pub struct MemberRow {
    pub user_id: String,
    pub email: Option<String>,
    pub name: Option<String>,
    pub role: String,
    pub created_at: i64,
}

/// A board collaborator invited by an email that no user has yet.
#[derive(Debug, Clone)]
pub struct PendingCollaborator {
    /// Lower-case.
    pub email: String,
    pub role: String,
    pub added_at: i64,
}

/// Who accepts an invitation.
#[derive(Clone)]
pub enum Joiner<'a> {
    /// A new person with a password: a new user of the invitation's email.
    Password {
        name: &'a str,
        password_hash: &'a str,
    },
    /// A signed-in user, whose email must be the invitation's.
    User { user_id: &'a str, email: &'a str },
}

impl std::fmt::Debug for Joiner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Joiner::Password { .. } => f.write_str("Joiner::Password(<redacted>)"),
            Joiner::User { user_id, .. } => write!(f, "Joiner::User({user_id})"),
        }
    }
}

/// What an acceptance came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accepted {
    /// Joined: the member's subject and the workspace's name.
    Joined { subject: String, workspace: String },
    /// The link is unknown, used, revoked or expired.
    Gone,
    /// A password account of that email exists: its owner signs in first.
    HasAccount,
    /// The signed-in user's email is not the invitation's.
    OtherEmail,
}

pub(crate) trait InvitationStore {
    /// Stores an invitation of workspace `ws` unless it has `cap` live ones already
    /// (`false`); an expired one of the same email is replaced, a live one is a 409.
    async fn insert_invitation(
        &self,
        ws: &str,
        row: &InvitationRow,
        now: i64,
        cap: i64,
    ) -> Result<bool>;
    /// The workspace's live invitations, newest first.
    async fn invitations(&self, ws: &str, now: i64) -> Result<Vec<InvitationRow>>;
    /// False when the workspace has no invitation of that id.
    async fn delete_invitation(&self, ws: &str, id: &str) -> Result<bool>;
    /// The live invitation of `token_hash`, if any.
    async fn open_invitation(&self, token_hash: &str, now: i64) -> Result<Option<OpenInvitation>>;
    /// Consumes the live invitation of `token_hash` and makes `joiner` a member with its
    /// role; nothing is written unless the answer is [`Accepted::Joined`].
    async fn accept_invitation(
        &self,
        token_hash: &str,
        joiner: &Joiner<'_>,
        now: i64,
    ) -> Result<Accepted>;
    /// The workspace's members, first joined first.
    async fn members(&self, ws: &str) -> Result<Vec<MemberRow>>;
    /// False when the workspace has no such board; 409 when the email is pending already.
    async fn add_pending_collaborator(
        &self,
        ws: &str,
        board_id: &str,
        who: &PendingCollaborator,
    ) -> Result<bool>;
    /// The board's pending collaborators, first invited first.
    async fn pending_collaborators(
        &self,
        ws: &str,
        board_id: &str,
    ) -> Result<Vec<PendingCollaborator>>;
    /// False when the email is not pending on the workspace's board.
    async fn set_pending_role(
        &self,
        ws: &str,
        board_id: &str,
        email: &str,
        role: &str,
    ) -> Result<bool>;
    /// False when the email is not pending on the workspace's board.
    async fn remove_pending_collaborator(
        &self,
        ws: &str,
        board_id: &str,
        email: &str,
    ) -> Result<bool>;
}

const COLUMNS: &str = "id, email, role, token_hash, invited_by, created_at, expires_at";
const LIVE_COUNT: &str =
    "SELECT COUNT(*) FROM invitations WHERE workspace_id = $1 AND expires_at > $2";
const DELETE_EXPIRED_OF: &str =
    "DELETE FROM invitations WHERE workspace_id = $1 AND email = $2 AND expires_at <= $3";
const INSERT: &str = "INSERT INTO invitations (id, workspace_id, email, role, token_hash, \
     invited_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
const DELETE: &str = "DELETE FROM invitations WHERE workspace_id = $1 AND id = $2";
const OPEN: &str = "SELECT i.email, i.role, w.name AS workspace FROM invitations i \
     JOIN workspaces w ON w.id = i.workspace_id WHERE i.token_hash = $1 AND i.expires_at > $2";
const CONSUME: &str = "DELETE FROM invitations WHERE token_hash = $1 AND expires_at > $2 \
     RETURNING workspace_id, email, role";
const WORKSPACE_NAME: &str = "SELECT name FROM workspaces WHERE id = $1";
const FIND_PASSWORD_USER: &str =
    "SELECT id FROM users WHERE email = $1 AND password_hash IS NOT NULL";
const INSERT_PASSWORD_USER: &str = "INSERT INTO users (id, subject, email, created_at, name, \
     password_hash) VALUES ($1, $2, $3, $4, $5, $6)";
const SUBJECT_OF: &str = "SELECT subject FROM users WHERE id = $1";
const JOIN: &str = "INSERT INTO memberships (workspace_id, user_id, role, created_at) \
     VALUES ($1, $2, $3, $4) ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role";
const MEMBERS: &str = "SELECT u.id AS user_id, u.email, u.name, m.role, m.created_at \
     FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = $1 \
     ORDER BY m.created_at, u.id";
const ADD_PENDING: &str = "INSERT INTO pending_collaborators (pinboard_id, email, role, added_at) \
     SELECT id, $3, $4, $5 FROM pinboards WHERE workspace_id = $1 AND id = $2";
const PENDING: &str = "SELECT c.email, c.role, c.added_at FROM pending_collaborators c \
     JOIN pinboards p ON p.id = c.pinboard_id WHERE p.workspace_id = $1 AND c.pinboard_id = $2 \
     ORDER BY c.added_at, c.email";
const REMOVE_PENDING: &str =
    "DELETE FROM pending_collaborators WHERE pinboard_id = $2 AND email = $3 \
     AND pinboard_id IN (SELECT id FROM pinboards WHERE workspace_id = $1)";
const SET_PENDING_ROLE: &str =
    "UPDATE pending_collaborators SET role = $4 WHERE pinboard_id = $2 AND email = $3 \
     AND pinboard_id IN (SELECT id FROM pinboards WHERE workspace_id = $1)";
const BIND_PENDING: &str = "INSERT INTO collaborators (pinboard_id, user_id, role, added_at) \
     SELECT pinboard_id, $2, role, added_at FROM pending_collaborators WHERE email = $1 \
     ON CONFLICT (pinboard_id, user_id) DO NOTHING";
const CLEAR_PENDING: &str = "DELETE FROM pending_collaborators WHERE email = $1";

fn invitation_from_row(row: &impl Record) -> Result<InvitationRow> {
    Ok(InvitationRow {
        id: row.get("id")?,
        email: row.get("email")?,
        role: row.get("role")?,
        token_hash: row.get("token_hash")?,
        invited_by: row.get("invited_by")?,
        created_at: row.get("created_at")?,
        expires_at: row.get("expires_at")?,
    })
}

fn already_invited() -> Error {
    Error::Conflict("this email has a live invitation already; revoke it first".into())
}

fn already_pending() -> Error {
    Error::Conflict("this email is invited to this pinboard already".into())
}

/// Makes user `user_id` the collaborator every board that invited `email` while it had no
/// user asked for, inside the caller's transaction: called where a user of that email is
/// made or enrolled.
pub(super) async fn bind_pending<B: Backend>(
    tx: &mut B::Db,
    email: &str,
    user_id: &str,
) -> Result<()> {
    B::query(BIND_PENDING)
        .bind(email)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    B::query(CLEAR_PENDING).bind(email).execute(tx).await?;
    Ok(())
}

impl<B: Backend> InvitationStore for B {
    async fn insert_invitation(
        &self,
        ws: &str,
        row: &InvitationRow,
        now: i64,
        cap: i64,
    ) -> Result<bool> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let live: i64 = B::query(LIVE_COUNT)
            .bind(ws)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| r.get(0))
            .transpose()?
            .unwrap_or(0);
        if live >= cap {
            return Ok(false);
        }
        B::query(DELETE_EXPIRED_OF)
            .bind(ws)
            .bind(&row.email)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        let done = B::query(INSERT)
            .bind(&row.id)
            .bind(ws)
            .bind(&row.email)
            .bind(&row.role)
            .bind(&row.token_hash)
            .bind(row.invited_by.as_deref())
            .bind(row.created_at)
            .bind(row.expires_at)
            .execute(&mut *tx)
            .await;
        match done {
            Err(e) if is_unique_violation(&e) => return Err(already_invited()),
            other => other?,
        };
        tx.commit().await?;
        Ok(true)
    }

    async fn invitations(&self, ws: &str, now: i64) -> Result<Vec<InvitationRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM invitations WHERE workspace_id = $1 AND expires_at > $2 \
             ORDER BY created_at DESC, id"
        );
        let rows = B::query(&sql)
            .bind(ws)
            .bind(now)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter().map(invitation_from_row).collect()
    }

    async fn delete_invitation(&self, ws: &str, id: &str) -> Result<bool> {
        let done = B::query(DELETE)
            .bind(ws)
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn open_invitation(&self, token_hash: &str, now: i64) -> Result<Option<OpenInvitation>> {
        let row = B::query(OPEN)
            .bind(token_hash)
            .bind(now)
            .fetch_optional(&mut *self.reader().await?)
            .await?;
        row.map(|r| {
            Ok(OpenInvitation {
                email: r.get("email")?,
                role: r.get("role")?,
                workspace: r.get("workspace")?,
            })
        })
        .transpose()
    }

    async fn accept_invitation(
        &self,
        token_hash: &str,
        joiner: &Joiner<'_>,
        now: i64,
    ) -> Result<Accepted> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let Some(invitation) = B::query(CONSUME)
            .bind(token_hash)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(Accepted::Gone);
        };
        let ws: String = invitation.get("workspace_id")?;
        let email: String = invitation.get("email")?;
        let role: String = invitation.get("role")?;
        let (user_id, subject) = match joiner {
            Joiner::Password {
                name,
                password_hash,
            } => {
                let find = format!("{FIND_PASSWORD_USER}{}", B::FOR_UPDATE);
                if B::query(&find)
                    .bind(&email)
                    .fetch_optional(&mut *tx)
                    .await?
                    .is_some()
                {
                    return Ok(Accepted::HasAccount);
                }
                let id = crate::ids::new_id("usr-");
                let subject = format!("local:{id}");
                B::query(INSERT_PASSWORD_USER)
                    .bind(&id)
                    .bind(&subject)
                    .bind(&email)
                    .bind(now)
                    .bind(*name)
                    .bind(*password_hash)
                    .execute(&mut *tx)
                    .await?;
                (id, subject)
            }
            Joiner::User {
                user_id,
                email: theirs,
            } => {
                if *theirs != email {
                    return Ok(Accepted::OtherEmail);
                }
                let subject: String = B::query(SUBJECT_OF)
                    .bind(*user_id)
                    .fetch_optional(&mut *tx)
                    .await?
                    .ok_or(sqlx::Error::RowNotFound)?
                    .get(0)?;
                ((*user_id).to_owned(), subject)
            }
        };
        B::query(JOIN)
            .bind(&ws)
            .bind(&user_id)
            .bind(&role)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        bind_pending::<B>(&mut *tx, &email, &user_id).await?;
        let workspace: String = B::query(WORKSPACE_NAME)
            .bind(&ws)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(sqlx::Error::RowNotFound)?
            .get(0)?;
        let committed = tx.commit().await;
        self.auth().changed();
        committed?;
        Ok(Accepted::Joined { subject, workspace })
    }

    async fn members(&self, ws: &str) -> Result<Vec<MemberRow>> {
        let rows = B::query(MEMBERS)
            .bind(ws)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(MemberRow {
                    user_id: r.get("user_id")?,
                    email: r.get("email")?,
                    name: r.get("name")?,
                    role: r.get("role")?,
                    created_at: r.get("created_at")?,
                })
            })
            .collect()
    }

    async fn add_pending_collaborator(
        &self,
        ws: &str,
        board_id: &str,
        who: &PendingCollaborator,
    ) -> Result<bool> {
        let done = B::query(ADD_PENDING)
            .bind(ws)
            .bind(board_id)
            .bind(&who.email)
            .bind(&who.role)
            .bind(who.added_at)
            .execute(&mut *self.writer().await?)
            .await;
        match done {
            Err(e) if is_unique_violation(&e) => Err(already_pending()),
            other => Ok(other? == 1),
        }
    }

    async fn pending_collaborators(
        &self,
        ws: &str,
        board_id: &str,
    ) -> Result<Vec<PendingCollaborator>> {
        let rows = B::query(PENDING)
            .bind(ws)
            .bind(board_id)
            .fetch_all(&mut *self.reader().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(PendingCollaborator {
                    email: r.get("email")?,
                    role: r.get("role")?,
                    added_at: r.get("added_at")?,
                })
            })
            .collect()
    }

    async fn set_pending_role(
        &self,
        ws: &str,
        board_id: &str,
        email: &str,
        role: &str,
    ) -> Result<bool> {
        let done = B::query(SET_PENDING_ROLE)
            .bind(ws)
            .bind(board_id)
            .bind(email)
            .bind(role)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn remove_pending_collaborator(
        &self,
        ws: &str,
        board_id: &str,
        email: &str,
    ) -> Result<bool> {
        let done = B::query(REMOVE_PENDING)
            .bind(ws)
            .bind(board_id)
            .bind(email)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }
}
