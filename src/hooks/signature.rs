//! Signed calls (CONTRACT.md 14): HMAC-SHA256 of the raw body, as GitHub signs
//! (`X-Hub-Signature-256: sha256=<hex>`) or as Standard Webhooks do (`webhook-id`,
//! `webhook-timestamp`, `webhook-signature: v1,<base64>` over `{id}.{timestamp}.{body}`,
//! with a `whsec_<base64 key>` secret). Signatures are compared in constant time.

use base64::{
    alphabet,
    engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig},
    Engine,
};
use hmac::{Hmac, Mac};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::error::{Error, Result};

type HmacSha256 = Hmac<Sha256>;

/// Longest signature secret, in characters.
pub const SECRET_CHARS: usize = 256;
/// A Standard Webhooks secret: `whsec_` and the key in base64 (padding optional).
pub const STANDARD_SECRET_PATTERN: &str =
    "^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=?|[A-Za-z0-9+/]{2}(?:==?)?)$";
/// What a Standard Webhooks secret starts with.
const STANDARD_PREFIX: &str = "whsec_";
/// How far a Standard Webhooks timestamp may be from now, in seconds.
const TOLERANCE_SECS: i64 = 300;

/// Standard base64 as secrets and signatures are written: padding optional, unused bits of
/// the last character ignored (what [`STANDARD_SECRET_PATTERN`] admits decodes).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// How calls to a hook are signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    /// `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`.
    Github,
    /// Standard Webhooks: `webhook-id`, `webhook-timestamp` (within 5 minutes),
    /// `webhook-signature: v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`.
    Standard,
}

impl Scheme {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Scheme::Github => "github",
            Scheme::Standard => "standard",
        }
    }

    pub(super) fn parse(text: &str) -> Result<Scheme> {
        match text {
            "github" => Ok(Scheme::Github),
            "standard" => Ok(Scheme::Standard),
            other => Err(Error::internal(format!("stored signature scheme {other}"))),
        }
    }
}

/// `signature` of `POST /hooks`: the scheme and the secret the sender signs with.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "scheme", rename_all = "lowercase", deny_unknown_fields)]
pub enum SignatureBody {
    Github {
        /// The webhook's secret as set at the sender, 1 to 256 characters.
        #[schemars(length(min = 1, max = SECRET_CHARS))]
        secret: String,
    },
    Standard {
        /// `whsec_` and the key in base64, at most 256 characters.
        #[schemars(length(max = SECRET_CHARS), regex(pattern = STANDARD_SECRET_PATTERN))]
        secret: String,
    },
}

impl SignatureBody {
    /// The scheme and the secret to store, checked.
    pub(super) fn checked(self) -> Result<(Scheme, String)> {
        let (scheme, secret) = match self {
            SignatureBody::Github { secret } => (Scheme::Github, secret),
            SignatureBody::Standard { secret } => (Scheme::Standard, secret),
        };
        let length = secret.chars().count();
        if length == 0 || length > SECRET_CHARS {
            return Err(Error::validation(
                "signature.secret",
                format!("1 to {SECRET_CHARS} characters"),
            ));
        }
        if scheme == Scheme::Standard && standard_key(&secret).is_none() {
            return Err(Error::validation(
                "signature.secret",
                "`whsec_` and the key in base64, for the standard scheme",
            ));
        }
        Ok((scheme, secret))
    }
}

/// The key of a Standard Webhooks secret; `None` when it is not `whsec_<base64>`.
fn standard_key(secret: &str) -> Option<Vec<u8>> {
    let encoded = secret.strip_prefix(STANDARD_PREFIX)?;
    BASE64.decode(encoded).ok().filter(|key| !key.is_empty())
}

/// The headers a signed call may carry (each as sent, when sent as text).
#[derive(Debug, Default)]
pub struct SignedHeaders {
    /// `X-Hub-Signature-256`.
    pub hub_signature_256: Option<String>,
    /// `webhook-id`.
    pub webhook_id: Option<String>,
    /// `webhook-timestamp`, in seconds since the epoch.
    pub webhook_timestamp: Option<String>,
    /// `webhook-signature`: one or more space-separated `v1,<base64>`.
    pub webhook_signature: Option<String>,
}

/// Whether `body` with `headers` is signed with `secret` as `scheme` says, at `now_ms`;
/// 401 `UNAUTHORIZED` when a signature is missing, malformed, wrong or (Standard Webhooks)
/// too old or too far ahead.
pub(super) fn verify(
    scheme: Scheme,
    secret: &str,
    headers: &SignedHeaders,
    body: &[u8],
    now_ms: i64,
) -> Result<()> {
    let valid = match scheme {
        Scheme::Github => github(secret, headers, body),
        Scheme::Standard => standard(secret, headers, body, now_ms),
    };
    if valid? {
        Ok(())
    } else {
        Err(Error::Unauthorized)
    }
}

