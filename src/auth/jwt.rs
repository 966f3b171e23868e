//! ID tokens: a JWT from the identity provider, checked against the configured issuer,
//! audience and pinned algorithms, signed with a key of the JWKS (a file or an http(s) URL;
//! RS256, ES256) or the shared secret (HS256). The token's own `alg` only picks among the
//! configured ones.

use std::{
    collections::HashSet,
    sync::{Mutex, RwLock},
    time::{Duration, Instant},
};

use jsonwebtoken::{
    decode, decode_header,
    jwk::{Jwk, JwkSet, PublicKeyUse},
    Algorithm, DecodingKey, Validation,
};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::jwt_settings::JwtSettings;
use crate::error::{Error, Result};

/// Who a valid token says the caller is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub subject: String,
    pub email: Option<String>,
    /// The workspace claim's value, when the token has it.
    pub workspace: Option<String>,
    /// The role claim's value, when the token has it.
    pub role: Option<String>,
}

#[derive(Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    email: Option<String>,
    /// An email counts only when the provider says it verified it: collaborators can be
    /// added by email, so an unverified one would let anyone claim someone else's address.
    #[serde(default)]
    email_verified: Option<bool>,
    /// Web sign-in's replay check: the value sent in the authorization request.
    #[serde(default)]
    nonce: Option<String>,
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// Largest JWKS document accepted (real ones are a few KB).
const MAX_JWKS_BYTES: u64 = 1024 * 1024;
/// Longest wait for a JWKS URL.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// A JWKS URL is fetched again for an unknown key id at most this often.
const REFETCH_INTERVAL: Duration = Duration::from_secs(10);

/// Checks ID tokens. The JWKS is read once and read again when a token names a key id it
/// doesn't hold (the provider rotated its keys): a file at once, a URL at most every
/// `REFETCH_INTERVAL`.
pub struct JwtVerifier {
    settings: JwtSettings,
    algorithms: HashSet<Algorithm>,
    secret: Option<DecodingKey>,
    jwks: RwLock<Option<JwkSet>>,
    client: reqwest::Client,
    last_fetch: Mutex<Option<Instant>>,
    /// Held while the set is loaded, so that concurrent requests with a key not yet cached
    /// wait for one load rather than each loading (or being refused as "fetched moments ago").
    loading: tokio::sync::Mutex<()>,
}

impl JwtVerifier {
    /// `None` when sign-in with ID tokens is off (no issuer configured). The settings were
    /// checked at start-up.
    pub fn new(settings: &JwtSettings) -> Option<JwtVerifier> {
        if !settings.enabled() {
            return None;
        }
        let secret = (!settings.hs256_secret.is_empty())
            .then(|| DecodingKey::from_secret(settings.hs256_secret.as_bytes()));
        Some(JwtVerifier {
            algorithms: settings.parsed_algorithms().unwrap_or_default(),
            settings: settings.clone(),
            secret,
            jwks: RwLock::new(None),
            client: reqwest::Client::new(),
            last_fetch: Mutex::new(None),
            loading: tokio::sync::Mutex::new(()),
        })
    }

    /// The identity of a valid token; 401 `UNAUTHORIZED` for anything else.
    pub async fn verify(&self, token: &str) -> Result<Identity> {
        let audience = self.settings.audience.clone();
        Ok(self.verify_for(token, &[&audience]).await?.0)
    }

    /// What web sign-in checks (CONTRACT.md 13): the same checks as [`Self::verify`], with
    /// the audience also being the web client's id; also the token's `nonce`, which the
    /// caller compares with the one it sent.
    pub async fn verify_for(
        &self,
        token: &str,
        audiences: &[&str],
    ) -> Result<(Identity, Option<String>)> {
        self.check(token, audiences).await.map_err(|reason| {
            tracing::debug!(%reason, "ID token refused");
            Error::Unauthorized
        })
    }

    async fn check(
        &self,
        token: &str,
        audiences: &[&str],
    ) -> std::result::Result<(Identity, Option<String>), String> {
        let header = decode_header(token).map_err(|e| e.to_string())?;
        if !self.algorithms.contains(&header.alg) {
            return Err(format!("algorithm {:?} is not configured", header.alg));
        }
        let key = if header.alg == Algorithm::HS256 {
            self.secret.clone().ok_or("no HS256 secret configured")?
        } else {
            self.jwk_key(header.kid.as_deref(), header.alg).await?
        };
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = self.settings.leeway_secs;
        let claims = decode::<Claims>(token, &key, &validation)
            .map_err(|e| e.to_string())?
            .claims;
        let identity = Identity {
            workspace: self.claim(&claims, &self.settings.workspace_claim)?,
            role: self.claim(&claims, &self.settings.role_claim)?,
            email: claims
                .email
                .filter(|_| claims.email_verified == Some(true))
                .map(|email| email.to_lowercase()),
            subject: claims.sub,
        };
        Ok((identity, claims.nonce))
    }

