//! Invitations to a workspace (CONTRACT.md 16; `/invitations`, scope `pinboards:invite`, and
//! `/settings/people`): an email and a role. Its link `<public_url>/invite/<token>` (256
//! random bits, only their SHA-256 stored, single use, 7 days) lets the person set a
//! password, or a signed-in user of that email (a password account, or the identity
//! provider's, whose email it verified) join with that role, signed in. Nobody invites with
//! a role that grants more than they hold.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{
    app::AppState,
    auth::{
        local::{normal_email, NewAccount, Started},
        roles,
        sessions::{self, SignedIn},
        Principal, Subject,
    },
    clock,
    error::{Error, Result},
    store::{Accepted, InvitationRow, Joiner, MemberRow, OpenInvitation},
};

/// How long an invitation's link works.
pub const INVITATION_MS: i64 = 7 * 24 * 3_600_000;
/// Live invitations a workspace may have at once.
pub const LIVE_INVITATIONS: i64 = 500;
/// A link's token is 43 characters; anything much longer is not one.
const TOKEN_CHARS: usize = 128;
const EMAIL_CHARS: usize = 254;
/// What the schema can say of an address: one `@`, something on each side, no spaces
/// inside (around it they are trimmed). `auth::local::normal_email` decides.
const EMAIL_PATTERN: &str = r"^\s*[^@\s\x00]+@[^@\s\x00]+\s*$";

/// `POST /invitations` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteBody {
    /// The person's email (`local@domain`, at most 254 characters; kept lower-case). Not
    /// of a member already, nor of a live invitation (409).
    #[schemars(length(min = 3, max = EMAIL_CHARS), regex(pattern = EMAIL_PATTERN))]
    pub email: String,
    /// `owner`, `editor`, `viewer` or a custom role of the workspace (400 for another
    /// name); it must grant nothing the caller lacks (403).
    #[schemars(regex(pattern = roles::NAME_PATTERN))]
    pub role: String,
}

/// An invitation as listed: never its link.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InvitationRecord {
    /// `inv-...`
    pub id: String,
    pub email: String,
    pub role: String,
    /// The user or API key that made it.
    pub invited_by: Option<String>,
    /// ISO 8601.
    pub created_at: String,
    /// ISO 8601: when the link stops working.
    pub expires_at: String,
}

/// The answer to an invitation: its record and, this once, its link.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CreatedInvitation {
    #[serde(flatten)]
    pub record: InvitationRecord,
    /// `<public_url>/invite/<token>`: works once, for 7 days; shown only here.
    pub url: String,
}

/// The answer to a revoke.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RevokedInvitation {
    pub id: String,
    pub revoked: bool,
}

impl From<InvitationRow> for InvitationRecord {
    fn from(row: InvitationRow) -> Self {
        InvitationRecord {
            id: row.id,
            email: row.email,
            role: row.role,
            invited_by: row.invited_by,
            created_at: clock::iso(row.created_at),
            expires_at: clock::iso(row.expires_at),
        }
    }
}

fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Invites `body.email` into the caller's workspace with `body.role`.
pub async fn create(
    state: &AppState,
    who: &Principal,
    body: InviteBody,
) -> Result<CreatedInvitation> {
    let email = normal_email(&body.email)
        .ok_or_else(|| Error::validation("email", "an email address, local@domain"))?;
    let scopes = roles::lookup(&state.store, &who.workspace_id, &body.role)
        .await?
        .ok_or_else(|| Error::validation("role", "owner, editor, viewer or a custom role"))?;
    roles::check_grant(who, scopes)?;
    let members = state.store.members(&who.workspace_id).await?;
    if members.iter().any(|m| m.email.as_deref() == Some(&email)) {
        return Err(Error::Conflict(
            "a member of this workspace has this email already".into(),
        ));
    }
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let token = URL_SAFE_NO_PAD.encode(bytes);
    let now = clock::now_ms();
    let row = InvitationRow {
        id: crate::ids::new_id("inv-"),
        email,
        role: body.role,
        token_hash: token_hash(&token),
        invited_by: Some(who.subject.id().to_owned()),
        created_at: now,
        expires_at: now.saturating_add(INVITATION_MS),
    };
    if !state
        .store
        .insert_invitation(&who.workspace_id, &row, now, LIVE_INVITATIONS)
        .await?
    {
        return Err(Error::Conflict(format!(
            "the workspace has {LIVE_INVITATIONS} live invitations, the most it may have; \
             revoke one first"
        )));
    }
    tracing::info!(invitation = %row.id, role = %row.role, "invitation made");
    Ok(CreatedInvitation {
        record: row.into(),
        url: format!("{}/invite/{token}", state.public_base()),
    })
}

