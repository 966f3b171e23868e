//! `/pins` routes: thin handlers that authenticate (scope in the signature), parse, call
//! [`crate::pins::ops`] and wrap the result in the envelope.

use axum::{
    extract::{rejection::QueryRejection, Query, State},
    http::{header, HeaderMap, HeaderValue},
    routing::{get, post},
    Router,
};

use super::{ApiJson, ApiPath, Envelope};
use crate::{
    app::AppState,
    auth::{Auth, PinsRead, PinsWrite},
    error::{Error, Result},
    pins::{
        ops::{
            self, BatchCreateBody, BatchDeleteBody, BatchGetBody, BatchUpdateBody, IdempotencyKey,
            ListParams, Outcome, Precondition,
        },
        CreateBody, UpdateBody,
    },
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/pins", get(list).post(create))
        .route("/pins/batch", post(create_batch))
        .route("/pins/batch/get", post(get_batch))
        .route("/pins/batch/update", post(update_batch))
        .route("/pins/batch/delete", post(delete_batch))
        .route(
            "/pins/{id}",
            get(read).put(update).patch(update).delete(delete),
        )
        .route("/pins/{id}/versions", get(versions))
}

/// Query values arrive as strings; `ops` validates each one and names it on error.
fn query(raw: std::result::Result<Query<ListParams>, QueryRejection>) -> Result<ListParams> {
    raw.map(|Query(q)| q).map_err(|e| {
        Error::validation(
            "query",
            format!("a well-formed query string ({})", e.body_text()),
        )
    })
}

fn idempotency_key(
    headers: &HeaderMap,
    operation: &str,
    body: &[u8],
) -> Result<Option<IdempotencyKey>> {
    headers
        .get("idempotency-key")
        .map(|v| {
            let key = v
                .to_str()
                .map_err(|_| Error::validation("Idempotency-Key", "visible ASCII characters"))?;
            IdempotencyKey::new(key, operation, body)
        })
        .transpose()
}

/// `If-Match`: `*`, or a list of `"<version>"` entity tags (weak ones compare too). A value
/// that names no version can never match.
fn precondition(headers: &HeaderMap) -> Precondition {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Precondition(None);
    };
    let text = value.to_str().unwrap_or("");
    if text.trim() == "*" {
        return Precondition(None);
    }
    let versions = text
        .split(',')
        .filter_map(|tag| {
            let tag = tag.trim();
            let tag = tag.strip_prefix("W/").unwrap_or(tag);
            tag.strip_prefix('"')?.strip_suffix('"')?.parse().ok()
        })
        .collect();
    Precondition(Some(versions))
}

fn created(outcome: Outcome) -> Envelope {
    let envelope = Envelope::new(outcome.data);
    if outcome.replayed {
        envelope.with_header(
            header::HeaderName::from_static("idempotent-replayed"),
            HeaderValue::from_static("true"),
        )
    } else {
        envelope
    }
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    params: std::result::Result<Query<ListParams>, QueryRejection>,
) -> Result<Envelope> {
    let (data, pagination) = ops::list(&state, &auth.principal, &query(params)?).await?;
    Ok(Envelope::paginated(data, &pagination))
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    headers: HeaderMap,
    ApiJson(body, raw): ApiJson<CreateBody>,
) -> Result<Envelope> {
    let idem = idempotency_key(&headers, "create", &raw)?;
    Ok(created(
        ops::create(&state, &auth.principal, body, idem).await?,
    ))
}

async fn create_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    headers: HeaderMap,
    ApiJson(body, raw): ApiJson<BatchCreateBody>,
) -> Result<Envelope> {
    let idem = idempotency_key(&headers, "create_batch", &raw)?;
    Ok(created(
        ops::create_batch(&state, &auth.principal, body, idem).await?,
    ))
}

async fn read(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(id): ApiPath<String>,
) -> Result<Envelope> {
    let (data, version) = ops::get(&state, &auth.principal, &id).await?;
    Ok(Envelope::new(data).with_etag(version))
}

async fn get_batch(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiJson(body, _): ApiJson<BatchGetBody>,
) -> Result<Envelope> {
    let (found, missing) = ops::get_batch(&state, &auth.principal, body).await?;
    Ok(Envelope::new(found).with_field("missing", missing.get().to_owned()))
}

async fn update(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
    ApiJson(body, _): ApiJson<UpdateBody>,
) -> Result<Envelope> {
    let updated = ops::update(&state, &auth.principal, &id, body, precondition(&headers)).await?;
    let version = updated.version;
    let data =
        serde_json::value::to_raw_value(&updated).map_err(|e| Error::Internal(e.to_string()))?;
    Ok(Envelope::new(data).with_etag(version))
}

async fn update_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiJson(body, _): ApiJson<BatchUpdateBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::update_batch(&state, &auth.principal, body).await?,
    ))
}

async fn delete(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::delete(&state, &auth.principal, &id, precondition(&headers)).await?,
    ))
}

async fn delete_batch(
    State(state): State<AppState>,
    auth: Auth<PinsWrite>,
    ApiJson(body, _): ApiJson<BatchDeleteBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::delete_batch(&state, &auth.principal, body).await?,
    ))
}

async fn versions(
    State(state): State<AppState>,
    auth: Auth<PinsRead>,
    ApiPath(id): ApiPath<String>,
    params: std::result::Result<Query<ListParams>, QueryRejection>,
) -> Result<Envelope> {
    let (data, pagination) = ops::versions(&state, &auth.principal, &id, &query(params)?).await?;
    Ok(Envelope::paginated(data, &pagination))
}