    /// A configured custom claim: absent is `None`, present must be a string.
    fn claim(&self, claims: &Claims, name: &str) -> std::result::Result<Option<String>, String> {
        if name.is_empty() {
            return Ok(None);
        }
        match claims.other.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("claim `{name}` is not a string")),
        }
    }

    /// The JWKS key of `kid` (or the only key, when the token names none) for a token signed
    /// with `alg`, loading the set again once when the cached one lacks it. Concurrent
    /// requests share one load.
    async fn jwk_key(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> std::result::Result<DecodingKey, String> {
        if let Some(key) = self.cached(kid, alg)? {
            return Ok(key);
        }
        let _loading = self.loading.lock().await;
        // Another request may have loaded the set while this one waited.
        if let Some(key) = self.cached(kid, alg)? {
            return Ok(key);
        }
        let set = self.load().await?;
        let key = pick(&set, kid, alg)?.map(DecodingKey::from_jwk).transpose();
        if let Ok(mut cache) = self.jwks.write() {
            *cache = Some(set);
        }
        key.map_err(|e| e.to_string())?
            .ok_or_else(|| format!("no JWKS key {kid:?}"))
    }

    async fn load(&self) -> std::result::Result<JwkSet, String> {
        let source = &self.settings.jwks;
        if !(source.starts_with("http://") || source.starts_with("https://")) {
            let text = tokio::fs::read_to_string(source)
                .await
                .map_err(|e| format!("reading JWKS {source}: {e}"))?;
            return serde_json::from_str(&text).map_err(|e| format!("JWKS: {e}"));
        }
        {
            let mut last = self.last_fetch.lock().map_err(|_| "JWKS clock poisoned")?;
            // Also when the last fetch failed: a JWKS URL that is down must not be asked
            // again for every token that arrives.
            if last.is_some_and(|at| at.elapsed() < REFETCH_INTERVAL) {
                return Err("JWKS fetched moments ago; not again yet".into());
            }
            *last = Some(Instant::now());
        }
        let response = self
            .client
            .get(source)
            .timeout(FETCH_TIMEOUT)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| format!("fetching JWKS {source}: {e}"))?;
        if response
            .content_length()
            .is_some_and(|n| n > MAX_JWKS_BYTES)
        {
            return Err(format!(
                "JWKS {source} is larger than {MAX_JWKS_BYTES} bytes"
            ));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("fetching JWKS {source}: {e}"))?;
        if bytes.len() as u64 > MAX_JWKS_BYTES {
            return Err(format!(
                "JWKS {source} is larger than {MAX_JWKS_BYTES} bytes"
            ));
        }
        serde_json::from_slice(&bytes).map_err(|e| format!("JWKS: {e}"))
    }

    fn cached(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> std::result::Result<Option<DecodingKey>, String> {
        let cache = self.jwks.read().map_err(|_| "JWKS cache poisoned")?;
        let Some(set) = cache.as_ref() else {
            return Ok(None);
        };
        pick(set, kid, alg)?
            .map(DecodingKey::from_jwk)
            .transpose()
            .map_err(|e| e.to_string())
    }
}

/// The signing key of `kid` (or the only signing key, when the token names none). A key
/// whose own `use` is not `sig` never verifies a token, and one whose own `alg` differs from
/// the token's refuses it: a key published for encryption, or for another algorithm, can't
/// be turned into a signature check.
fn pick<'a>(
    set: &'a JwkSet,
    kid: Option<&str>,
    alg: Algorithm,
) -> std::result::Result<Option<&'a Jwk>, String> {
    let signing: Vec<&Jwk> = set
        .keys
        .iter()
        .filter(|k| {
            k.common
                .public_key_use
                .as_ref()
                .is_none_or(|u| *u == PublicKeyUse::Signature)
        })
        .collect();
    let key = match kid {
        Some(kid) => signing
            .into_iter()
            .find(|k| k.common.key_id.as_deref() == Some(kid)),
        None if signing.len() == 1 => signing.into_iter().next(),
        None => None,
    };
    match key.and_then(|k| k.common.key_algorithm) {
        Some(own) if own.to_string() != format!("{alg:?}") => Err(format!(
            "JWKS key {kid:?} is for {own}, the token is signed with {alg:?}"
        )),
        _ => Ok(key),
    }
}
