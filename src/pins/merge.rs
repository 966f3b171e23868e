//! Merge patch (CONTRACT.md 14): `PATCH /pins/{id}` with
//! `Content-Type: application/merge-patch+json` applies RFC 7396 to the pin's writable
//! document, and the result is checked as a whole, as an update naming every field.

use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use super::{PinChange, UpdateBody, KEY_PATTERN, LAYOUT_PATTERN, TAGS, TAG_CHARS, TITLE_CHARS};
use crate::{
    config::Limits,
    error::{Error, Result},
    pin_types,
    store::Pin,
    wire::parse_body,
};

/// A merge patch (RFC 7396) of the pin's writable document: a member sent replaces the
/// document's (objects merge member by member, arrays are replaced whole), `null` removes
/// it. `pin_type`, `pin_config`, `pin_layout` and `is_public` can change but not go. The
/// result must be a valid pin (else 400, `PIN_CONFIG_INVALID` at its path).
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields, extend("minProperties" = 1))]
pub struct MergePatchBody {
    #[schemars(schema_with = "pin_types::pin_type_schema")]
    pub pin_type: Option<String>,
    /// Merged into the stored configuration.
    pub pin_config: Option<Map<String, Value>>,
    #[schemars(regex(pattern = LAYOUT_PATTERN))]
    pub pin_layout: Option<String>,
    pub is_public: Option<bool>,
    /// A new key, or `null` to remove it.
    #[schemars(regex(pattern = KEY_PATTERN))]
    pub key: Option<Option<String>>,
    /// Seconds between expected pushes, or `null` to expect none.
    #[schemars(range(min = super::EXPECTED_MIN_SECS, max = super::EXPECTED_MAX_SECS))]
    pub expected_every_secs: Option<Option<i64>>,
    /// The status rules (replaced whole, as arrays are), or `null` to remove them.
    #[schemars(length(max = super::status::MAX_RULES))]
    pub status_rules: Option<Option<Vec<super::status::StatusRule>>>,
    pub metadata: Option<MergePatchMetadata>,
}

/// The `metadata` of a [`MergePatchBody`]: `null` clears a member.
#[derive(JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct MergePatchMetadata {
    #[schemars(length(max = TITLE_CHARS))]
    pub title: Option<Option<String>>,
    #[schemars(length(max = TAGS), inner(length(min = 1, max = TAG_CHARS)))]
    pub tags: Option<Option<Vec<String>>>,
    pub provenance: Option<Option<super::Provenance>>,
}

/// The media type that asks for a merge patch.
pub const MEDIA_TYPE: &str = "application/merge-patch+json";

/// The members of the writable document: the first four can change, not go.
const REQUIRED: [&str; 4] = ["pin_type", "pin_config", "pin_layout", "is_public"];
const OPTIONAL: [&str; 4] = ["key", "expected_every_secs", "status_rules", "metadata"];
const METADATA: [&str; 3] = ["title", "tags", "provenance"];

/// What a pin's writable document is now: `{pin_type, pin_config, pin_layout, is_public,
/// key, expected_every_secs, status_rules, metadata: {title, tags, provenance}}`.
pub fn document(pin: &Pin) -> Result<Value> {
    let stored = |what: &str, text: &str| {
        serde_json::from_str::<Value>(text).map_err(|e| Error::internal_in(what.to_owned(), e))
    };
    let provenance = pin
        .provenance
        .as_deref()
        .map(|text| stored("stored provenance", text))
        .transpose()?;
    let status_rules = pin
        .status_rules
        .as_deref()
        .map(|text| stored("stored status rules", text))
        .transpose()?;
    Ok(json!({
        "pin_type": pin.pin_type,
        "pin_config": stored("stored configuration", &pin.pin_config)?,
        "pin_layout": pin.pin_layout,
        "is_public": pin.is_public,
        "key": pin.key,
        "expected_every_secs": pin.expected_every_secs,
        "status_rules": status_rules,
        "metadata": {"title": pin.title, "tags": pin.tags, "provenance": provenance},
    }))
}

