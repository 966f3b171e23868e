//! What share pages and share streams carry as a resume point: an event id sealed for its
//! workspace, never the id itself. Ids count every workspace's events, so the gap between two
//! of them would tell an anonymous viewer how much the rest of the server wrote meanwhile; a
//! token tells nothing but "this point of this workspace's stream".
//!
//! A token is deterministic authenticated encryption of the id, bound to the workspace (the
//! SIV construction, with HMAC-SHA256 as its one PRF): `siv = PRF(1, ws, id)` (16 bytes),
//! then the id XOR `PRF(2, ws, siv)`, in URL-safe base64 (32 characters). The same point
//! always gives the same token (a page reloaded while only other workspaces write carries the
//! same one), any change to a token or another workspace's token fails to open, and nothing
//! of the id shows. The key is the deployment's, kept in the store, so every replica on one
//! database reads every other's tokens and a restart breaks no open page.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use subtle::ConstantTimeEq;

use super::Hub;
use crate::error::{Error, Result};

type Prf = Hmac<Sha256>;

/// Bytes of the synthetic IV that opens a token and authenticates it.
const SIV: usize = 16;
/// Bytes of an event id.
const ID: usize = 8;

/// Seals and opens the share streams' event ids with the deployment's key.
#[derive(Clone)]
pub(crate) struct ShareIds {
    prf: Prf,
}

impl std::fmt::Debug for ShareIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShareIds(<redacted>)")
    }
}

impl ShareIds {
    /// From the key as the store keeps it (URL-safe base64).
    fn from_stored(key: &str) -> Result<ShareIds> {
        let key = URL_SAFE_NO_PAD
            .decode(key)
            .map_err(|e| Error::internal_in("the stored share event key", e))?;
        let prf = Prf::new_from_slice(&key)
            .map_err(|e| Error::internal_in("the stored share event key", e))?;
        Ok(ShareIds { prf })
    }

    /// The token of event `seq` of workspace `ws`.
    pub(crate) fn seal(&self, ws: &str, seq: i64) -> String {
        let id = seq.to_be_bytes();
        let siv = self.prf(1, ws, &id);
        let mask = self.prf(2, ws, &siv[..SIV]);
        let mut token = [0u8; SIV + ID];
        token[..SIV].copy_from_slice(&siv[..SIV]);
        for (out, (a, b)) in token[SIV..].iter_mut().zip(id.iter().zip(mask.iter())) {
            *out = a ^ b;
        }
        URL_SAFE_NO_PAD.encode(token)
    }

    /// The event id sealed in `token` for workspace `ws`; `None` for anything else.
    pub(crate) fn open(&self, ws: &str, token: &str) -> Option<i64> {
        let token: [u8; SIV + ID] = URL_SAFE_NO_PAD.decode(token.trim()).ok()?.try_into().ok()?;
        let (siv, sealed) = token.split_at(SIV);
        let mask = self.prf(2, ws, siv);
        let mut id = [0u8; ID];
        for (out, (a, b)) in id.iter_mut().zip(sealed.iter().zip(mask.iter())) {
            *out = a ^ b;
        }
        let expected = self.prf(1, ws, &id);
        bool::from(expected[..SIV].ct_eq(siv)).then(|| i64::from_be_bytes(id))
    }

    /// HMAC-SHA256 of `data` in domain `domain`, for workspace `ws`.
    fn prf(&self, domain: u8, ws: &str, data: &[u8]) -> [u8; 32] {
        let mut prf = self.prf.clone();
        prf.update(&[domain]);
        prf.update(&(ws.len() as u64).to_be_bytes());
        prf.update(ws.as_bytes());
        prf.update(data);
        prf.finalize().into_bytes().into()
    }
}

impl Hub {
    /// The deployment's [`ShareIds`]: its key read (or, the first time anywhere, made) in the
    /// store once per process.
    pub(crate) async fn share_ids(&self) -> Result<&ShareIds> {
        self.share_ids
            .get_or_try_init(|| async {
                let mut key = [0u8; 32];
                rand::thread_rng().fill_bytes(&mut key);
                let kept = self
                    .store
                    .share_event_key(&URL_SAFE_NO_PAD.encode(key))
                    .await?;
                ShareIds::from_stored(&kept)
            })
            .await
    }

    /// Where a share page of workspace `ws` resumes its stream: the token of the workspace's
    /// newest event, read before the page's content (its stream then misses nothing). It
    /// changes only when `ws` writes.
    pub(crate) async fn share_since(&self, ws: &str) -> Result<String> {
        let ids = self.share_ids().await?;
        let newest = self.store.newest_event_of(ws).await?;
        Ok(ids.seal(ws, newest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(key: &[u8]) -> ShareIds {
        ShareIds::from_stored(&URL_SAFE_NO_PAD.encode(key)).expect("key")
    }

    #[test]
    fn tokens_open_only_for_their_workspace_and_key() {
        let ids = ids(&[7; 32]);
        let token = ids.seal("ws-a", 42);
        assert_eq!(token.len(), 32);
        assert_eq!(token, ids.seal("ws-a", 42));
        assert_ne!(token, ids.seal("ws-a", 43));
        assert_ne!(token, ids.seal("ws-b", 42));
        assert_eq!(ids.open("ws-a", &token), Some(42));
        assert_eq!(ids.open("ws-a", &ids.seal("ws-a", 0)), Some(0));
        assert_eq!(ids.open("ws-b", &token), None);
        assert_eq!(super::tests::ids(&[8; 32]).open("ws-a", &token), None);
        let mut flipped = token.into_bytes();
        flipped[20] = if flipped[20] == b'A' { b'B' } else { b'A' };
        let flipped = String::from_utf8(flipped).expect("ASCII");
        assert_eq!(ids.open("ws-a", &flipped), None);
        for garbage in ["", "42", "not a token", "%%%", &"A".repeat(32)] {
            assert_eq!(ids.open("ws-a", garbage), None, "{garbage}");
        }
    }
}
