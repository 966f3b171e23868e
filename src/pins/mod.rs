//! Pins: the request bodies, their parsing into checked domain values, and the record shape
//! every read returns. [`ops`] holds the operations HTTP (and later MCP and pages) call.

pub mod append;
pub mod known;
pub mod merge;
pub mod ops;
pub mod records;
pub mod rendered;
pub mod status;
pub mod upsert;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use status::{Status, StatusRule, MAX_RULES};

use crate::{
    clock,
    config::Limits,
    error::{Error, Result},
    pin_types::{self, PinType},
    store::{JsonText, Pin},
    wire::body::{nullable, present},
};

/// The example create body of the API description: a stat-cards pin.
pub fn create_example() -> Value {
    serde_json::json!({
        "pin_type": "stat-cards",
        "pin_config": PinType::StatCards.example(),
        "metadata": {"title": "Revenue", "tags": ["finance"]}
    })
}

/// Longest pin or pinboard title, in characters: the default of `limits.title_chars`.
/// Each bound of a configurable limit below is the default the API description states;
/// a server configured otherwise describes its own (`api::openapi`).
pub const TITLE_CHARS: usize = 200;
/// Most tags on a pin or board: the default of `limits.tags`.
pub const TAGS: usize = 20;
/// Longest tag, in characters: the default of `limits.tag_chars`.
pub const TAG_CHARS: usize = 64;
/// Most items in one batch: the default of `limits.batch_items`.
pub const BATCH_ITEMS: usize = 100;
/// Longest `run_id`, `updated_by` and `trace_pin_id` of a provenance, in characters.
pub const PROVENANCE_CHARS: usize = 200;
/// Most `sources` of a provenance.
pub const SOURCES: usize = 50;
/// Longest source `type`, in characters (at least 1).
pub const SOURCE_TYPE_CHARS: usize = 64;
/// Longest source `ref`, in characters.
pub const SOURCE_REF_CHARS: usize = 2000;
/// A name or title that must not be blank holds a character other than a space, tab or
/// line break ([`is_blank`]); as a schema `pattern`, which also refuses U+0000 (as every
/// text is refused with it).
pub const NOT_BLANK: &str = "^[^\\x00]*[^ \\t\\n\\r\\x00][^\\x00]*$";

/// Whether `text` is only spaces, tabs and line breaks (what [`NOT_BLANK`] refuses).
pub fn is_blank(text: &str) -> bool {
    text.bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

/// A provenance's `trace_pin_id`: a pin id (`p-...`), with no U+0000 in it.
pub const TRACE_PIN_PATTERN: &str = "^p-[^\\x00]*$";

/// A pin's `key` (CONTRACT.md 14): the caller's own name for it, unique in the workspace.
pub const KEY_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$";

/// Checks a key against [`KEY_PATTERN`].
pub fn check_key(key: &str, field: &str) -> Result<()> {
    let bytes = key.as_bytes();
    let ok = (1..=128).contains(&bytes.len())
        && bytes[0].is_ascii_alphanumeric()
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::validation(
            field,
            "1 to 128 letters, digits, `.`, `_`, `:` or `-`, starting with a letter or digit",
        ))
    }
}

/// `pin_layout`: `WxH`, each from 1 to 4.
pub const LAYOUT_PATTERN: &str = "^[1-4]x[1-4]$";

