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
    let limiter = if state.limiter_healthy() {
        "ok"
    } else {
        "degraded"
    };
    Ok(Json(json!({
        "success": true,
        "data": { "status": "ready", "store": state.store.backend_name(), "rate_limiter": limiter }
    })))
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    let store_up = state.store.ping().await.is_ok();
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(state.store.backend_name(), store_up),
    )
}
