//! API key secrets and their lifecycle: create (secret shown once), list, revoke.

use std::fmt;

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{Scopes, Tier};
use crate::{error::Result, ids, store::KeyRow, store::Store, Error};

/// Characters of the random part used as the indexed lookup handle (72 bits).
const LOOKUP_LEN: usize = 12;

/// The plain text of a key. Never stored, never logged.
pub struct ApiKeySecret(String);

impl ApiKeySecret {
    /// What every key starts with, so that secret scanners recognise a leaked one.
    pub const PREFIX: &'static str = "cbk_";

    fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        ApiKeySecret(format!("{}{}", Self::PREFIX, URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// Accepts text that has the shape of a key; anything else can't be one.
    pub fn from_presented(text: &str) -> Option<Self> {
        let random = text.strip_prefix(Self::PREFIX)?;
        let well_formed = random.len() >= LOOKUP_LEN
            && random.len() <= 128
            && random
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        well_formed.then(|| ApiKeySecret(text.to_owned()))
    }

    /// The non-secret handle the key is looked up by.
    pub fn lookup(&self) -> &str {
        &self.0[Self::PREFIX.len()..Self::PREFIX.len() + LOOKUP_LEN]
    }

    pub fn hash(&self) -> KeyHash {
        KeyHash(hex::encode(Sha256::digest(self.0.as_bytes())))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKeySecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKeySecret(REDACTED)")
    }
}

/// SHA-256 of a key, hex. Keys carry 256 random bits, so a fast hash is enough.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyHash(pub String);

impl KeyHash {
    /// Compares in constant time.
    pub fn matches(&self, stored: &str) -> bool {
        self.0.as_bytes().ct_eq(stored.as_bytes()).into()
    }
}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyHash(..)")
    }
}

/// What a new key should be.
#[derive(Debug, Clone)]
pub struct NewKey {
    /// Workspace name, `[a-z0-9-]{1,64}`; created when new.
    pub workspace: String,
    pub name: String,
    pub scopes: Scopes,
    pub tier: Tier,
}

/// A freshly created key: the only moment its secret exists outside the caller.
#[derive(Debug)]
pub struct CreatedKey {
    pub id: String,
    pub workspace_id: String,
    pub secret: ApiKeySecret,
}

/// Workspace names as accepted by `keys create --workspace`.
pub fn valid_workspace_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

pub async fn create_key(store: &Store, new: NewKey) -> Result<CreatedKey> {
    if !valid_workspace_name(&new.workspace) {
        return Err(Error::validation(
            "workspace",
            "a name of 1 to 64 of a-z, 0-9 and -",
        ));
    }
    let workspace_id = store.ensure_workspace(&new.workspace).await?;
    let (row, secret) = store_key(
        store,
        &workspace_id,
        &new.name,
        new.scopes,
        new.tier,
        None,
        None,
    )
    .await?;
    Ok(CreatedKey {
        id: row.id,
        workspace_id,
        secret,
    })
}

/// Longest key name, in characters.
pub const NAME_CHARS: usize = 100;

/// Checks and stores a key of the workspace `workspace_id`, returning the stored row and
/// the secret.
pub(crate) async fn store_key(
    store: &Store,
    workspace_id: &str,
    name: &str,
    scopes: Scopes,
    tier: Tier,
    expires_at: Option<i64>,
    created_by: Option<String>,
) -> Result<(KeyRow, ApiKeySecret)> {
    if crate::pins::is_blank(name) || name.chars().count() > NAME_CHARS {
        return Err(Error::validation(
            "name",
            format!("1 to {NAME_CHARS} characters, not all blank"),
        ));
    }
    let name = name.trim_matches([' ', '\t', '\n', '\r']);
    if scopes.is_empty() {
        return Err(Error::validation("scopes", "at least one scope"));
    }
    let secret = ApiKeySecret::generate();
    let row = KeyRow {
        id: ids::new_id("key-"),
        workspace_id: workspace_id.to_owned(),
        name: name.to_owned(),
        lookup: secret.lookup().to_owned(),
        secret_hash: secret.hash().0,
        scopes: scopes.to_list(),
        tier: tier.as_str().to_owned(),
        created_at: crate::clock::now_ms(),
        last_used_at: None,
        revoked_at: None,
        expires_at,
        created_by,
    };
    store.insert_key(&row).await?;
    Ok((row, secret))
}

/// Every key (no secrets), newest first, with its workspace name.
pub async fn list_keys(store: &Store) -> Result<Vec<(KeyRow, String)>> {
    store.list_keys().await
}

/// Revokes at once: the next request with the key fails on every replica.
pub async fn revoke_key(store: &Store, id: &str) -> Result<()> {
    if store.revoke_key(id, crate::clock::now_ms()).await? {
        Ok(())
    } else {
        Err(Error::NotFound {
            what: "API key",
            index: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_recognised_and_hash_stably() {
        let key = ApiKeySecret::generate();
        assert!(key.expose().starts_with("cbk_"));
        let again = ApiKeySecret::from_presented(key.expose()).unwrap();
        assert_eq!(again.lookup(), key.lookup());
        assert!(key.hash().matches(&again.hash().0));
        assert!(!key.hash().matches(&ApiKeySecret::generate().hash().0));
        assert!(ApiKeySecret::from_presented("cbk_short").is_none());
        assert!(ApiKeySecret::from_presented("nope_aaaaaaaaaaaaaaaa").is_none());
        assert_eq!(format!("{key:?}"), "ApiKeySecret(REDACTED)");
    }
}