/// `POST /pins` body: shape A (`pin_type`, `pin_config`, `metadata`) or shape B
/// (`data_type`, `pin_type`, `pin_layout`, `content`, `metadata`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = create_example())]
pub struct CreateBody {
    #[schemars(schema_with = "pin_types::pin_type_schema")]
    pub pin_type: String,
    /// The configuration (shape A), valid for `pin_type` (else 400 `PIN_CONFIG_INVALID`).
    /// One of `pin_config`, `content` and `metadata.pin_config` is required; when several
    /// are sent they must be the same value (else 400).
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "pin_types::config_schema")]
    pub pin_config: Option<Value>,
    /// The configuration (shape B); see `pin_config`.
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "pin_types::config_schema")]
    pub content: Option<Value>,
    /// Shape B marker: `pin-card`.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", extend("const" = "pin-card"))]
    pub data_type: Option<String>,
    /// Grid size `WxH`, each 1 to 4 (default `1x1`).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", regex(pattern = LAYOUT_PATTERN))]
    pub pin_layout: Option<String>,
    /// Also accepted as `metadata.is_public`; when both are sent they must agree (else 400).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub is_public: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "MetadataBody")]
    pub metadata: Option<MetadataBody>,
    /// The caller's name for the pin, unique in the workspace (a taken one: 409 with
    /// `details.field: "key"`); upserts and appends can name the pin by it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", regex(pattern = KEY_PATTERN))]
    pub key: Option<String>,
    /// How often a push is expected, in seconds (10 to 2592000): past that without one, the
    /// pin is `stale` and a `pin.stale` event is logged (CONTRACT.md 15). `null`: none.
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<i64>", range(min = EXPECTED_MIN_SECS, max = EXPECTED_MAX_SECS))]
    pub expected_every_secs: Option<Option<i64>>,
    /// At most 20 rules giving the pin its `status` (CONTRACT.md 15): the first whose path
    /// holds a number satisfying it decides; none matching is `ok`. `null` or `[]`: none.
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<Vec<StatusRule>>", length(max = MAX_RULES))]
    pub status_rules: Option<Option<Vec<StatusRule>>>,
}

/// The bounds of `expected_every_secs`: ten seconds to thirty days.
pub const EXPECTED_MIN_SECS: i64 = 10;
pub const EXPECTED_MAX_SECS: i64 = 2_592_000;

fn check_expected(secs: Option<i64>, field: &str) -> Result<()> {
    match secs {
        Some(secs) if !(EXPECTED_MIN_SECS..=EXPECTED_MAX_SECS).contains(&secs) => {
            Err(Error::validation(
                field,
                format!(
                    "a number of seconds from {EXPECTED_MIN_SECS} to {EXPECTED_MAX_SECS}, or null"
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// `PUT`/`PATCH /pins/{id}` body: only supplied fields change, at least one (`metadata`
/// alone needs a field of its own, else 400; an empty one beside other fields changes
/// nothing). That last rule is not in the schema: stated as an `if`/`then` beside the
/// type pairs, schemathesis could not generate bodies.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    example = serde_json::json!({"metadata": {"title": "Revenue (EU)"}, "pin_layout": "2x1"}),
    extend("minProperties" = 1)
)]
pub struct UpdateBody {
    /// A new type needs a configuration valid for it (sent here, or the stored one);
    /// without `pin_type`, a configuration must be valid for the pin's current type (else
    /// 400 `PIN_CONFIG_INVALID`).
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "pin_types::pin_type_schema")]
    pub pin_type: Option<String>,
    /// The new configuration. Also accepted as `content` or `metadata.pin_config`; when
    /// several are sent they must be the same value (else 400).
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "pin_types::config_schema")]
    pub pin_config: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "pin_types::config_schema")]
    pub content: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "String", regex(pattern = LAYOUT_PATTERN))]
    pub pin_layout: Option<String>,
    /// Also accepted as `metadata.is_public`; when both are sent they must agree (else 400).
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub is_public: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "MetadataBody")]
    pub metadata: Option<MetadataBody>,
    /// A new key (unique in the workspace, else 409), or `null` to remove it.
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", regex(pattern = KEY_PATTERN))]
    pub key: Option<Option<String>>,
    /// How often a push is expected, in seconds (10 to 2592000), or `null` to expect none.
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<i64>", range(min = EXPECTED_MIN_SECS, max = EXPECTED_MAX_SECS))]
    pub expected_every_secs: Option<Option<i64>>,
    /// New status rules (at most 20), replacing the old; `null` or `[]` removes them.
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<Vec<StatusRule>>", length(max = MAX_RULES))]
    pub status_rules: Option<Option<Vec<StatusRule>>>,
}

/// `metadata` of a create or update. `title: null` clears the title, `tags: null` the
/// tags, `provenance: null` the provenance.
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetadataBody {
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(length(max = TITLE_CHARS))]
    pub title: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(length(max = TAGS), inner(length(min = 1, max = TAG_CHARS)))]
    pub tags: Option<Option<Vec<String>>>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub is_public: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(schema_with = "pin_types::config_schema")]
    pub pin_config: Option<Value>,
    #[serde(default, deserialize_with = "nullable")]
    pub provenance: Option<Option<Provenance>>,
}

