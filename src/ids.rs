//! Opaque, URL-safe, unguessable identifiers: a type prefix and 128 random bits.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;

pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    let mut id = String::with_capacity(prefix.len() + 22);
    id.push_str(prefix);
    URL_SAFE_NO_PAD.encode_string(bytes, &mut id);
    id
}
