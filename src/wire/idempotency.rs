//! `Idempotency-Key`: a create sent again with the same key and body answers what the first
//! answered (CONTRACT.md 4), from the answer stored with the first one's commit.

use sha2::{Digest, Sha256};

use crate::{
    app::AppState,
    error::{Error, Result},
    store::Serialized,
};

/// The answer to a create: fresh, or the replay of an earlier identical request.
pub struct Outcome<T> {
    pub data: Serialized<T>,
    pub replayed: bool,
}

/// A client's `Idempotency-Key` with what identifies its request.
pub struct IdempotencyKey {
    pub key: String,
    /// Operation name plus the exact body bytes.
    pub(crate) request_hash: String,
}

impl IdempotencyKey {
    /// What a key may be: 1 to 255 visible ASCII characters (the header's schema).
    pub const PATTERN: &'static str = "^[!-~]{1,255}$";

    /// Accepts 1 to 255 visible ASCII characters ([`Self::PATTERN`]).
    pub fn new(key: &str, operation: &str, body: &[u8]) -> Result<Self> {
        if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::validation(
                "Idempotency-Key",
                "1 to 255 visible ASCII characters",
            ));
        }
        let mut hash = Sha256::new();
        hash.update(operation.as_bytes());
        hash.update([0]);
        hash.update(body);
        Ok(IdempotencyKey {
            key: key.to_owned(),
            request_hash: hex::encode(hash.finalize()),
        })
    }
}

/// Idempotency records older than the configured window no longer replay.
pub(crate) fn live_since(state: &AppState, now: i64) -> i64 {
    let ttl_ms = state.limits().idempotency_ttl_secs.saturating_mul(1000);
    now - i64::try_from(ttl_ms).unwrap_or(i64::MAX)
}

/// The stored answer of the first request with `idem`'s key in workspace `ws`, if one is
/// still kept; 409 when that request had another body.
pub(crate) async fn replay<T>(
    state: &AppState,
    ws: &str,
    idem: &IdempotencyKey,
    now: i64,
) -> Result<Option<Outcome<T>>> {
    let Some(first) = state
        .store
        .find_idempotent(ws, &idem.key, live_since(state, now))
        .await?
    else {
        return Ok(None);
    };
    if first.request_hash != idem.request_hash {
        return Err(Error::Conflict(
            "Idempotency-Key was already used with a different request body".into(),
        ));
    }
    Ok(Some(Outcome {
        data: Serialized::stored(first.response)?,
        replayed: true,
    }))
}