/// Run/source audit data attached to a pin.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = PROVENANCE_CHARS))]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = PROVENANCE_CHARS))]
    pub updated_by: Option<String>,
    /// A pin id (`p-...`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = PROVENANCE_CHARS), regex(pattern = TRACE_PIN_PATTERN))]
    pub trace_pin_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = SOURCES))]
    pub sources: Option<Vec<Source>>,
}

/// Where a pin's data came from. A `url` source's `ref` is an absolute http(s) URL (else
/// 400).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Source {
    #[serde(rename = "type")]
    #[schemars(length(min = 1, max = SOURCE_TYPE_CHARS))]
    pub kind: String,
    #[serde(rename = "ref")]
    #[schemars(length(max = SOURCE_REF_CHARS))]
    pub reference: String,
}

impl Provenance {
    /// Checks the rules serde can't, returning the stored JSON text.
    fn into_json(self, field: &str) -> Result<String> {
        let texts = [
            ("run_id", &self.run_id),
            ("updated_by", &self.updated_by),
            ("trace_pin_id", &self.trace_pin_id),
        ];
        for (name, text) in texts {
            if text
                .as_ref()
                .is_some_and(|t| t.chars().count() > PROVENANCE_CHARS)
            {
                return Err(Error::validation(
                    format!("{field}.{name}"),
                    format!("at most {PROVENANCE_CHARS} characters"),
                ));
            }
        }
        if self
            .trace_pin_id
            .as_ref()
            .is_some_and(|t| !t.starts_with("p-"))
        {
            return Err(Error::validation(
                format!("{field}.trace_pin_id"),
                "a pin id (p-...)",
            ));
        }
        let sources = self.sources.as_deref().unwrap_or_default();
        if sources.len() > SOURCES {
            return Err(Error::validation(
                format!("{field}.sources"),
                format!("at most {SOURCES} sources"),
            ));
        }
        for (i, source) in sources.iter().enumerate() {
            let chars = source.kind.chars().count();
            if chars == 0 || chars > SOURCE_TYPE_CHARS {
                return Err(Error::validation(
                    format!("{field}.sources[{i}].type"),
                    format!("1 to {SOURCE_TYPE_CHARS} characters"),
                ));
            }
            if source.reference.chars().count() > SOURCE_REF_CHARS {
                return Err(Error::validation(
                    format!("{field}.sources[{i}].ref"),
                    format!("at most {SOURCE_REF_CHARS} characters"),
                ));
            }
            if source.kind == "url" && pin_types::parse_web_url(&source.reference).is_none() {
                return Err(Error::validation(
                    format!("{field}.sources[{i}].ref"),
                    "an absolute http or https URL",
                ));
            }
        }
        serde_json::to_string(&self).map_err(Error::internal)
    }
}

fn parse_pin_type(name: &str, field: &str) -> Result<PinType> {
    PinType::parse(name)
        .ok_or_else(|| Error::validation(field, format!("one of {}", PinType::expected_list())))
}

fn check_layout(layout: &str, field: &str) -> Result<()> {
    let ok = layout.split_once('x').is_some_and(|(w, h)| {
        [w, h]
            .iter()
            .all(|n| n.len() == 1 && matches!(n.as_bytes()[0], b'1'..=b'4'))
    });
    if ok {
        Ok(())
    } else {
        Err(Error::validation(
            field,
            "WxH with W and H from 1 to 4, e.g. 1x1",
        ))
    }
}

/// Validates `config` for `pin_type` and returns its stored JSON text.
fn check_config(pin_type: PinType, config: &Value, field: &str, limits: &Limits) -> Result<String> {
    let text = serde_json::to_string(config).map_err(Error::internal)?;
    if text.len() > limits.pin_config_bytes {
        return Err(Error::validation(
            field,
            format!("at most {} bytes of JSON", limits.pin_config_bytes),
        ));
    }
    pin_types::validate(pin_type, config).map_err(|e| {
        let field = e.field(field);
        Error::PinConfigInvalid {
            message: format!(
                "invalid {} configuration at `{field}`: expected {}",
                pin_type.as_str(),
                e.expected
            ),
            field,
            expected: e.expected,
            index: None,
        }
    })?;
    Ok(text)
}