fn github(secret: &str, headers: &SignedHeaders, body: &[u8]) -> Result<bool> {
    let Some(signature) = headers
        .hub_signature_256
        .as_deref()
        .and_then(|h| h.trim().strip_prefix("sha256="))
        .and_then(|hex_text| hex::decode(hex_text).ok())
    else {
        return Ok(false);
    };
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).map_err(Error::internal)?;
    mac.update(body);
    Ok(mac.verify_slice(&signature).is_ok())
}

fn standard(secret: &str, headers: &SignedHeaders, body: &[u8], now_ms: i64) -> Result<bool> {
    let (Some(id), Some(timestamp), Some(signatures)) = (
        headers.webhook_id.as_deref(),
        headers.webhook_timestamp.as_deref(),
        headers.webhook_signature.as_deref(),
    ) else {
        return Ok(false);
    };
    let Ok(seconds) = timestamp.trim().parse::<i64>() else {
        return Ok(false);
    };
    if seconds.saturating_sub(now_ms / 1000).abs() > TOLERANCE_SECS {
        return Ok(false);
    }
    let mac = standard_mac(secret, id, timestamp, body)?;
    Ok(signatures
        .split_whitespace()
        .filter_map(|entry| entry.strip_prefix("v1,"))
        .filter_map(|encoded| BASE64.decode(encoded).ok())
        .any(|signature| mac.clone().verify_slice(&signature).is_ok()))
}

/// The Standard Webhooks HMAC of a message, keyed by the key of `secret`
/// (`whsec_<base64 key>`): over `{id}.{timestamp}.{body}`.
fn standard_mac(secret: &str, id: &str, timestamp: &str, body: &[u8]) -> Result<HmacSha256> {
    let mut mac = StandardSigner::new(secret)?.0;
    update_message(&mut mac, id, timestamp, body);
    Ok(mac)
}

fn update_message(mac: &mut HmacSha256, id: &str, timestamp: &str, body: &[u8]) {
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
}

/// How outbound webhooks sign (CONTRACT.md 15), keyed once for many messages: decoding a
/// secret and keying the HMAC cost about as much as signing a small event, and a webhook's
/// delivery task signs every event with the same secret.
#[derive(Clone)]
pub(crate) struct StandardSigner(HmacSha256);

impl StandardSigner {
    /// A signer with the key of `secret` (`whsec_<base64 key>`).
    pub(crate) fn new(secret: &str) -> Result<StandardSigner> {
        let key = standard_key(secret)
            .ok_or_else(|| Error::internal("stored standard secret is not whsec_<base64>"))?;
        Ok(StandardSigner(
            HmacSha256::new_from_slice(&key).map_err(Error::internal)?,
        ))
    }

    /// The `webhook-signature` header of message `id` sent at `timestamp` (seconds) with
    /// `body`: `v1,<base64 HMAC-SHA256>`, which [`verify`] of the `standard` scheme admits.
    pub(crate) fn sign(&self, id: &str, timestamp: &str, body: &[u8]) -> String {
        let mut mac = self.0.clone();
        update_message(&mut mac, id, timestamp, body);
        let signature =
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes());
        format!("v1,{signature}")
    }
}

