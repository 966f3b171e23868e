//! HTTP: one module per resource, merged here. Every API path is served under `/v1` and,
//! identically, without the prefix (CONTRACT.md 1).

mod api_keys;
mod blocks;
mod collaborators;
pub mod cors;
mod datasets;
pub mod docs;
pub(crate) mod events;
mod export;
mod health;
mod hooks;
mod invitations;
mod json;
mod openapi;
mod path;
mod pin_types;
mod pinboards;
mod pins;
mod playlists;
mod preview;
mod query;
mod roles;
mod share;
mod text_rule;
mod webhooks;

pub use json::{ApiJson, PatchBody};
pub use path::{
    ApiPath, BlockPath, BoardPath, CollaboratorPath, DatasetPath, HookPath, KeyPath, PinKeyPath,
    PinPath, PlacementPath, SharePath, WebhookPath,
};
pub use query::ApiQuery;

use std::marker::PhantomData;

use aide::axum::ApiRouter;
use axum::{
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Router,
};
use serde_json::value::RawValue;

use crate::{
    app::AppState,
    error::Error,
    wire::{Found, Outcome, Page, Precondition},
};

/// Every route of the service. The API routes are documented as they are declared; the
/// description of the `/v1` ones is served at `/v1/openapi.json`.
pub fn router(state: AppState) -> Router {
    openapi::prepare();
    let document = openapi::Document::default();
    let api = pins::routes()
        .merge(pin_types::routes())
        .merge(pinboards::routes())
        .merge(playlists::routes())
        .merge(datasets::routes())
        .merge(hooks::routes())
        .merge(webhooks::routes())
        .merge(blocks::routes())
        // Identity: API key management, roles, board collaborators and invitations.
        .merge(api_keys::routes())
        .merge(roles::routes())
        .merge(collaborators::routes())
        .merge(invitations::routes())
        .merge(events::routes())
        .merge(export::routes())
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::limits::enforce,
        ))
        .merge(openapi::routes(document.clone()));
    let public = health::routes()
        .merge(share::pages())
        // Inbound hooks' urls: the token is the credential, each hook has its own minute.
        .merge(hooks::urls());
    let documented = ApiRouter::new().nest("/v1", api.clone()).merge(public);
    Router::new()
        .merge(openapi::describe(documented, &document, state.limits()))
        .merge(Router::from(api))
        // The signed-in web: sign-in and the boards of a signed-in user (CONTRACT.md 13).
        .merge(crate::web::routes(state.clone()))
        // Agents: MCP at /mcp, behind the same credentials and limits as the API.
        .merge(
            crate::mcp::routes(state.clone())
                .route_layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    crate::limits::enforce,
                ))
                // Outermost: a browser page of another origin is refused before anything.
                .route_layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    crate::mcp::same_origin,
                )),
        )
        .fallback(|| async {
            Error::NotFound {
                what: "route",
                index: None,
            }
        })
        .method_not_allowed_fallback(|| async { Error::MethodNotAllowed })
        .with_state(state)
}

/// A success envelope `{"success": true, "data": ..., <extra>}`. `B` is the body's
/// documented shape ([`docs::One`], [`docs::Page`], [`docs::Found`]); the data is written
/// into the body once, where it is made (a large rendered page is not copied again).
pub struct Envelope<B> {
    /// `{"success":true,"data":<data>`, the rest added on the way out.
    body: Vec<u8>,
    extra: Option<(&'static str, Box<RawValue>)>,
    headers: Vec<(header::HeaderName, HeaderValue)>,
    shape: PhantomData<fn() -> B>,
}

const ENVELOPE_HEAD: &[u8] = br#"{"success":true,"data":"#;
const DRY_RUN_HEAD: &[u8] = br#"{"success":true,"dry_run":true,"data":"#;

impl<B> Envelope<B> {
    /// The envelope of `value`, serialised.
    pub fn of<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, Error> {
        let mut body = ENVELOPE_HEAD.to_vec();
        serde_json::to_writer(&mut body, value).map_err(Error::internal)?;
        Ok(Envelope {
            body,
            extra: None,
            headers: Vec::new(),
            shape: PhantomData,
        })
    }

    /// What a write with `?dry_run=true` would store (CONTRACT.md 14).
    pub fn dry_run<T: serde::Serialize + ?Sized>(data: &T) -> Result<Self, Error> {
        let mut body = DRY_RUN_HEAD.to_vec();
        serde_json::to_writer(&mut body, data).map_err(Error::internal)?;
        Ok(Envelope {
            body,
            extra: None,
            headers: Vec::new(),
            shape: PhantomData,
        })
    }

    /// A list's page: `data` and, beside it, `pagination`.
    pub fn page<T: serde::Serialize>(page: &Page<T>) -> Result<Self, Error> {
        Ok(Envelope::of(&page.data)?.with_field("pagination", raw(&page.pagination)?))
    }

    /// A batch read: `data` and, beside it, `missing`.
    pub fn found<T: serde::Serialize>(found: &Found<T>) -> Result<Self, Error> {
        Ok(Envelope::of(&found.data)?.with_field("missing", raw(&found.missing)?))
    }

    /// A create's answer, marked `Idempotent-Replayed: true` when it is a replay.
    pub fn created<T>(outcome: Outcome<T>) -> Result<Self, Error> {
        let envelope = Envelope::of(&outcome.data)?;
        Ok(if outcome.replayed {
            envelope.with_header(
                header::HeaderName::from_static("idempotent-replayed"),
                HeaderValue::from_static("true"),
            )
        } else {
            envelope
        })
    }

    /// Adds a top-level member next to `data` (`pagination`, `missing`).
    fn with_field(mut self, name: &'static str, json: Box<RawValue>) -> Self {
        self.extra = Some((name, json));
        self
    }

    pub fn with_header(mut self, name: header::HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// `ETag: "<version>"`.
    pub fn with_etag(self, version: i64) -> Self {
        match HeaderValue::from_str(&format!("\"{version}\"")) {
            Ok(v) => self.with_header(header::ETAG, v),
            Err(_) => self,
        }
    }
}

/// `If-Match`: `*`, or a list of `"<version>"` entity tags (weak ones compare too); any
/// other value (one that is not even text) is a 400.
pub(crate) fn precondition(headers: &axum::http::HeaderMap) -> Result<Precondition, Error> {
    match headers.get(header::IF_MATCH).map(|value| value.to_str()) {
        None => Precondition::parse(None),
        Some(Ok(text)) => Precondition::parse(Some(text)),
        // Bytes that are not visible ASCII name no entity tag: malformed, like any other.
        Some(Err(_)) => Err(Precondition::malformed()),
    }
}

/// `value` as JSON text.
fn raw<T: serde::Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, Error> {
    serde_json::value::to_raw_value(value).map_err(Error::internal)
}

impl<B> IntoResponse for Envelope<B> {
    fn into_response(self) -> Response {
        let mut body = self.body;
        if let Some((name, json)) = &self.extra {
            body.extend_from_slice(b",\"");
            body.extend_from_slice(name.as_bytes());
            body.extend_from_slice(b"\":");
            body.extend_from_slice(json.get().as_bytes());
        }
        body.push(b'}');
        let mut response = (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response();
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}
