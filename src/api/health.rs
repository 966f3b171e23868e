//! Operations endpoints, outside `/v1` and without a credential: liveness, readiness (the
//! store answers, the process isn't draining) and Prometheus metrics.

use aide::{
    axum::{routing::get_with, ApiRouter},
    generate::GenContext,
    openapi::{MediaType, Operation, Response as AideResponse},
    transform::TransformOperation,
    OperationOutput,
};
use axum::{
    extract::State,
    http::header,
    response::{IntoResponse, Response},
};
use schemars::JsonSchema;
use serde::Serialize;

use super::{
    docs::{self, One},
    Envelope,
};
use crate::{app::AppState, error::Error};

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("operations")
}

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/healthz",
            get_with(healthz, |op| {
                doc(op, "Liveness: the process answers").id("getHealth")
            }),
        )
        .api_route(
            "/readyz",
            get_with(readyz, |op| {
                doc(
                    op,
                    "Readiness: the store answers and the process isn't draining",
                )
                .id("getReadiness")
            }),
        )
        .api_route(
            "/metrics",
            get_with(metrics, |op| doc(op, "Prometheus metrics").id("getMetrics")),
        )
}

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Health {
    #[schemars(extend("const" = "ok"))]
    status: &'static str,
}

#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Readiness {
    #[schemars(extend("const" = "ready"))]
    status: &'static str,
    /// `sqlite` or `postgres`.
    store: &'static str,
    /// `ok`, or `degraded` while the rate limiter's store fails.
    #[schemars(extend("enum" = ["ok", "degraded"]))]
    rate_limiter: &'static str,
}

async fn healthz() -> Result<Envelope<One<Health>>, crate::Error> {
    Envelope::of(&Health { status: "ok" })
}

/// The longest `/readyz` waits for the store.
const READY_WITHIN: std::time::Duration = std::time::Duration::from_millis(900);

async fn readyz(State(state): State<AppState>) -> OrUnavailable<Envelope<One<Readiness>>> {
    OrUnavailable(ready(&state).await)
}

async fn ready(state: &AppState) -> Result<Envelope<One<Readiness>>, Error> {
    if !state.is_ready() {
        return Err(Error::Unavailable);
    }
    // A load balancer needs its answer quickly: a store that can't say it is up within
    // READY_WITHIN is as good as down (an outage opens the store's breaker well before).
    match tokio::time::timeout(READY_WITHIN, state.store.ping()).await {
        Ok(Ok(())) => {}
        _ => return Err(Error::Unavailable),
    }
    let rate_limiter = if state.limiter_healthy() {
        "ok"
    } else {
        "degraded"
    };
    Envelope::of(&Readiness {
        status: "ready",
        store: state.store.backend_name(),
        rate_limiter,
    })
}

/// A readiness answer: the success, or 503 `SERVICE_UNAVAILABLE`.
struct OrUnavailable<T>(Result<T, Error>);

impl<T: IntoResponse> IntoResponse for OrUnavailable<T> {
    fn into_response(self) -> Response {
        match self.0 {
            Ok(ok) => ok.into_response(),
            Err(e) => e.into_response(),
        }
    }
}

impl<T: OperationOutput> OperationOutput for OrUnavailable<T> {
    type Inner = T;

    fn inferred_responses(
        ctx: &mut GenContext,
        operation: &mut Operation,
    ) -> Vec<(Option<u16>, AideResponse)> {
        let mut responses = T::inferred_responses(ctx, operation);
        responses.push((Some(503), docs::error_response(ctx, docs::UNAVAILABLE)));
        responses
    }
}

async fn metrics(State(state): State<AppState>) -> Metrics {
    let store_up = state.store.ping().await.is_ok();
    let pools = state.store.pools();
    Metrics(
        state
            .metrics
            .render(state.store.backend_name(), store_up, &pools),
    )
}

/// The Prometheus text exposition.
struct Metrics(String);

impl IntoResponse for Metrics {
    fn into_response(self) -> Response {
        (
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            self.0,
        )
            .into_response()
    }
}

impl OperationOutput for Metrics {
    type Inner = String;

    fn inferred_responses(
        _: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<u16>, AideResponse)> {
        let text = AideResponse {
            description: "Prometheus text format 0.0.4".to_owned(),
            content: [("text/plain".to_owned(), MediaType::default())]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        vec![(Some(200), text)]
    }
}
