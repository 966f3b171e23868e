//! HTTP: one module per resource, merged here. Every API path is served under `/v1` and,
//! identically, without the prefix (CONTRACT.md 1).

mod api_keys;
mod blocks;
mod collaborators;
mod datasets;
pub mod docs;
pub(crate) mod events;
mod health;
mod json;
mod openapi;
mod path;
mod pin_types;
mod pinboards;
mod pins;
mod query;
mod roles;
mod share;

pub use json::ApiJson;
pub use path::{
    ApiPath, BlockPath, BoardPath, CollaboratorPath, DatasetPath, KeyPath, PinPath, PlacementPath,
    SharePath,
};
pub(crate) use pin_types::catalogue as pin_types_catalogue;
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
    pins::ops::{to_data, Pagination},
};

/// Every route of the service. The API routes are documented as they are declared; the
/// description of the `/v1` ones is served at `/v1/openapi.json`.
pub fn router(state: AppState) -> Router {
    openapi::prepare();
    let document = openapi::Document::default();
    let api = pins::routes()
        .merge(pin_types::routes())
        .merge(pinboards::routes())
        .merge(datasets::routes())
        .merge(blocks::routes())
        // Identity: API key management, roles and board collaborators.
        .merge(api_keys::routes())
        .merge(roles::routes())
        .merge(collaborators::routes())
        .merge(events::routes())
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::limits::enforce,
        ))
        .merge(openapi::routes(document.clone()));
    let public = health::routes().merge(share::pages());
    let documented = ApiRouter::new().nest("/v1", api.clone()).merge(public);
    Router::new()
        .merge(openapi::describe(documented, &document, state.limits()))
        .merge(Router::from(api))
        // The signed-in web: sign-in and the boards of a signed-in user (CONTRACT.md 13).
        .merge(crate::web::routes(state.clone()))
        // Agents: MCP at /mcp, behind the same credentials and limits as the API.
        .merge(
            crate::mcp::routes(state.clone()).route_layer(axum::middleware::from_fn_with_state(
                state.clone(),
                crate::limits::enforce,
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

/// A success envelope `{"success": true, "data": ..., <extra>}` around serialised data.
/// `B` is the body's documented shape ([`docs::One`], [`docs::Page`], [`docs::Found`]):
/// the data is built as JSON text (some of it by the store), the type says what it is.
pub struct Envelope<B> {
    data: Box<RawValue>,
    extra: Option<(&'static str, String)>,
    headers: Vec<(header::HeaderName, HeaderValue)>,
    shape: PhantomData<fn() -> B>,
}

impl<B> Envelope<B> {
    pub fn new(data: Box<RawValue>) -> Self {
        Envelope {
            data,
            extra: None,
            headers: Vec::new(),
            shape: PhantomData,
        }
    }

    /// The envelope of `value`, serialised (what a handler returns when it has the record
    /// itself rather than data an operation built).
    pub fn of<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, crate::Error> {
        Ok(Envelope::new(to_data(value)?))
    }

    pub fn paginated(data: Box<RawValue>, pagination: &Pagination) -> Self {
        let text = serde_json::to_string(pagination).unwrap_or_else(|_| "null".into());
        Envelope::new(data).with_field("pagination", text)
    }

    /// Adds a top-level member next to `data` (`pagination`, `missing`).
    pub fn with_field(mut self, name: &'static str, json: String) -> Self {
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

impl<B> IntoResponse for Envelope<B> {
    fn into_response(self) -> Response {
        let data = self.data.get();
        let mut body = String::with_capacity(data.len() + 64);
        body.push_str(r#"{"success":true,"data":"#);
        body.push_str(data);
        if let Some((name, json)) = &self.extra {
            body.push_str(",\"");
            body.push_str(name);
            body.push_str("\":");
            body.push_str(json);
        }
        body.push('}');
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