/// A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64.
pub(crate) fn new_standard_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut bytes);
    format!(
        "{STANDARD_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW_MS: i64 = 1_700_000_000_000;

    fn hmac(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
        let mut mac = HmacSha256::new_from_slice(key).unwrap();
        for part in parts {
            mac.update(part);
        }
        mac.finalize().into_bytes().to_vec()
    }

    #[test]
    fn github_signatures_are_checked_over_the_raw_body() {
        let body = br#"{"zen": "Keep it simple."}"#;
        let good = format!("sha256={}", hex::encode(hmac(b"s3cret", &[body])));
        let with = |value: &str| SignedHeaders {
            hub_signature_256: Some(value.to_owned()),
            ..SignedHeaders::default()
        };
        assert!(verify(Scheme::Github, "s3cret", &with(&good), body, NOW_MS).is_ok());
        for bad in [
            good.replace("sha256=", "sha1="),
            good.replacen('a', "b", 1),
            "sha256=zz".to_owned(),
            String::new(),
        ] {
            let refused = verify(Scheme::Github, "s3cret", &with(&bad), body, NOW_MS);
            assert!(matches!(refused, Err(Error::Unauthorized)), "{bad}");
        }
        let refused = verify(Scheme::Github, "other", &with(&good), body, NOW_MS);
        assert!(matches!(refused, Err(Error::Unauthorized)));
        let missing = verify(
            Scheme::Github,
            "s3cret",
            &SignedHeaders::default(),
            body,
            NOW_MS,
        );
        assert!(matches!(missing, Err(Error::Unauthorized)));
    }

    #[test]
    fn standard_signatures_need_a_recent_timestamp_and_one_matching_entry() {
        let key = b"0123456789abcdef0123456789abcdef";
        let secret = format!(
            "whsec_{}",
            base64::engine::general_purpose::STANDARD.encode(key)
        );
        let body = br#"{"type": "invoice.paid"}"#;
        let at = |seconds: i64| {
            let ts = seconds.to_string();
            let signature = base64::engine::general_purpose::STANDARD
                .encode(hmac(key, &[b"msg_1.", ts.as_bytes(), b".", body]));
            SignedHeaders {
                webhook_id: Some("msg_1".into()),
                webhook_timestamp: Some(ts),
                webhook_signature: Some(format!("v1a,ignored v1,AAAA v1,{signature}")),
                ..SignedHeaders::default()
            }
        };
        let now = NOW_MS / 1000;
        assert!(verify(Scheme::Standard, &secret, &at(now), body, NOW_MS).is_ok());
        assert!(verify(Scheme::Standard, &secret, &at(now - 299), body, NOW_MS).is_ok());
        for stale in [now - 301, now + 301] {
            let refused = verify(Scheme::Standard, &secret, &at(stale), body, NOW_MS);
            assert!(matches!(refused, Err(Error::Unauthorized)), "{stale}");
        }
        let mut tampered = at(now);
        tampered.webhook_id = Some("msg_2".into());
        let refused = verify(Scheme::Standard, &secret, &tampered, body, NOW_MS);
        assert!(matches!(refused, Err(Error::Unauthorized)));
        let mut unsigned = at(now);
        unsigned.webhook_signature = None;
        let refused = verify(Scheme::Standard, &secret, &unsigned, body, NOW_MS);
        assert!(matches!(refused, Err(Error::Unauthorized)));
    }

    #[test]
    fn what_webhooks_sign_the_standard_scheme_admits() {
        let secret = new_standard_secret();
        assert!(standard_key(&secret).is_some_and(|key| key.len() == 32));
        let body = br#"{"type":"webhook.test"}"#;
        let timestamp = (NOW_MS / 1000).to_string();
        let headers = SignedHeaders {
            webhook_id: Some("42".into()),
            webhook_signature: Some(
                StandardSigner::new(&secret)
                    .expect("keyed")
                    .sign("42", &timestamp, body),
            ),
            webhook_timestamp: Some(timestamp.clone()),
            ..SignedHeaders::default()
        };
        assert!(verify(Scheme::Standard, &secret, &headers, body, NOW_MS).is_ok());
        // One signer signs every message of a lease: the next is signed afresh.
        let signer = StandardSigner::new(&secret).expect("keyed");
        for (id, next) in [("43", &br#"{"type":"pin.created"}"#[..]), ("44", body)] {
            let headers = SignedHeaders {
                webhook_id: Some(id.into()),
                webhook_signature: Some(signer.sign(id, &timestamp, next)),
                webhook_timestamp: Some(timestamp.clone()),
                ..SignedHeaders::default()
            };
            assert!(verify(Scheme::Standard, &secret, &headers, next, NOW_MS).is_ok());
        }
        let other = new_standard_secret();
        let refused = verify(Scheme::Standard, &other, &headers, body, NOW_MS);
        assert!(matches!(refused, Err(Error::Unauthorized)));
    }

    #[test]
    fn standard_secrets_are_whsec_and_base64() {
        for good in [
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_AB",
            "whsec_ABC=",
            "whsec_AB==",
        ] {
            let checked = SignatureBody::Standard {
                secret: good.into(),
            }
            .checked();
            assert!(checked.is_ok(), "{good}");
        }
        for bad in [
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_",
            "whsec_A",
            "whsec_AB*C",
            "whsec_ABCDE",
        ] {
            let checked = SignatureBody::Standard { secret: bad.into() }.checked();
            assert!(
                matches!(&checked, Err(Error::Validation { field, .. }) if field == "signature.secret"),
                "{bad}"
            );
        }
        let long = SignatureBody::Github {
            secret: "x".repeat(SECRET_CHARS + 1),
        }
        .checked();
        assert!(long.is_err());
    }
}