/// The one configuration a body carries, from any of the places it may be sent.
/// Two different configurations in one body are refused.
fn one_config<'a>(
    prefix: &str,
    places: [(&'static str, Option<&'a Value>); 3],
) -> Result<Option<(String, &'a Value)>> {
    let mut found: Option<(&'static str, &'a Value)> = None;
    for (name, value) in places {
        let Some(value) = value else { continue };
        match found {
            Some((first, seen)) if seen != value => {
                return Err(Error::validation(
                    format!("{prefix}{name}"),
                    format!("the same configuration as `{prefix}{first}`, or only one of them"),
                ));
            }
            Some(_) => {}
            None => found = Some((name, value)),
        }
    }
    Ok(found.map(|(name, value)| (format!("{prefix}{name}"), value)))
}

fn check_title(title: &str, field: &str, limits: &Limits) -> Result<()> {
    if title.chars().count() > limits.title_chars {
        return Err(Error::validation(
            field,
            format!("at most {} characters", limits.title_chars),
        ));
    }
    Ok(())
}

pub(crate) fn check_tags(tags: &[String], field: &str, limits: &Limits) -> Result<()> {
    if tags.len() > limits.tags {
        return Err(Error::validation(
            field,
            format!("at most {} tags", limits.tags),
        ));
    }
    for (i, tag) in tags.iter().enumerate() {
        if tag.is_empty() || tag.chars().count() > limits.tag_chars {
            return Err(Error::validation(
                format!("{field}[{i}]"),
                format!("1 to {} characters", limits.tag_chars),
            ));
        }
    }
    Ok(())
}

fn agree(a: Option<bool>, b: Option<bool>, prefix: &str) -> Result<Option<bool>> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => Err(Error::validation(
            format!("{prefix}metadata.is_public"),
            format!("the same value as `{prefix}is_public`, or only one of them"),
        )),
        (x, y) => Ok(x.or(y)),
    }
}

impl CreateBody {
    /// An upsert's two outcomes from one body (CONTRACT.md 14): the pin to create when no pin
    /// has `key`, and the change that makes the keyed pin what the body says (its type and
    /// configuration; layout, visibility and metadata only when sent, metadata merging as on
    /// update). A `key` in the body must be `key`.
    pub fn into_upsert(
        mut self,
        key: &str,
        prefix: &str,
        limits: &Limits,
        now: i64,
    ) -> Result<(Pin, PinChange)> {
        check_key(key, &format!("{prefix}key"))?;
        if self.key.as_deref().is_some_and(|sent| sent != key) {
            return Err(Error::validation(
                format!("{prefix}key"),
                format!("`{key}`, the key the pin is upserted by (or no key)"),
            ));
        }
        self.key = Some(key.to_owned());
        let metadata = self.metadata.clone().unwrap_or_default();
        let update = UpdateBody {
            pin_type: Some(self.pin_type.clone()),
            pin_config: self
                .pin_config
                .clone()
                .or_else(|| self.content.clone())
                .or_else(|| metadata.pin_config.clone()),
            content: None,
            pin_layout: self.pin_layout.clone(),
            is_public: self.is_public.or(metadata.is_public),
            metadata: Some(MetadataBody {
                pin_config: None,
                is_public: None,
                ..metadata
            }),
            key: Some(Some(key.to_owned())),
            expected_every_secs: self.expected_every_secs,
            status_rules: self.status_rules.clone(),
        };
        let pin = self.into_pin(prefix, limits, now)?;
        let change = update.into_change(prefix, limits)?;
        Ok((pin, change))
    }

