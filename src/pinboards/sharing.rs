//! Share settings of pins and boards (`/pins/{id}/share`, `/pinboards/{id}/share`):
//! `is_public`, `allow_edit`, `require_sign_in`, `allow_comments`. `is_public` is the same
//! stored value as the record's, so the two never disagree.

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
}

impl ShareBody {
    /// Refuses a body that changes nothing.
    fn checked(self) -> Result<Self> {
        if self.is_public.is_none()
            && self.allow_edit.is_none()
            && self.require_sign_in.is_none()
            && self.allow_comments.is_none()
        {
            return Err(Error::validation(
                "body",
                "at least one of is_public, allow_edit, require_sign_in and allow_comments",
            ));
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

/// What `GET` and `PUT .../share` return: the four settings and the page they govern.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "ShareSettings", deny_unknown_fields)]
pub struct ShareRecord {
    #[serde(flatten)]
    sharing: Sharing,
    shareable_url: String,
}

fn record(state: &AppState, id: &str, sharing: Sharing) -> ShareRecord {
    ShareRecord {
        sharing,
        shareable_url: shareable_url(state.public_base(), id),
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
    Ok(record(state, id, pin.sharing()))
}

/// `PUT /pins/{id}/share`: a write of the pin like any other (a new version, kept in its
/// history), since `is_public` is part of the pin record.
pub async fn put_pin(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: ShareBody,
) -> Result<ShareRecord> {
    let body = body.checked()?;
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
    Ok(record(state, id, pin.sharing()))
}

/// `GET /pinboards/{id}/share`.
pub async fn get_board(state: &AppState, who: &Principal, id: &str) -> Result<ShareRecord> {
    let board = state
        .store
        .get_pinboard(&who.workspace_id, id)
        .await?
        .ok_or_else(|| not_found("pinboard"))?;
    Ok(record(state, id, board.sharing))
}

/// `PUT /pinboards/{id}/share`.
pub async fn put_board(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: ShareBody,
) -> Result<ShareRecord> {
    let body = body.checked()?;
    let now = clock::now_ms();
    let board = state
        .store
        .update_pinboard(&who.workspace_id, id, &mut |mut board| {
            board.sharing = body.apply(board.sharing);
            board.updated_at = board.next_updated_at(now);
            Ok(board)
        })
        .await?;
    Ok(record(state, id, board.sharing))
}
