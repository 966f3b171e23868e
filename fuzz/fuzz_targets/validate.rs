//! Arbitrary bytes, read as JSON, validated as every pin type: validation must never panic,
//! and whatever passes must survive a round trip through its text unchanged in meaning.
#![no_main]

use corkboard::pin_types::{validate, PinType};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(config) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for &pin_type in PinType::ALL {
        if validate(pin_type, &config).is_ok() {
            let text = serde_json::to_string(&config).expect("serialise");
            let again: serde_json::Value = serde_json::from_str(&text).expect("parse");
            assert!(validate(pin_type, &again).is_ok(), "{} accepted then refused", pin_type.as_str());
            assert!(config.is_object(), "{} accepted a non-object", pin_type.as_str());
        }
    }
});
