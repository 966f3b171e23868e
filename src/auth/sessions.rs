//! Web sign-in sessions (CONTRACT.md 13): a random id of 256 bits that only its holder's
//! cookie carries, its SHA-256 in the store; a session's user is who they are now (their
//! membership's current role), so a changed role counts at once and a deleted session stops
//! at once on every replica. The cookie itself is the web's (`web/session.rs`).

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::{roles, Principal, Reach, Subject};
use crate::{app::AppState, error::Result, store::SessionRow};

/// A new session's id: the cookie's value, never stored or logged.
pub struct SessionId(String);

impl SessionId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionId(<redacted>)")
    }
}

/// A signed-in user: what pages show of them and what they may do.
pub struct SignedIn {
    /// Their email, else their subject.
    pub name: String,
    pub principal: Principal,
}

fn hash(id: &str) -> String {
    hex::encode(Sha256::digest(id.as_bytes()))
}

/// Starts a session of `ttl_ms` for `subject` of workspace `workspace`.
pub async fn create(
    state: &AppState,
    subject: &str,
    workspace: &str,
    ttl_ms: i64,
) -> Result<SessionId> {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let id = URL_SAFE_NO_PAD.encode(bytes);
    let now = crate::clock::now_ms();
    state
        .store
        .insert_session(&SessionRow {
            id_hash: hash(&id),
            subject: subject.to_owned(),
            workspace: workspace.to_owned(),
            created_at: now,
            expires_at: now.saturating_add(ttl_ms),
        })
        .await?;
    Ok(SessionId(id))
}

/// Ends session `id` (a cookie's value), if there is one.
pub async fn end(state: &AppState, id: &str) -> Result<()> {
    state.store.delete_session(&hash(id)).await?;
    Ok(())
}

/// The user of session `id` (a cookie's value) as they are now, or `None` when it is unknown
/// or expired, their membership is gone, or web sign-in is off.
pub async fn signed_in(state: &AppState, id: &str) -> Result<Option<SignedIn>> {
    if !state.web_sign_in() {
        return Ok(None);
    }
    let Some(session) = state
        .store
        .find_session(&hash(id), crate::clock::now_ms())
        .await?
    else {
        return Ok(None);
    };
    let Some(member) = state
        .store
        .find_member(&session.subject, &session.workspace)
        .await?
    else {
        return Ok(None);
    };
    let scopes = roles::scopes_of(&state.store, &member.workspace_id, &member.role).await?;
    Ok(Some(SignedIn {
        name: member.email.unwrap_or(session.subject),
        principal: Principal {
            workspace_id: member.workspace_id,
            subject: Subject::User(member.user_id),
            scopes,
            tier: state.settings.default_tier,
            reach: Reach::Workspace,
        },
    }))
}
