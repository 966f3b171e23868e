//! API keys over HTTP (`/api-keys`, scope `*`): create (the secret shown once), list (no
//! secrets), revoke. Nobody makes a key with a scope or a tier above their own.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{keys::store_key, roles, Principal, Subject, Tier};
use crate::{
    app::AppState,
    clock,
    error::{Error, Result},
    pins::NOT_BLANK,
    store::KeyRow,
    wire::body::present,
};

/// `POST /api-keys` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyBody {
    /// 1 to 100 characters, not only spaces, tabs and line breaks.
    #[schemars(length(min = 1, max = super::keys::NAME_CHARS), regex(pattern = NOT_BLANK))]
    pub name: String,
    /// Scope names (at least one); each must be held by the caller (403).
    #[schemars(schema_with = "roles::scope_list")]
    pub scopes: Vec<String>,
    /// At most the caller's tier (403); default: the configured default tier, capped
    /// likewise.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Tier")]
    pub tier: Option<Tier>,
    /// ISO 8601 instant in the future (400 for a past one) after which the key stops
    /// working.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub expires_at: Option<String>,
}

/// A key as listed: never its secret.
#[derive(Debug, Serialize, JsonSchema)]
pub struct KeyRecord {
    pub id: String,
    pub name: String,
    /// The key's first characters (`cbk_` and 8 more): enough to tell which key a client
    /// holds, too few to be used.
    pub prefix: String,
    pub scopes: Vec<&'static str>,
    pub tier: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
    pub expires_at: Option<String>,
    pub revoked_at: Option<String>,
}

/// The answer to a create: the record and, this once, the key itself.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CreatedKeyRecord {
    #[serde(flatten)]
    pub record: KeyRecord,
    /// The secret `cbk_...`; shown only here.
    pub key: String,
}

/// The answer to a revoke.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RevokedKey {
    pub id: String,
    pub revoked: bool,
}

/// Characters of a key's random part its record shows.
const PREFIX_CHARS: usize = 8;

impl KeyRecord {
    fn new(row: &KeyRow) -> Result<Self> {
        let scopes = super::Scopes::parse_list(&row.scopes)
            .map_err(|bad| Error::internal(format!("stored key has unknown scope {bad}")))?;
        Ok(KeyRecord {
            id: row.id.clone(),
            name: row.name.clone(),
            prefix: format!(
                "{}{}",
                super::ApiKeySecret::PREFIX,
                row.lookup.get(..PREFIX_CHARS).unwrap_or_default()
            ),
            scopes: scopes.names(),
            tier: row.tier.clone(),
            created_at: clock::iso(row.created_at),
            last_used_at: row.last_used_at.map(clock::iso),
            expires_at: row.expires_at.map(clock::iso),
            revoked_at: row.revoked_at.map(clock::iso),
        })
    }
}

fn parse_expiry(text: &str, now: i64) -> Result<i64> {
    let expected = || Error::validation("expires_at", "an ISO 8601 instant in the future");
    let at = chrono::DateTime::parse_from_rfc3339(text)
        .map_err(|_| expected())?
        .timestamp_millis();
    if at <= now {
        return Err(expected());
    }
    Ok(at)
}

pub async fn create(
    state: &AppState,
    who: &Principal,
    body: CreateKeyBody,
) -> Result<CreatedKeyRecord> {
    let scopes = roles::parse_scopes(&body.scopes, "scopes")?;
    roles::check_grant(who, scopes)?;
    let tier = body
        .tier
        .unwrap_or(state.settings.default_tier.min(who.tier));
    if tier > who.tier {
        return Err(Error::Forbidden(format!(
            "you can't make a key of tier `{}` above your own (`{}`)",
            tier.as_str(),
            who.tier.as_str()
        )));
    }
    let expires_at = body
        .expires_at
        .as_deref()
        .map(|text| parse_expiry(text, state.clock.now_ms()))
        .transpose()?;
    let max = state.limits().keys_per_workspace;
    let live = usize::try_from(state.store.live_keys(&who.workspace_id).await?).unwrap_or(0);
    if live >= max {
        return Err(Error::Conflict(format!(
            "the workspace has {max} live API keys, the most it may have; revoke one first"
        )));
    }
    let (row, secret) = store_key(
        &state.store,
        &who.workspace_id,
        &body.name,
        scopes,
        tier,
        expires_at,
        creator(state, who).await?,
    )
    .await?;
    Ok(CreatedKeyRecord {
        record: KeyRecord::new(&row)?,
        key: secret.expose().to_owned(),
    })
}

/// Whose role bounds a key `who` makes: a user's own, or the making key's creator's (a key
/// made with the CLI has none).
async fn creator(state: &AppState, who: &Principal) -> Result<Option<String>> {
    match &who.subject {
        Subject::User(user_id) => Ok(Some(user_id.clone())),
        Subject::Key(key_id) => Ok(state
            .store
            .workspace_keys(&who.workspace_id)
            .await?
            .into_iter()
            .find(|k| &k.id == key_id)
            .and_then(|k| k.created_by)),
    }
}

/// The workspace's keys, newest first, revoked ones included.
pub async fn list(state: &AppState, who: &Principal) -> Result<Vec<KeyRecord>> {
    state
        .store
        .workspace_keys(&who.workspace_id)
        .await?
        .iter()
        .map(KeyRecord::new)
        .collect()
}

/// Revokes a key of the workspace: its next request fails, on every replica (keys are
/// read from the store on each request). 404 for an absent or already revoked key.
pub async fn revoke(state: &AppState, who: &Principal, id: &str) -> Result<RevokedKey> {
    if state
        .store
        .revoke_workspace_key(&who.workspace_id, id, clock::now_ms())
        .await?
    {
        Ok(RevokedKey {
            id: id.to_owned(),
            revoked: true,
        })
    } else {
        Err(Error::NotFound {
            what: "API key",
            index: None,
        })
    }
}