/// The workspace's members and their roles (the people page; its caller is an owner).
pub async fn members(state: &AppState, who: &Principal) -> Result<Vec<MemberRow>> {
    state.store.members(&who.workspace_id).await
}

/// The email of user `user_id`, when they have one.
pub async fn email_of(state: &AppState, user_id: &str) -> Result<Option<String>> {
    let found = state.store.find_users(user_id).await?;
    Ok(found
        .into_iter()
        .find(|u| u.id == user_id)
        .and_then(|u| u.email))
}

/// The workspace's live invitations, newest first.
pub async fn list(state: &AppState, who: &Principal) -> Result<Vec<InvitationRecord>> {
    let rows = state
        .store
        .invitations(&who.workspace_id, clock::now_ms())
        .await?;
    Ok(rows.into_iter().map(Into::into).collect())
}

/// Revokes an invitation of the workspace: its link stops working at once. 404 for an
/// absent (or used) one.
pub async fn revoke(state: &AppState, who: &Principal, id: &str) -> Result<RevokedInvitation> {
    if state.store.delete_invitation(&who.workspace_id, id).await? {
        Ok(RevokedInvitation {
            id: id.to_owned(),
            revoked: true,
        })
    } else {
        Err(Error::NotFound {
            what: "invitation",
            index: None,
        })
    }
}

/// The live invitation of link token `token`, if any.
pub async fn open(state: &AppState, token: &str) -> Result<Option<OpenInvitation>> {
    if token.len() > TOKEN_CHARS {
        return Ok(None);
    }
    state
        .store
        .open_invitation(&token_hash(token), clock::now_ms())
        .await
}

/// What accepting an invitation came to.
pub enum Joined {
    /// A member now, signed in to the invitation's workspace.
    Started(Started),
    /// The link is unknown, used, revoked or expired.
    Gone,
    /// A password account of the invitation's email exists: sign in first.
    HasAccount,
    /// The signed-in user's email is not the invitation's.
    OtherEmail,
}

async fn joined(state: &AppState, accepted: Accepted) -> Result<Joined> {
    Ok(match accepted {
        Accepted::Joined { subject, workspace } => {
            tracing::info!(workspace = %workspace, "invitation accepted");
            let ttl_ms = state.settings.auth.local.session_ms();
            let id = sessions::create(state, &subject, &workspace, ttl_ms).await?;
            Joined::Started(Started { id, ttl_ms })
        }
        Accepted::Gone => Joined::Gone,
        Accepted::HasAccount => Joined::HasAccount,
        Accepted::OtherEmail => Joined::OtherEmail,
    })
}

/// Accepts the invitation of `token` as a new person with a name and password (already
/// checked: [`NewAccount::parse`], with the invitation's email).
pub async fn accept_with_password(
    state: &AppState,
    token: &str,
    account: NewAccount,
) -> Result<Joined> {
    let (name, _, password_hash) = account.hashed().await?;
    let joiner = Joiner::Password {
        name: &name,
        password_hash: &password_hash,
    };
    let accepted = state
        .store
        .accept_invitation(&token_hash(token), &joiner, clock::now_ms())
        .await?;
    joined(state, accepted).await
}

/// Accepts the invitation of `token` as the signed-in user `who`, whose email must be the
/// invitation's.
pub async fn accept_signed_in(state: &AppState, token: &str, who: &SignedIn) -> Result<Joined> {
    let Subject::User(user_id) = &who.principal.subject else {
        return Ok(Joined::OtherEmail);
    };
    let Some(email) = email_of(state, user_id).await? else {
        return Ok(Joined::OtherEmail);
    };
    let joiner = Joiner::User {
        user_id,
        email: &email,
    };
    let accepted = state
        .store
        .accept_invitation(&token_hash(token), &joiner, clock::now_ms())
        .await?;
    joined(state, accepted).await
}
