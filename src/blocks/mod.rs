//! Blocks: ordered content inside a pin (CONTRACT.md section 7).

pub mod body;
pub mod ops;