    /// Checks everything and builds the pin to store. `prefix` locates the body in the
    /// request (`""`, or `pins[3].` in a batch).
    pub fn into_pin(self, prefix: &str, limits: &Limits, now: i64) -> Result<Pin> {
        let pin_type = parse_pin_type(&self.pin_type, &format!("{prefix}pin_type"))?;
        if let Some(data_type) = &self.data_type {
            if data_type != "pin-card" {
                return Err(Error::validation(format!("{prefix}data_type"), "pin-card"));
            }
        }
        let metadata = self.metadata.unwrap_or_default();
        let (field, config) = one_config(
            prefix,
            [
                ("pin_config", self.pin_config.as_ref()),
                ("content", self.content.as_ref()),
                ("metadata.pin_config", metadata.pin_config.as_ref()),
            ],
        )?
        .ok_or_else(|| {
            Error::validation(
                format!("{prefix}pin_config"),
                "a configuration object (required, as pin_config or content)",
            )
        })?;
        let pin_config = check_config(pin_type, config, &field, limits)?;
        let pin_layout = self.pin_layout.unwrap_or_else(|| "1x1".to_owned());
        check_layout(&pin_layout, &format!("{prefix}pin_layout"))?;
        let title = metadata.title.flatten();
        if let Some(title) = &title {
            check_title(title, &format!("{prefix}metadata.title"), limits)?;
        }
        let tags = metadata.tags.flatten().unwrap_or_default();
        check_tags(&tags, &format!("{prefix}metadata.tags"), limits)?;
        let is_public = agree(self.is_public, metadata.is_public, prefix)?.unwrap_or(false);
        let provenance = metadata
            .provenance
            .flatten()
            .map(|p| p.into_json(&format!("{prefix}metadata.provenance")))
            .transpose()?;
        if let Some(key) = &self.key {
            check_key(key, &format!("{prefix}key"))?;
        }
        let expected_every_secs = self.expected_every_secs.flatten();
        check_expected(expected_every_secs, &format!("{prefix}expected_every_secs"))?;
        let status_rules = status::check(
            self.status_rules.flatten(),
            &format!("{prefix}status_rules"),
        )?;
        let mut pin = Pin {
            id: crate::ids::new_id("p-"),
            pin_type: pin_type.as_str().to_owned(),
            pin_config,
            pin_layout,
            is_public,
            allow_edit: false,
            require_sign_in: false,
            allow_comments: false,
            title,
            tags,
            provenance,
            key: self.key,
            version: 1,
            created_at: now,
            updated_at: now,
            expected_every_secs,
            last_pushed_at: now,
            status_rules,
            status: None,
        };
        status::restate(&mut pin)?;
        Ok(pin)
    }
}

/// A checked update, ready to apply to the current pin inside the write transaction.
#[derive(Debug, Default)]
pub struct PinChange {
    pin_type: Option<PinType>,
    /// The new configuration and the request field it came from.
    config: Option<(String, Value)>,
    pin_layout: Option<String>,
    is_public: Option<bool>,
    title: Option<Option<String>>,
    tags: Option<Vec<String>>,
    provenance: Option<Option<String>>,
    key: Option<Option<String>>,
    expected_every_secs: Option<Option<i64>>,
    /// New rules as stored (`None` inside: remove them).
    status_rules: Option<Option<String>>,
}

impl UpdateBody {
    /// Checks everything that doesn't depend on the stored pin. An update that changes
    /// nothing is refused.
    pub fn into_change(self, prefix: &str, limits: &Limits) -> Result<PinChange> {
        let pin_type = self
            .pin_type
            .as_deref()
            .map(|name| parse_pin_type(name, &format!("{prefix}pin_type")))
            .transpose()?;
        let metadata = self.metadata.unwrap_or_default();
        let config = one_config(
            prefix,
            [
                ("pin_config", self.pin_config.as_ref()),
                ("content", self.content.as_ref()),
                ("metadata.pin_config", metadata.pin_config.as_ref()),
            ],
        )?
        .map(|(field, value)| (field, value.clone()));
        if let Some(layout) = &self.pin_layout {
            check_layout(layout, &format!("{prefix}pin_layout"))?;
        }
        if let Some(Some(title)) = &metadata.title {
            check_title(title, &format!("{prefix}metadata.title"), limits)?;
        }
        let tags = metadata.tags.map(Option::unwrap_or_default);
        if let Some(tags) = &tags {
            check_tags(tags, &format!("{prefix}metadata.tags"), limits)?;
        }
        let provenance = metadata
            .provenance
            .map(|p| {
                p.map(|p| p.into_json(&format!("{prefix}metadata.provenance")))
                    .transpose()
            })
            .transpose()?;
        if let Some(Some(key)) = &self.key {
            check_key(key, &format!("{prefix}key"))?;
        }
        if let Some(secs) = self.expected_every_secs {
            check_expected(secs, &format!("{prefix}expected_every_secs"))?;
        }
        let status_rules = self
            .status_rules
            .map(|rules| status::check(rules, &format!("{prefix}status_rules")))
            .transpose()?;
        let change = PinChange {
            pin_type,
            config,
            pin_layout: self.pin_layout,
            is_public: agree(self.is_public, metadata.is_public, prefix)?,
            title: metadata.title,
            tags,
            provenance,
            key: self.key,
            expected_every_secs: self.expected_every_secs,
            status_rules,
        };
        if change.is_empty() {
            return Err(Error::validation(
                prefix.trim_end_matches('.').to_owned(),
                "at least one field to update (pin_type, pin_config, content, pin_layout, is_public, key, expected_every_secs, status_rules or metadata)",
            ));
        }
        Ok(change)
    }
}