/// The change that makes `pin` its document patched by `patch`: every rule of an update
/// holds for the result (a configuration invalid for its type is `PIN_CONFIG_INVALID` at its
/// path under `pin_config`).
pub fn change(pin: &Pin, patch: &Value, limits: &Limits) -> Result<PinChange> {
    let mut doc = document(pin)?;
    json_patch::merge(&mut doc, patch);
    let Value::Object(mut members) = doc else {
        return Err(Error::validation(
            "body",
            "a JSON object (a merge patch of the pin's document)",
        ));
    };
    check_members(&members, &REQUIRED, &OPTIONAL, "")?;
    for name in REQUIRED {
        if members.get(name).is_none_or(Value::is_null) {
            return Err(Error::validation(
                name,
                "a value: a merge patch may change it, not remove it",
            ));
        }
    }
    // Removed members of the document are cleared: an update that names each one.
    let metadata = match members.remove("metadata") {
        Some(Value::Object(metadata)) => metadata,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(Error::validation("metadata", "a JSON object")),
    };
    check_members(&metadata, &[], &METADATA, "metadata.")?;
    let mut metadata_all = Map::new();
    for name in METADATA {
        metadata_all.insert(
            name.to_owned(),
            metadata.get(name).cloned().unwrap_or(Value::Null),
        );
    }
    members.insert("metadata".into(), Value::Object(metadata_all));
    members.entry("key").or_insert(Value::Null);
    members.entry("expected_every_secs").or_insert(Value::Null);
    members.entry("status_rules").or_insert(Value::Null);
    parse_body::<UpdateBody>(&Value::Object(members), "")?.into_change("", limits)
}

/// Refuses a member the writable document doesn't have (`content`, a typo).
fn check_members(
    members: &Map<String, Value>,
    required: &[&str],
    optional: &[&str],
    prefix: &str,
) -> Result<()> {
    match members
        .keys()
        .find(|name| !required.contains(&name.as_str()) && !optional.contains(&name.as_str()))
    {
        Some(unknown) => Err(Error::validation(
            format!("{prefix}{unknown}"),
            format!(
                "no such member of the pin's document (it has {})",
                required
                    .iter()
                    .chain(optional)
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pin() -> Pin {
        let config =
            r#"{"cards":[{"title":"Revenue","value":"$1"},{"title":"Users","value":"9"}]}"#;
        Pin {
            pin_layout: "2x1".into(),
            title: Some("Sales".into()),
            tags: vec!["finance".into()],
            key: Some("sales".into()),
            version: 3,
            created_at: 1,
            updated_at: 2,
            last_pushed_at: 2,
            ..Pin::new("p-1", "stat-cards", config)
        }
    }

    fn merged(patch: Value) -> Result<Pin> {
        let settings = crate::Settings::with_overrides(&[]).unwrap();
        let limits = &settings.limits;
        change(&pin(), &patch, limits)?.apply(pin(), "", limits, 5)
    }

    #[test]
    fn a_patch_changes_what_it_names_and_keeps_the_rest() {
        let new = merged(json!({"pin_layout": "1x1", "metadata": {"title": "Sales EU"}})).unwrap();
        assert_eq!(new.pin_layout, "1x1");
        assert_eq!(new.title.as_deref(), Some("Sales EU"));
        assert_eq!(new.tags, ["finance"]);
        assert_eq!(new.pin_config, pin().pin_config);
        assert_eq!(new.key.as_deref(), Some("sales"));
        assert_eq!(new.version, 4);
    }

    #[test]
    fn null_removes_a_member() {
        let new = merged(json!({"key": null, "metadata": {"tags": null}})).unwrap();
        assert_eq!(new.key, None);
        assert!(new.tags.is_empty());
        assert_eq!(new.title.as_deref(), Some("Sales"));
    }

    #[test]
    fn arrays_are_replaced_whole_and_checked_for_the_type() {
        let e = merged(json!({"pin_config": {"cards": [{"title": 5}]}})).unwrap_err();
        match e {
            Error::PinConfigInvalid { field, .. } => {
                assert!(field.starts_with("pin_config.cards[0]"), "{field}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn required_members_cannot_go_and_unknown_ones_are_refused() {
        for (patch, field) in [
            (json!({"pin_layout": null}), "pin_layout"),
            (json!({"content": {}}), "content"),
            (json!({"metadata": {"colour": "red"}}), "metadata.colour"),
            (json!([1]), "body"),
        ] {
            match merged(patch) {
                Err(Error::Validation { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }
}
