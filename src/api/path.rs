//! [`ApiPath`]: path parameters whose rejection (e.g. `%FF`, not UTF-8) is the error envelope,
//! not axum's plain-text answer.

use axum::{
    extract::{FromRequestParts, Path},
    http::request::Parts,
};
use schemars::JsonSchema;
use serde::{de::DeserializeOwned, Deserialize};

use crate::error::Error;

pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        if parts.uri.path().contains("%00") {
            return Err(Error::validation("path", super::json::NO_NUL));
        }
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| ApiPath(value))
            .map_err(|e| Error::validation("path", format!("a valid path ({})", e.body_text())))
    }
}

/// `{id}` of the `/pins/{id}` routes.
#[derive(Deserialize, JsonSchema)]
pub struct PinPath {
    /// A pin id (`p-...`).
    pub id: String,
}

/// `{key}` of the `/pins/by-key/{key}` routes.
#[derive(Deserialize, JsonSchema)]
pub struct PinKeyPath {
    /// A pin's key (CONTRACT.md 14).
    #[schemars(regex(pattern = crate::pins::KEY_PATTERN))]
    pub key: String,
}

/// `{id}` of the `/pinboards/{id}` routes.
#[derive(Deserialize, JsonSchema)]
pub struct BoardPath {
    /// A pinboard id (`pb-...`).
    pub id: String,
}

/// `{id}` and `{pin_id}` of `/pinboards/{id}/pins/{pin_id}`.
#[derive(Deserialize, JsonSchema)]
pub struct PlacementPath {
    /// A pinboard id (`pb-...`).
    pub id: String,
    /// The id of a pin placed on it (`p-...`).
    pub pin_id: String,
}

/// `{id}` of a share page: a pin or pinboard id.
#[derive(Deserialize, JsonSchema)]
pub struct SharePath {
    /// A pin (`p-...`) or pinboard (`pb-...`) id.
    pub id: String,
}

/// `{id}` of `/api-keys/{id}`.
#[derive(Deserialize, JsonSchema)]
pub struct KeyPath {
    /// An API key id (as listed by `GET /v1/api-keys`).
    pub id: String,
}

/// `{id}` and `{user_id}` of `/pinboards/{id}/collaborators/{user_id}`.
#[derive(Deserialize, JsonSchema)]
pub struct CollaboratorPath {
    /// A pinboard id (`pb-...`).
    pub id: String,
    /// The collaborator's user id.
    pub user_id: String,
}

/// `{id}` of the `/datasets/{id}` routes.
#[derive(Deserialize, JsonSchema)]
pub struct DatasetPath {
    /// A dataset id (`ds-...`).
    pub id: String,
}

/// `{id}` and `{block_id}` of `/pins/{id}/blocks/{block_id}`.
#[derive(Deserialize, JsonSchema)]
pub struct BlockPath {
    /// A pin id (`p-...`).
    pub id: String,
    /// One of its blocks (`blk-...`).
    pub block_id: String,
}

/// `{id}` of `/hooks/{id}`.
#[derive(Deserialize, JsonSchema)]
pub struct HookPath {
    /// An inbound hook's id (`hk-...`).
    pub id: String,
}

/// `{id}` of the `/webhooks/{id}` routes.
#[derive(Deserialize, JsonSchema)]
pub struct WebhookPath {
    /// An outbound webhook's id (`wh-...`).
    pub id: String,
}
