//! Unauthenticated operational endpoints: liveness, readiness, Prometheus metrics.

use axum::{
    extract::State,
    http::{header, StatusCode},
    response::IntoResponse,
    routing::get,
    Json, Router,
};
use serde_json::json;

use crate::{app::AppState, error::Error};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
}

async fn healthz() -> impl IntoResponse {
    Json(json!({ "success": true, "data": { "status": "ok" } }))
}

/// Ready while not shutting down and the store answers.
async fn readyz(State(state): State<AppState>) -> Result<impl IntoResponse, Error> {
    if !state.is_ready() {
        return Err(Error::Unavailable);
    }
    state.store.ping().await.map_err(|_| Error::Unavailable)?;
    Ok(Json(
        json!({ "success": true, "data": { "status": "ready", "store": state.store.backend_name() } }),
    ))
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let up = u8::from(state.store.ping().await.is_ok());
    let body = format!(
        "# HELP corkboard_up Whether the service is running.\n# TYPE corkboard_up gauge\ncorkboard_up 1\n\
         # HELP corkboard_store_up Whether the store answered a ping.\n# TYPE corkboard_store_up gauge\ncorkboard_store_up{{backend=\"{}\"}} {up}\n",
        state.store.backend_name()
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        body,
    )
}
