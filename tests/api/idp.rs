//! A fake identity provider made in the tests: RSA and P-256 keys generated here, a JWKS
//! file in a temporary folder, and tokens signed with them.

use std::{path::PathBuf, sync::LazyLock};

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use p256::pkcs8::EncodePrivateKey;
use reqwest::Method;
use rsa::{
    pkcs1::{EncodeRsaPrivateKey, EncodeRsaPublicKey},
    pkcs8::LineEnding,
    traits::PublicKeyParts,
    RsaPrivateKey,
};
use serde_json::{json, Value};

use crate::helpers::{call, Resp, TestApp};

pub const ISSUER: &str = "https://idp.example.test/";
pub const AUDIENCE: &str = "corkboard";
pub const HS256_SECRET: &str = "a shared secret of at least thirty-two bytes";

/// The provider's signing key and a stranger's, made once per test run.
static KEYS: LazyLock<[RsaPrivateKey; 2]> = LazyLock::new(|| {
    let mut rng = rand::thread_rng();
    [
        RsaPrivateKey::new(&mut rng, 2048).expect("RSA key"),
        RsaPrivateKey::new(&mut rng, 2048).expect("RSA key"),
    ]
});

/// The provider's ES256 key, published as `e1`.
static EC_KEY: LazyLock<p256::SecretKey> =
    LazyLock::new(|| p256::SecretKey::random(&mut rand::thread_rng()));

fn private_pem(key: &RsaPrivateKey) -> String {
    key.to_pkcs1_pem(LineEnding::LF).expect("PEM").to_string()
}

/// The provider's public key as PEM: what a key-confusion attack would use as HMAC secret.
pub fn public_pem() -> String {
    KEYS[0]
        .to_public_key()
        .to_pkcs1_pem(LineEnding::LF)
        .expect("PEM")
}

/// A JWKS holding the provider's RSA key under each of `kids`, and its P-256 key as `e1`.
pub fn jwks(kids: &[&str]) -> String {
    let public = KEYS[0].to_public_key();
    let mut ec: Value = serde_json::from_str(&EC_KEY.public_key().to_jwk_string()).expect("EC JWK");
    ec["kid"] = json!("e1");
    ec["alg"] = json!("ES256");
    ec["use"] = json!("sig");
    let keys: Vec<Value> = kids
        .iter()
        .map(|kid| {
            json!({
                "kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
                "n": URL_SAFE_NO_PAD.encode(public.n().to_bytes_be()),
                "e": URL_SAFE_NO_PAD.encode(public.e().to_bytes_be()),
            })
        })
        .chain([ec])
        .collect();
    json!({ "keys": keys }).to_string()
}

pub fn now_secs() -> i64 {
    corkboard::clock::now_ms() / 1000
}

/// Valid claims for `sub` in workspace `default` with a verified email, to be changed by
/// each test.
pub fn claims(sub: &str) -> Value {
    json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": sub, "email": format!("{sub}@example.test"),
        "email_verified": true, "org": "default", "iat": now_secs(), "exp": now_secs() + 600,
    })
}

/// RS256, signed by the provider's key under key id `k1`.
pub fn rs256(claims: &Value) -> String {
    sign_rsa(&KEYS[0], "k1", claims)
}

/// RS256 with the stranger's key, under the provider's key id.
pub fn rs256_wrong_key(claims: &Value) -> String {
    sign_rsa(&KEYS[1], "k1", claims)
}

pub fn sign_rsa(key: &RsaPrivateKey, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.into());
    let key = EncodingKey::from_rsa_pem(private_pem(key).as_bytes()).expect("encoding key");
    encode(&header, claims, &key).expect("sign")
}

/// The provider's key, for a token under another key id.
pub fn provider_key() -> &'static RsaPrivateKey {
    &KEYS[0]
}

/// ES256, signed by the provider's P-256 key under key id `e1`.
pub fn es256(claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("e1".into());
    let pem = EC_KEY.to_pkcs8_pem(LineEnding::LF).expect("PEM");
    let key = EncodingKey::from_ec_pem(pem.as_bytes()).expect("encoding key");
    encode(&header, claims, &key).expect("sign")
}

pub fn hs256(secret: &[u8], claims: &Value) -> String {
    encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret),
    )
    .expect("sign")
}

/// An unsigned token (`alg: none`).
pub fn unsigned(claims: &Value) -> String {
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.",
        part(&json!({"alg": "none", "typ": "JWT"})),
        part(claims)
    )
}

/// `[auth.jwt]` settings trusting the provider, with its keys at `jwks` (a path or URL).
pub fn config(algorithms: &str, jwks: &str, extra: &str) -> String {
    format!(
        "[auth.jwt]\nissuer = \"{ISSUER}\"\naudience = \"{AUDIENCE}\"\nalgorithms = \"{algorithms}\"\n\
         jwks = \"{jwks}\"\nhs256_secret = \"{HS256_SECRET}\"\nworkspace_claim = \"org\"\nrole_claim = \"role\"\n{extra}"
    )
}

/// A server that accepts the provider's tokens, with its JWKS file.
pub struct IdpApp {
    pub app: TestApp,
    pub jwks_path: PathBuf,
}

impl IdpApp {
    /// `algorithms` as configured (e.g. `"RS256"`), `extra` more `[auth.jwt]` lines.
    pub async fn start(postgres: bool, algorithms: &str, extra: &str) -> IdpApp {
        let jwks_path =
            std::env::temp_dir().join(format!("corkboard-test-jwks-{}.json", uuid::Uuid::new_v4()));
        std::fs::write(&jwks_path, jwks(&["k1"])).expect("write JWKS");
        let config = config(algorithms, &jwks_path.display().to_string(), extra);
        let app = if postgres {
            TestApp::postgres_with(&config).await
        } else {
            TestApp::sqlite_with(&config).await
        };
        IdpApp { app, jwks_path }
    }

    /// Sends `method path` (with `body` as JSON when given) with `credential` as bearer.
    pub async fn call(
        &self,
        credential: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Resp {
        call(&self.app, credential, method, path, body).await
    }

    /// A token of user `sub` with role `role` (the role claim), in the default workspace.
    pub fn user(&self, sub: &str, role: &str) -> String {
        let mut claims = claims(sub);
        claims["role"] = json!(role);
        rs256(&claims)
    }
}

impl Drop for IdpApp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.jwks_path);
    }
}

/// Defines `mod $name { sqlite(), postgres() }` over an [`IdpApp`] accepting RS256.
#[macro_export]
macro_rules! idp_stores {
    ($(async fn $name:ident($idp:ident) $body:block)*) => {$(
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $idp = $crate::idp::IdpApp::start(false, "RS256", "").await;
                $body
            }
            #[tokio::test]
            async fn postgres() {
                $crate::skip_without_postgres!();
                let $idp = $crate::idp::IdpApp::start(true, "RS256", "").await;
                $body
            }
        }
    )*};
}
