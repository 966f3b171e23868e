//! Share settings of pins and boards (`/pins/{id}/share`, `/pinboards/{id}/share`):
//! `is_public`, `allow_edit`, `require_sign_in`, `allow_comments`, and `embed_origins`, the
//! sites whose pages may frame the item's `/embed/{id}` (stored beside the item:
//! `store/embeds.rs`). `is_public` is the same stored value as the record's, so the two
//! never disagree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    app::AppState,
    auth::Principal,
    clock,
    error::{Error, Result},
    pins::shareable_url,
    store::Sharing,
    wire::body::{non_empty, present},
};

/// `PUT .../share` body: only the supplied settings change (at least one).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = non_empty)]
pub struct ShareBody {
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub is_public: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub allow_edit: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub require_sign_in: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub allow_comments: Option<bool>,
    /// The origins (`https://host[:port]`, lower case, no path) whose pages may show the
    /// item's `/embed/{id}` in a frame; replaces the stored list (`[]`: none).
    #[serde(default, deserialize_with = "present")]
    #[schemars(
        with = "Vec<String>",
        length(max = MAX_EMBED_ORIGINS),
        inner(length(max = ORIGIN_CHARS), regex(pattern = ORIGIN_PATTERN))
    )]
    pub embed_origins: Option<Vec<String>>,
}

/// Most origins that may frame one item's embed page.
pub const MAX_EMBED_ORIGINS: usize = 20;
/// Longest origin, in characters.
pub const ORIGIN_CHARS: usize = 300;
/// An origin as a CSP `frame-ancestors` source names it: `http` or `https`, a host of
/// letters, digits, hyphens and dots (no wildcard, no IPv6 literal, which CSP can't name),
/// an optional port, nothing after. Exactly what [`is_origin`] accepts.
pub const ORIGIN_PATTERN: &str = "^https?://[a-z0-9-]+(\\.[a-z0-9-]+)*(:[0-9]{1,5})?$";

/// Whether `text` is an origin [`ORIGIN_PATTERN`] admits.
fn is_origin(text: &str) -> bool {
    let Some(rest) = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
    else {
        return false;
    };
    let (host, port) = match rest.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    let label = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    let port_ok =
        port.is_none_or(|p| (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()));
    text.chars().count() <= ORIGIN_CHARS && host.split('.').all(label) && port_ok
}

/// The checked origins: at most [`MAX_EMBED_ORIGINS`], each one [`is_origin`] admits (400 at
/// `embed_origins[i]` for the first that isn't).
fn checked_origins(origins: &[String]) -> Result<()> {
    if origins.len() > MAX_EMBED_ORIGINS {
        return Err(Error::validation(
            "embed_origins",
            format!("at most {MAX_EMBED_ORIGINS} origins"),
        ));
    }
    match origins.iter().position(|o| !is_origin(o)) {
        Some(i) => Err(Error::validation(
            format!("embed_origins[{i}]"),
            "an origin: http:// or https://, a lower-case host, an optional :port, no path",
        )),
        None => Ok(()),
    }
}

impl ShareBody {
    /// Refuses a body that changes nothing, and origins that are none.
    fn checked(self) -> Result<Self> {
        if self.is_public.is_none()
            && self.allow_edit.is_none()
            && self.require_sign_in.is_none()
            && self.allow_comments.is_none()
            && self.embed_origins.is_none()
        {
            return Err(Error::validation(
                "body",
                "at least one of is_public, allow_edit, require_sign_in, allow_comments and \
                 embed_origins",
            ));
        }
        if let Some(origins) = &self.embed_origins {
            checked_origins(origins)?;
        }
        Ok(self)
    }

    fn apply(&self, current: Sharing) -> Sharing {
        Sharing {
            is_public: self.is_public.unwrap_or(current.is_public),
            allow_edit: self.allow_edit.unwrap_or(current.allow_edit),
            require_sign_in: self.require_sign_in.unwrap_or(current.require_sign_in),
            allow_comments: self.allow_comments.unwrap_or(current.allow_comments),
        }
    }
}

