//! Opaque, URL-safe, unguessable identifiers: a type prefix, then 18 bytes in URL-safe
//! base64: the creation time in milliseconds (6 bytes) and 96 random bits (CONTRACT.md 2).
//!
//! The time comes first so that ids made close together share their first characters: a new
//! row's entry in an id index lands beside the previous ones instead of on a random page of
//! the index. With 128 random bits, a batch of 100 pins dirtied about 100 index pages, and
//! each dirty page is written to SQLite's WAL (or PostgreSQL's) at commit. 96 random bits
//! keep an id unguessable; the time it gives away is the record's `created_at`.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;

pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 18];
    let millis = u64::try_from(crate::clock::now_ms()).unwrap_or_default();
    bytes[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
    rand::thread_rng().fill_bytes(&mut bytes[6..]);
    let mut id = String::with_capacity(prefix.len() + 24);
    id.push_str(prefix);
    URL_SAFE_NO_PAD.encode_string(bytes, &mut id);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_share_their_time_prefix_and_differ_in_their_random_part() {
        let (a, b) = (new_id("p-"), new_id("p-"));
        assert_eq!(a.len(), 2 + 24, "18 bytes: 6 of time, 12 (96 bits) random");
        assert!(a.starts_with("p-"));
        assert_ne!(a, b);
        let random = |id: &str| URL_SAFE_NO_PAD.decode(&id[2..]).unwrap()[6..].to_vec();
        assert_eq!(random(&a).len(), 12);
        assert_ne!(random(&a), random(&b));
        // Eight characters carry the 48-bit time; the first six change every 4.1 s.
        assert_eq!(a[2..8], b[2..8]);
    }
}
