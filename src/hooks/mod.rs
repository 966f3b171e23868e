//! Inbound hooks (CONTRACT.md 14): a url, `<public_url>/in/<token>`, that writes one dataset
//! of the workspace for senders that can't set a header or shape a body (GitHub, Stripe,
//! form tools). This module parses the create body into a [`HookRow`], shapes the records
//! and holds the token and the caller a hook acts as ([`caller`]); `signature.rs` checks
//! signed calls; `ops.rs` has the operations.

pub mod ops;
mod signature;

use std::fmt;

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine};
use rand::RngCore;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub(crate) use signature::{new_standard_secret, StandardSigner};
pub use signature::{Scheme, SignatureBody, SignedHeaders};

use crate::{
    app::AppState,
    auth::{KeyHash, Principal, Reach, Scope, Scopes, Subject},
    clock,
    datasets::{DataWrite, NAME_PATTERN},
    error::{Error, Result},
    pins::{is_blank, NOT_BLANK},
    store::HookRow,
    wire::body::present,
};

/// `[hooks]` settings.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct HookSettings {
    /// Calls each hook takes per minute (429 beyond).
    pub per_minute: u32,
}

/// Longest hook name, in characters.
pub const NAME_CHARS: usize = 100;
/// Most items an `append` hook keeps, and what it keeps when not told.
pub const MAX_ITEMS: u32 = 10_000;
pub const DEFAULT_MAX_ITEMS: u32 = 1_000;

/// What a call does to the dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The dataset's data becomes the body.
    #[default]
    Replace,
    /// The body is a JSON Merge Patch (RFC 7396) of the data.
    Merge,
    /// The body (each element of an array body) goes last in the data's array.
    Append,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Replace => "replace",
            Mode::Merge => "merge",
            Mode::Append => "append",
        }
    }

    fn parse(text: &str) -> Result<Mode> {
        match text {
            "replace" => Ok(Mode::Replace),
            "merge" => Ok(Mode::Merge),
            "append" => Ok(Mode::Append),
            other => Err(Error::internal(format!("stored hook mode {other}"))),
        }
    }
}

/// `POST /hooks` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = serde_json::json!({"name": "GitHub pushes", "dataset": "github", "mode": "replace", "signature": {"scheme": "github", "secret": "a long random secret"}}))]
pub struct CreateHookBody {
    /// What the hook is for: 1 to 100 characters, not only spaces, tabs and line breaks.
    #[schemars(length(min = 1, max = NAME_CHARS), regex(pattern = NOT_BLANK))]
    pub name: String,
    /// The name of the dataset each call writes; the first call makes a json dataset of
    /// that name when the workspace has none.
    #[schemars(regex(pattern = NAME_PATTERN))]
    pub dataset: String,
    /// Default `replace`.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Mode")]
    pub mode: Option<Mode>,
    /// For `append`: the most items the dataset's array keeps, the oldest dropped first
    /// (default 1000). Read as a number so that `213.0`, an integer to JSON Schema, is one
    /// here too.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "u32", range(min = 1, max = MAX_ITEMS))]
    pub max_items: Option<f64>,
    /// How calls are signed; without it, the url alone admits a call.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "SignatureBody")]
    pub signature: Option<SignatureBody>,
}

/// A hook's token: the last segment of its url, 256 random bits. Shown once, at creation;
/// stored as a lookup handle and a hash, as API keys are. Never logged.
pub struct HookToken(String);

impl HookToken {
    /// Characters of a token: 32 bytes in URL-safe base64.
    pub const LEN: usize = 43;
    /// What a token is, for the path's schema.
    pub const PATTERN: &'static str = "^[A-Za-z0-9_-]{43}$";
    /// Characters of the indexed lookup handle (72 bits; the other 184 stay secret).
    const LOOKUP_LEN: usize = 12;
    /// Characters `GET /hooks` shows.
    const SHOWN_LEN: usize = 8;