impl PinChange {
    /// Whether the new configuration names a dataset (`{{name...}}`).
    pub fn names_datasets(&self) -> bool {
        self.config
            .as_ref()
            .is_some_and(|(_, config)| crate::templates::names_any(config))
    }

    fn is_empty(&self) -> bool {
        self.pin_type.is_none()
            && self.config.is_none()
            && self.pin_layout.is_none()
            && self.is_public.is_none()
            && self.title.is_none()
            && self.tags.is_none()
            && self.provenance.is_none()
            && self.key.is_none()
            && self.expected_every_secs.is_none()
            && self.status_rules.is_none()
    }

    /// The pin after this change: the next version, with the configuration valid for its
    /// (possibly new) type.
    pub fn apply(&self, mut pin: Pin, prefix: &str, limits: &Limits, now: i64) -> Result<Pin> {
        let pin_type = match self.pin_type {
            Some(t) => t,
            None => parse_pin_type(&pin.pin_type, &format!("{prefix}pin_type"))?,
        };
        match &self.config {
            Some((field, value)) => pin.pin_config = check_config(pin_type, value, field, limits)?,
            None if self.pin_type.is_some() => {
                let current: Value = serde_json::from_str(&pin.pin_config)
                    .map_err(|e| Error::internal_in("stored configuration", e))?;
                check_config(pin_type, &current, &format!("{prefix}pin_config"), limits)?;
            }
            None => {}
        }
        pin.pin_type = pin_type.as_str().to_owned();
        if let Some(layout) = &self.pin_layout {
            pin.pin_layout = layout.clone();
        }
        if let Some(is_public) = self.is_public {
            pin.is_public = is_public;
        }
        if let Some(title) = &self.title {
            pin.title = title.clone();
        }
        if let Some(tags) = &self.tags {
            pin.tags = tags.clone();
        }
        if let Some(provenance) = &self.provenance {
            pin.provenance = provenance.clone();
        }
        if let Some(key) = &self.key {
            pin.key = key.clone();
        }
        if let Some(secs) = self.expected_every_secs {
            pin.expected_every_secs = secs;
        }
        if let Some(rules) = &self.status_rules {
            pin.status_rules = rules.clone();
        }
        status::restate(&mut pin)?;
        pin.version += 1;
        pin.updated_at = now.max(pin.updated_at);
        pin.last_pushed_at = now.max(pin.last_pushed_at);
        Ok(pin)
    }
}