/// What `GET` and `PUT .../share` return: the settings and the page they govern.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "ShareSettings", deny_unknown_fields)]
pub struct ShareRecord {
    #[serde(flatten)]
    sharing: Sharing,
    embed_origins: Vec<String>,
    shareable_url: String,
}

fn record(state: &AppState, id: &str, sharing: Sharing, embed_origins: Vec<String>) -> ShareRecord {
    ShareRecord {
        sharing,
        embed_origins,
        shareable_url: shareable_url(state.public_base(), id),
    }
}

/// The embed origins of item `id` of `who`'s workspace: the sent ones stored first (404
/// when the item is missing), so the item's write after them, with its event, comes last.
async fn embed_origins_of(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: &ShareBody,
    what: &'static str,
) -> Result<Vec<String>> {
    let ws = &who.workspace_id;
    match &body.embed_origins {
        Some(origins) => {
            if !state.store.set_embed_origins(ws, id, origins).await? {
                return Err(not_found(what));
            }
            Ok(origins.clone())
        }
        None => state.store.embed_origins(ws, id).await,
    }
}

/// For `/embed/{id}`: the origins that may frame item `id` when it is shared with anyone
/// (none otherwise).
pub async fn embed_origins_shown(state: &AppState, id: &str) -> Result<Vec<String>> {
    match state.store.shared_workspace(id).await? {
        Some(ws) => state.store.embed_origins(&ws, id).await,
        None => Ok(Vec::new()),
    }
}

fn not_found(what: &'static str) -> Error {
    Error::NotFound { what, index: None }
}

/// `GET /pins/{id}/share`.
pub async fn get_pin(state: &AppState, who: &Principal, id: &str) -> Result<ShareRecord> {
    let pins = state
        .store
        .get_pins(&who.workspace_id, &[id.to_owned()])
        .await?;
    let pin = pins.first().ok_or_else(|| not_found("pin"))?;
    let origins = state.store.embed_origins(&who.workspace_id, id).await?;
    Ok(record(state, id, pin.sharing(), origins))
}

/// `PUT /pins/{id}/share`: a write of the pin like any other (a new version, kept in its
/// history), since `is_public` is part of the pin record; `embed_origins` alone makes one
/// too, so every change of the settings is one `pin.updated` event.
pub async fn put_pin(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: ShareBody,
) -> Result<ShareRecord> {
    let body = body.checked()?;
    let origins = embed_origins_of(state, who, id, &body, "pin").await?;
    let now = clock::now_ms();
    let updated = state
        .store
        .update_pins(
            &who.workspace_id,
            &[id.to_owned()],
            state.limits().version_retention,
            &mut |_, mut pin| {
                pin.set_sharing(body.apply(pin.sharing()));
                pin.version += 1;
                pin.updated_at = now.max(pin.updated_at);
                Ok(pin)
            },
        )
        .await
        .map_err(|e| match e {
            Error::NotFound { what, .. } => not_found(what),
            other => other,
        })?;
    let pin = updated
        .first()
        .ok_or_else(|| Error::internal("share update returned no pin"))?;
    Ok(record(state, id, pin.sharing(), origins))
}

/// `GET /pinboards/{id}/share`.
pub async fn get_board(state: &AppState, who: &Principal, id: &str) -> Result<ShareRecord> {
    let board = state
        .store
        .get_pinboard(&who.workspace_id, id)
        .await?
        .ok_or_else(|| not_found("pinboard"))?;
    let origins = state.store.embed_origins(&who.workspace_id, id).await?;
    Ok(record(state, id, board.sharing, origins))
}

/// `PUT /pinboards/{id}/share`.
pub async fn put_board(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: ShareBody,
) -> Result<ShareRecord> {
    let body = body.checked()?;
    let origins = embed_origins_of(state, who, id, &body, "pinboard").await?;
    let now = clock::now_ms();
    let board = state
        .store
        .update_pinboard(&who.workspace_id, id, &mut |mut board| {
            board.sharing = body.apply(board.sharing);
            board.updated_at = board.next_updated_at(now);
            Ok(board)
        })
        .await?;
    Ok(record(state, id, board.sharing, origins))
}
