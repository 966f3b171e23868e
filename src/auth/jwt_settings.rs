//! `[auth.jwt]`: sign-in with ID tokens. Off while `issuer` is empty.

use std::{collections::HashSet, fmt, str::FromStr};

use jsonwebtoken::Algorithm;
use serde::{Deserialize, Deserializer, Serialize};

/// The algorithms an operator may pin.
const SUPPORTED: [Algorithm; 3] = [Algorithm::RS256, Algorithm::ES256, Algorithm::HS256];
/// Shortest HS256 secret accepted, bytes (the hash's output size).
const MIN_SECRET_BYTES: usize = 32;

#[derive(Clone, Deserialize, Serialize)]
pub struct JwtSettings {
    /// Expected `iss`; empty turns ID tokens off.
    pub issuer: String,
    /// Expected `aud`.
    pub audience: String,
    /// Accepted `alg`s (`RS256`, `ES256`, `HS256`): a list, or a comma list from the
    /// environment.
    #[serde(deserialize_with = "comma_list")]
    pub algorithms: Vec<String>,
    /// Path or http(s) URL of the JWKS holding the RS256/ES256 verification keys.
    pub jwks: String,
    /// Shared secret of HS256 tokens.
    pub hs256_secret: String,
    /// Claim naming the user's workspace; empty or absent: the default workspace.
    pub workspace_claim: String,
    /// Claim naming the user's workspace role; empty or absent: `default_role`.
    pub role_claim: String,
    /// Role of a new member whose token names none.
    pub default_role: String,
    /// Clock skew allowed on `exp` and `nbf`, seconds.
    pub leeway_secs: u64,
}

fn comma_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Text(String),
        List(Vec<String>),
    }
    Ok(match Either::deserialize(d)? {
        Either::Text(text) => text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        Either::List(list) => list,
    })
}

impl JwtSettings {
    pub fn enabled(&self) -> bool {
        !self.issuer.is_empty()
    }

    pub fn parsed_algorithms(&self) -> Result<HashSet<Algorithm>, String> {
        self.algorithms
            .iter()
            .map(|name| {
                Algorithm::from_str(name)
                    .ok()
                    .filter(|alg| SUPPORTED.contains(alg))
                    .ok_or_else(|| {
                        format!("auth.jwt.algorithms: `{name}` is not one of RS256, ES256, HS256")
                    })
            })
            .collect()
    }

    /// Refuses settings that could never verify a token, or would verify too much.
    pub fn check(&self) -> Result<(), String> {
        if !self.enabled() {
            return Ok(());
        }
        let algorithms = self.parsed_algorithms()?;
        if self.audience.is_empty() || algorithms.is_empty() {
            return Err("auth.jwt needs audience and at least one algorithm".into());
        }
        if algorithms.contains(&Algorithm::HS256) && self.hs256_secret.len() < MIN_SECRET_BYTES {
            return Err(format!(
                "auth.jwt.hs256_secret must be at least {MIN_SECRET_BYTES} bytes for HS256"
            ));
        }
        let asymmetric = algorithms.iter().any(|a| *a != Algorithm::HS256);
        if asymmetric && self.jwks.is_empty() {
            return Err("auth.jwt.jwks (a file path or URL) is needed for RS256 and ES256".into());
        }
        if self.default_role.is_empty() {
            return Err("auth.jwt.default_role must name a role".into());
        }
        if self.leeway_secs > MAX_LEEWAY_SECS {
            return Err(format!(
                "auth.jwt.leeway_secs must be at most {MAX_LEEWAY_SECS}"
            ));
        }
        if self.jwks.starts_with("http://") && !super::is_trusted_url(&self.jwks) {
            return Err(
                "auth.jwt.jwks must be https:// (plain http only on a loopback address): \
                 whoever can change the key set can sign any token"
                    .into(),
            );
        }
        Ok(())
    }

    /// The same settings with the secret hidden, for `corkboard config`.
    pub fn redacted(&self) -> JwtSettings {
        let mut shown = self.clone();
        if !shown.hs256_secret.is_empty() {
            shown.hs256_secret = "REDACTED".into();
        }
        shown
    }
}

/// Largest clock leeway accepted for `exp`/`nbf`: a few minutes of skew, not hours.
const MAX_LEEWAY_SECS: u64 = 300;

impl fmt::Debug for JwtSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtSettings")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .field("algorithms", &self.algorithms)
            .field("jwks", &self.jwks)
            .field("hs256_secret", &"REDACTED")
            .field("workspace_claim", &self.workspace_claim)
            .field("role_claim", &self.role_claim)
            .field("default_role", &self.default_role)
            .field("leeway_secs", &self.leeway_secs)
            .finish()
    }
}