/// The pin record of reads, lists and batch gets (CONTRACT.md 2).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Pin", deny_unknown_fields)]
pub struct PinRecord {
    pub id: String,
    /// The caller's name for the pin (CONTRACT.md 14), `null` when it has none.
    pub key: Option<String>,
    #[schemars(schema_with = "pin_types::pin_type_schema")]
    pub pin_type: String,
    #[schemars(schema_with = "pin_types::config_schema")]
    pub pin_config: JsonText,
    pub pin_layout: String,
    pub is_public: bool,
    pub metadata: RecordMetadata,
    /// Starts at 1, grows with every update; the `ETag` of a read.
    pub version: i64,
    /// The pin's share page (served when the pin is public).
    #[schemars(extend("format" = "uri"))]
    pub shareable_url: String,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
    /// How often a push is expected, in seconds; `null`: no expectation.
    pub expected_every_secs: Option<i64>,
    /// The last create, update, upsert (changed or not) or append.
    #[schemars(extend("format" = "date-time"))]
    pub last_pushed_at: String,
    /// Whether more than `expected_every_secs` has passed since `last_pushed_at` (always
    /// false without an expectation).
    pub stale: bool,
    /// The rules that give `status`; `null`: none.
    #[schemars(with = "Option<Vec<StatusRule>>")]
    pub status_rules: Option<JsonText>,
    /// What the rules give the rendered configuration (`ok` when none matches); `null`
    /// without rules.
    #[schemars(with = "Option<Status>")]
    pub status: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "PinMetadata", deny_unknown_fields)]
pub struct RecordMetadata {
    pub title: Option<String>,
    pub tags: Vec<String>,
    #[schemars(with = "Option<Provenance>")]
    pub provenance: Option<JsonText>,
}

/// Where a pin's share page lives (served by the share pages).
pub fn shareable_url(base: &str, id: &str) -> String {
    format!("{base}/share/{id}")
}

impl PinRecord {
    /// The record of `pin`, taking its text rather than copying it (a rendered pin's
    /// configuration may be a large string).
    pub fn from_pin(pin: Pin, public_base: &str) -> Result<Self> {
        Ok(PinRecord {
            shareable_url: shareable_url(public_base, &pin.id),
            created_at: clock::iso(pin.created_at),
            updated_at: clock::iso(pin.updated_at),
            expected_every_secs: pin.expected_every_secs,
            last_pushed_at: clock::iso(pin.last_pushed_at),
            stale: pin.stale_at(clock::now_ms()),
            status_rules: pin.status_rules.map(JsonText::stored).transpose()?,
            status: pin.status,
            pin_config: JsonText::stored(pin.pin_config)?,
            metadata: RecordMetadata {
                title: pin.title,
                tags: pin.tags,
                provenance: pin.provenance.map(JsonText::stored).transpose()?,
            },
            id: pin.id,
            key: pin.key,
            pin_type: pin.pin_type,
            pin_layout: pin.pin_layout,
            is_public: pin.is_public,
            version: pin.version,
        })
    }

    pub fn new(pin: &Pin, public_base: &str) -> Result<Self> {
        Ok(PinRecord {
            id: pin.id.clone(),
            key: pin.key.clone(),
            pin_type: pin.pin_type.clone(),
            pin_config: JsonText::stored(pin.pin_config.as_str())?,
            pin_layout: pin.pin_layout.clone(),
            is_public: pin.is_public,
            metadata: RecordMetadata {
                title: pin.title.clone(),
                tags: pin.tags.clone(),
                provenance: pin
                    .provenance
                    .as_deref()
                    .map(JsonText::stored)
                    .transpose()?,
            },
            version: pin.version,
            shareable_url: shareable_url(public_base, &pin.id),
            created_at: clock::iso(pin.created_at),
            updated_at: clock::iso(pin.updated_at),
            expected_every_secs: pin.expected_every_secs,
            last_pushed_at: clock::iso(pin.last_pushed_at),
            stale: pin.stale_at(clock::now_ms()),
            status_rules: pin
                .status_rules
                .as_deref()
                .map(JsonText::stored)
                .transpose()?,
            status: pin.status.clone(),
        })
    }
}

/// Create response data: `pin_id` plus the whole record.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct CreatedPin {
    pub pin_id: String,
    #[serde(flatten)]
    pub record: PinRecord,
}

impl CreatedPin {
    pub fn new(pin: &Pin, public_base: &str) -> Result<Self> {
        Ok(CreatedPin {
            pin_id: pin.id.clone(),
            record: PinRecord::new(pin, public_base)?,
        })
    }
}

/// Update response data: `updated_at` in epoch milliseconds (SPEC.md 2.3).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UpdatedPin {
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub updated_at: i64,
    pub version: i64,
}

impl UpdatedPin {
    pub fn of(pin: &Pin) -> Self {
        UpdatedPin {
            id: pin.id.clone(),
            updated_at: pin.updated_at,
            version: pin.version,
        }
    }
}