    fn generate() -> Self {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        HookToken(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// Text that has the shape of a token; anything else can't be one.
    pub fn from_presented(text: &str) -> Option<Self> {
        let well_formed = text.len() == Self::LEN
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        well_formed.then(|| HookToken(text.to_owned()))
    }

    fn lookup(&self) -> &str {
        &self.0[..Self::LOOKUP_LEN]
    }

    fn hash(&self) -> KeyHash {
        KeyHash(hex::encode(Sha256::digest(self.0.as_bytes())))
    }

    /// A new token for a hook restored from an archive, which holds none (`corkboard
    /// import`): the token, and its lookup handle and hash to store.
    pub(crate) fn restored() -> (Self, String, String) {
        let token = Self::generate();
        let (lookup, hash) = (token.lookup().to_owned(), token.hash().0);
        (token, lookup, hash)
    }

    /// `<public_url>/in/<token>`: the hook's url.
    pub(crate) fn url(&self, public_base: &str) -> String {
        format!("{public_base}/in/{}", self.0)
    }
}

/// A new signature secret of `scheme` for a signed hook restored from an archive, which
/// holds none: 256 random bits, as a Standard Webhooks `whsec_` secret or, for GitHub's
/// scheme, URL-safe base64.
pub(crate) fn new_signature_secret(scheme: &str) -> String {
    if scheme == Scheme::Standard.as_str() {
        return signature::new_standard_secret();
    }
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

impl fmt::Debug for HookToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HookToken(REDACTED)")
    }
}

impl CreateHookBody {
    /// Checks everything and builds the hook of workspace `ws` to store, with its token.
    fn into_hook(self, ws: &str, now: i64) -> Result<(HookRow, HookToken)> {
        if is_blank(&self.name) || self.name.chars().count() > NAME_CHARS {
            return Err(Error::validation(
                "name",
                format!("1 to {NAME_CHARS} characters, not all blank"),
            ));
        }
        crate::datasets::check_name_at("dataset", &self.dataset)?;
        let max_items = match self.max_items {
            None => DEFAULT_MAX_ITEMS,
            Some(n) if n.fract() == 0.0 && (1.0..=f64::from(MAX_ITEMS)).contains(&n) => n as u32,
            Some(_) => {
                return Err(Error::validation(
                    "max_items",
                    format!("an integer from 1 to {MAX_ITEMS}"),
                ))
            }
        };
        let signature = self.signature.map(|s| s.checked()).transpose()?;
        let token = HookToken::generate();
        let row = HookRow {
            id: crate::ids::new_id("hk-"),
            workspace_id: ws.to_owned(),
            name: self.name.trim_matches([' ', '\t', '\n', '\r']).to_owned(),
            dataset: self.dataset,
            mode: self.mode.unwrap_or_default().as_str().to_owned(),
            max_items: i64::from(max_items),
            lookup: token.lookup().to_owned(),
            token_hash: token.hash().0,
            signature_scheme: signature.as_ref().map(|(s, _)| s.as_str().to_owned()),
            signature_secret: signature.map(|(_, secret)| secret),
            created_at: now,
        };
        Ok((row, token))
    }
}

/// How a hook's calls are signed, as its record shows it (never the secret).
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SignatureRecord {
    pub scheme: Scheme,
}

/// A hook as `GET /hooks` lists it: never its token, only the token's first characters.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Hook", deny_unknown_fields)]
pub struct HookRecord {
    pub id: String,
    pub name: String,
    /// The name of the dataset its calls write.
    pub dataset: String,
    pub mode: Mode,
    /// For `append`: the most items the dataset's array keeps.
    pub max_items: u32,
    /// `null` when calls are not signed.
    pub signature: Option<SignatureRecord>,
    /// The first 8 characters of the token that ends its url, to tell hooks apart.
    pub token_prefix: String,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
}

impl HookRecord {
    fn new(row: &HookRow) -> Result<Self> {
        let scheme = row
            .signature_scheme
            .as_deref()
            .map(Scheme::parse)
            .transpose()?;
        Ok(HookRecord {
            id: row.id.clone(),
            name: row.name.clone(),
            dataset: row.dataset.clone(),
            mode: Mode::parse(&row.mode)?,
            max_items: u32::try_from(row.max_items).map_err(Error::internal)?,
            signature: scheme.map(|scheme| SignatureRecord { scheme }),
            token_prefix: row
                .lookup
                .get(..HookToken::SHOWN_LEN)
                .unwrap_or_default()
                .to_owned(),
            created_at: clock::iso(row.created_at),
        })
    }
}

/// The answer to a create: the record and, this once, the hook's url.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "CreatedHook", deny_unknown_fields)]
pub struct CreatedHook {
    #[serde(flatten)]
    pub record: HookRecord,
    /// `<public_url>/in/<token>`: where the sender posts. Shown only here.
    #[schemars(extend("format" = "uri"))]
    pub url: String,
}

/// The answer to an accepted call: the dataset written and its new version.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Delivered {
    pub dataset_id: String,
    pub version: i64,
}

/// The caller a hook acts as when a call comes: its workspace, with `datasets:write` alone
/// (what it does), counted as itself. A hook's token is a credential of its own, narrower
/// than any key: it belongs to the workspace, not to whoever made it, and it is this
/// principal, not its maker's, that the dataset write is authorised for.
fn caller(state: &AppState, hook: &HookRow) -> Principal {
    Principal {
        workspace_id: hook.workspace_id.clone(),
        subject: Subject::Key(hook.id.clone()),
        scopes: Scopes::of(&[Scope::DatasetsWrite]),
        tier: state.settings.default_tier,
        reach: Reach::Workspace,
    }
}

/// What a call with `body` does to the dataset of `hook`.
fn data_write(hook: &HookRow, body: serde_json::Value) -> Result<DataWrite> {
    Ok(match Mode::parse(&hook.mode)? {
        Mode::Replace => DataWrite::Replace(body),
        Mode::Merge => DataWrite::Merge(body),
        Mode::Append => DataWrite::Append {
            items: match body {
                serde_json::Value::Array(items) => items,
                item => vec![item],
            },
            max_items: usize::try_from(hook.max_items).map_err(Error::internal)?,
        },
    })
}
