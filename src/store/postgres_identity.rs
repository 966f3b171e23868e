//! Users, roles and a workspace's keys on PostgreSQL. A sign-in is one transaction, and
//! concurrent first sign-ins of one user meet in the upserts.

use sqlx::{postgres::PgRow, Connection, Row};

use super::identity::*;
use super::postgres::{key_from_row, PgStore};
use super::KeyRow;
use crate::{error::Result, ids};

fn member_from_row(row: &PgRow) -> Result<Member> {
    Ok(Member {
        user_id: row.try_get("user_id")?,
        workspace_id: row.try_get("workspace_id")?,
        email: row.try_get("email")?,
        role: row.try_get("role")?,
    })
}

fn collaborator_from_row(row: &PgRow) -> Result<Collaborator> {
    Ok(Collaborator {
        user_id: row.try_get("user_id")?,
        email: row.try_get("email")?,
        role: row.try_get("role")?,
        added_at: row.try_get("added_at")?,
    })
}

fn role_from_row(row: &PgRow) -> Result<RoleRow> {
    Ok(RoleRow {
        name: row.try_get("name")?,
        scopes: row.try_get("scopes")?,
        created_at: row.try_get("created_at")?,
    })
}

impl IdentityBackend for PgStore {
    async fn find_member(&self, subject: &str, workspace: &str) -> Result<Option<Member>> {
        let row = sqlx::query(FIND_MEMBER)
            .bind(subject)
            .bind(workspace)
            .fetch_optional(&mut *self.conn().await?)
            .await?;
        row.as_ref().map(member_from_row).transpose()
    }

    async fn enroll(&self, who: &SignIn<'_>) -> Result<Member> {
        let mut conn = self.conn().await?;
        let mut tx = conn.begin().await?;
        sqlx::query(ENSURE_WORKSPACE)
            .bind(ids::new_id("ws-"))
            .bind(who.workspace)
            .bind(who.now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(UPSERT_USER)
            .bind(ids::new_id("usr-"))
            .bind(who.subject)
            .bind(who.email)
            .bind(who.now)
            .execute(&mut *tx)
            .await?;
        sqlx::query(UPSERT_MEMBERSHIP)
            .bind(who.workspace)
            .bind(who.subject)
            .bind(who.claimed_role.unwrap_or(who.default_role))
            .bind(who.now)
            .bind(who.claimed_role.is_some())
            .execute(&mut *tx)
            .await?;
        let row = sqlx::query(FIND_MEMBER)
            .bind(who.subject)
            .bind(who.workspace)
            .fetch_one(&mut *tx)
            .await?;
        let member = member_from_row(&row)?;
        tx.commit().await?;
        Ok(member)
    }

    async fn insert_role(&self, ws: &str, role: &RoleRow) -> Result<()> {
        let done = sqlx::query(INSERT_ROLE)
            .bind(ws)
            .bind(&role.name)
            .bind(&role.scopes)
            .bind(role.created_at)
            .execute(&mut *self.conn().await?)
            .await;
        match done {
            Err(e) if is_unique_violation(&e) => Err(role_taken(&role.name)),
            other => other.map(|_| ()).map_err(Into::into),
        }
    }

    async fn find_role(&self, ws: &str, name: &str) -> Result<Option<RoleRow>> {
        let row = sqlx::query(FIND_ROLE)
            .bind(ws)
            .bind(name)
            .fetch_optional(&mut *self.conn().await?)
            .await?;
        row.as_ref().map(role_from_row).transpose()
    }

    async fn list_roles(&self, ws: &str) -> Result<Vec<RoleRow>> {
        let rows = sqlx::query(LIST_ROLES)
            .bind(ws)
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows.iter().map(role_from_row).collect()
    }

    async fn workspace_keys(&self, ws: &str) -> Result<Vec<KeyRow>> {
        let rows = sqlx::query(WORKSPACE_KEYS)
            .bind(ws)
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows.iter().map(key_from_row).collect()
    }

    async fn revoke_workspace_key(&self, ws: &str, id: &str, at: i64) -> Result<bool> {
        let done = sqlx::query(REVOKE_WORKSPACE_KEY)
            .bind(ws)
            .bind(id)
            .bind(at)
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn find_users(&self, user: &str) -> Result<Vec<UserRow>> {
        let rows = sqlx::query(FIND_USERS)
            .bind(user)
            .fetch_all(&mut *self.conn().await?)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(UserRow {
                    id: r.try_get("id")?,
                    email: r.try_get("email")?,
                })
            })
            .collect()
    }

    async fn add_collaborator(&self, ws: &str, board_id: &str, who: &Collaborator) -> Result<bool> {
        let done = sqlx::query(ADD_COLLABORATOR)
            .bind(ws)
            .bind(board_id)
            .bind(&who.user_id)
            .bind(&who.role)
            .bind(who.added_at)
            .execute(&mut *self.conn().await?)
            .await;
        match done {
            Err(e) if is_unique_violation(&e) => Err(already_collaborator()),
            other => Ok(other?.rows_affected() == 1),
        }
    }

    async fn collaborators(&self, ws: &str, board_id: &str) -> Result<Vec<Collaborator>> {
        let rows = sqlx::query(COLLABORATORS)
            .bind(ws)
            .bind(board_id)
            .fetch_all(&mut *self.conn().await?)
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
        let done = sqlx::query(SET_COLLABORATOR_ROLE)
            .bind(ws)
            .bind(board_id)
            .bind(user_id)
            .bind(role)
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn remove_collaborator(&self, ws: &str, board_id: &str, user_id: &str) -> Result<bool> {
        let done = sqlx::query(REMOVE_COLLABORATOR)
            .bind(ws)
            .bind(board_id)
            .bind(user_id)
            .execute(&mut *self.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn board_grant(&self, board_id: &str, user_id: &str) -> Result<Option<(String, String)>> {
        let row = sqlx::query(BOARD_GRANT)
            .bind(board_id)
            .bind(user_id)
            .fetch_optional(&mut *self.conn().await?)
            .await?;
        row.map(|r| Ok((r.try_get("workspace_id")?, r.try_get("role")?)))
            .transpose()
    }
}
