//! Web sign-in with OpenID Connect (CONTRACT.md 13): the authorization code flow with PKCE
//! S256, state and nonce, against the issuer configured for ID tokens, whose endpoints come
//! from its `/.well-known/openid-configuration`. The protocol (PKCE, the authorization URL,
//! the code exchange) is the `oauth2` crate's; the ID token is checked by [`JwtVerifier`],
//! the API's verifier, so the two can never disagree.

use std::{
    fmt,
    sync::Mutex,
    time::{Duration, Instant},
};

use oauth2::{
    basic::{
        BasicErrorResponse, BasicRevocationErrorResponse, BasicTokenIntrospectionResponse,
        BasicTokenType,
    },
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet, EndpointSet,
    ExtraTokenFields, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, StandardRevocableToken,
    StandardTokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};

use super::{Identity, JwtVerifier};
use crate::error::{Error, Result};

/// `[auth.oidc]`: the web client registered with the provider. Off while `client_id` is
/// empty.
#[derive(Clone, Deserialize, Serialize)]
pub struct OidcSettings {
    pub client_id: String,
    /// Empty for a public client (PKCE alone).
    pub client_secret: String,
    /// Space-separated; must include `openid`.
    pub scopes: String,
    /// How long a session lasts, hours.
    pub session_hours: u64,
}

impl OidcSettings {
    pub fn enabled(&self) -> bool {
        !self.client_id.is_empty()
    }

    pub fn redacted(&self) -> OidcSettings {
        let mut shown = self.clone();
        if !shown.client_secret.is_empty() {
            shown.client_secret = "REDACTED".into();
        }
        shown
    }

    /// Checked at start-up, with the issuer that web sign-in will use.
    pub fn check(&self, issuer: &str) -> std::result::Result<(), String> {
        if !self.enabled() {
            return Ok(());
        }
        if issuer.is_empty() {
            return Err("auth.oidc.client_id needs auth.jwt.issuer (the provider)".into());
        }
        if !super::is_trusted_url(issuer) {
            return Err(
                "auth.jwt.issuer must be an https:// URL for web sign-in (plain http only on a \
                 loopback address): whoever answers for the provider can sign in as anyone"
                    .into(),
            );
        }
        if !self.scopes.split_whitespace().any(|s| s == "openid") {
            return Err("auth.oidc.scopes must include `openid`".into());
        }
        if self.session_hours == 0 {
            return Err("auth.oidc.session_hours must be at least 1".into());
        }
        Ok(())
    }
}

impl fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.redacted();
        f.debug_struct("OidcSettings")
            .field("client_id", &shown.client_id)
            .field("client_secret", &shown.client_secret)
            .field("scopes", &shown.scopes)
            .field("session_hours", &shown.session_hours)
            .finish()
    }
}

/// The token endpoint's answer: OAuth's, with the ID token OpenID Connect adds.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IdTokenField {
    id_token: String,
}
impl ExtraTokenFields for IdTokenField {}

type TokenWithId = StandardTokenResponse<IdTokenField, BasicTokenType>;
/// The client before its endpoints are set.
type NewClient = oauth2::Client<
    BasicErrorResponse,
    TokenWithId,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
>;
type WebClient = oauth2::Client<
    BasicErrorResponse,
    TokenWithId,
    BasicTokenIntrospectionResponse,
    StandardRevocableToken,
    BasicRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointSet,
>;

/// The part of the provider's discovery document that sign-in uses.
#[derive(Debug, Clone, Deserialize)]
struct Discovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
}

/// A discovery document is used this long before it is read again.
const DISCOVERY_TTL: Duration = Duration::from_secs(3600);
/// Longest wait for the provider.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);

/// What the browser keeps between `/login` and `/auth/callback` (in an `HttpOnly` cookie of
/// its own): the state to compare, the nonce the ID token must carry, the PKCE verifier and
/// where to go after.
#[derive(Serialize, Deserialize)]
pub struct Pending {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
    pub next: String,
}

/// The web client of one process.
pub struct Oidc {
    settings: OidcSettings,
    issuer: String,
    redirect: RedirectUrl,
    http: reqwest::Client,
    discovered: Mutex<Option<(Instant, Discovery)>>,
}

impl Oidc {
    /// `None` when web sign-in is off. `public_base` is the service's own URL.
    pub fn new(settings: &OidcSettings, issuer: &str, public_base: &str) -> Option<Oidc> {
        if !settings.enabled() {
            return None;
        }
        let redirect = RedirectUrl::new(format!("{public_base}/auth/callback")).ok()?;
        // No redirects: the token endpoint must answer itself (the oauth2 crate's advice).
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT)
            .build()
            .ok()?;
        Some(Oidc {
            settings: settings.clone(),
            issuer: issuer.to_owned(),
            redirect,
            http,
            discovered: Mutex::new(None),
        })
    }

    pub fn client_id(&self) -> &str {
        &self.settings.client_id
    }

    pub fn session_ms(&self) -> i64 {
        (self.settings.session_hours as i64).saturating_mul(3_600_000)
    }

    /// The provider's endpoints, read from its discovery document (cached).
    async fn discovery(&self) -> Result<Discovery> {
        if let Ok(cached) = self.discovered.lock() {
            if let Some((at, found)) = cached.as_ref() {
                if at.elapsed() < DISCOVERY_TTL {
                    return Ok(found.clone());
                }
            }
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.issuer.trim_end_matches('/')
        );
        let body = self
            .http
            .get(&url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| provider_down(format!("discovery {url}: {e}")))?
            .bytes()
            .await
            .map_err(|e| provider_down(format!("discovery {url}: {e}")))?;
        let found: Discovery = serde_json::from_slice(&body)
            .map_err(|e| provider_down(format!("discovery {url}: {e}")))?;
        // OpenID Connect Discovery 4.3: the document must name the issuer it was asked for.
        if found.issuer.trim_end_matches('/') != self.issuer.trim_end_matches('/') {
            return Err(provider_down(format!(
                "discovery names issuer {}, not {}",
                found.issuer, self.issuer
            )));
        }
        for (name, url) in [
            ("authorization_endpoint", &found.authorization_endpoint),
            ("token_endpoint", &found.token_endpoint),
        ] {
            if !super::is_trusted_url(url) {
                return Err(provider_down(format!(
                    "discovery names {name} {url}: https only (plain http on loopback)"
                )));
            }
        }
        if let Ok(mut cached) = self.discovered.lock() {
            *cached = Some((Instant::now(), found.clone()));
        }
        Ok(found)
    }

    async fn client(&self) -> Result<WebClient> {
        let found = self.discovery().await?;
        let auth = AuthUrl::new(found.authorization_endpoint)
            .map_err(|e| provider_down(format!("authorization_endpoint: {e}")))?;
        let token = TokenUrl::new(found.token_endpoint)
            .map_err(|e| provider_down(format!("token_endpoint: {e}")))?;
        let client = NewClient::new(ClientId::new(self.settings.client_id.clone()))
            .set_auth_uri(auth)
            .set_token_uri(token)
            .set_redirect_uri(self.redirect.clone());
        Ok(if self.settings.client_secret.is_empty() {
            client
        } else {
            client.set_client_secret(ClientSecret::new(self.settings.client_secret.clone()))
        })
    }

    /// Where to send the browser, and what it must keep until the callback.
    pub async fn start(&self, next: String) -> Result<(String, Pending)> {
        let client = self.client().await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let nonce = CsrfToken::new_random();
        let mut request = client
            .authorize_url(CsrfToken::new_random)
            .set_pkce_challenge(challenge)
            .add_extra_param("nonce", nonce.secret().clone());
        for scope in self.settings.scopes.split_whitespace() {
            request = request.add_scope(oauth2::Scope::new(scope.to_owned()));
        }
        let (url, state) = request.url();
        let pending = Pending {
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
            next,
        };
        Ok((url.to_string(), pending))
    }

    /// Exchanges the code (with the PKCE verifier) and checks the ID token as the API does,
    /// with its nonce. 401 for any refusal.
    pub async fn finish(
        &self,
        jwt: &JwtVerifier,
        configured_audience: &str,
        code: &str,
        pending: &Pending,
    ) -> Result<Identity> {
        let client = self.client().await?;
        let answer = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .set_pkce_verifier(PkceCodeVerifier::new(pending.verifier.clone()))
            .request_async(&self.http)
            .await
            .map_err(|e| {
                tracing::debug!(error = %e, "the provider refused the code");
                Error::Unauthorized
            })?;
        let token = &answer.extra_fields().id_token;
        let audiences: Vec<&str> = [self.client_id(), configured_audience]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let (identity, nonce) = jwt.verify_for(token, &audiences).await?;
        let nonce_matches = nonce.is_some_and(|n| {
            use subtle::ConstantTimeEq;
            bool::from(n.as_bytes().ct_eq(pending.nonce.as_bytes()))
        });
        if !nonce_matches {
            tracing::debug!("ID token nonce does not match the sign-in's");
            return Err(Error::Unauthorized);
        }
        Ok(identity)
    }
}

fn provider_down(reason: String) -> Error {
    tracing::warn!(%reason, "identity provider unusable");
    Error::Unavailable
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> OidcSettings {
        OidcSettings {
            client_id: "corkboard".into(),
            client_secret: String::new(),
            scopes: "openid email".into(),
            session_hours: 12,
        }
    }

    #[test]
    fn a_provider_over_plain_http_is_refused_unless_on_loopback() {
        assert!(settings().check("https://accounts.example.com").is_ok());
        assert!(settings().check("http://127.0.0.1:8081/realms/x").is_ok());
        let refused = settings().check("http://idp.example.com").unwrap_err();
        assert!(refused.contains("https://"), "{refused}");
    }
}
