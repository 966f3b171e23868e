//! `/pinboards` routes: boards (`pinboards:read` / `pinboards:write`) and placements
//! (`pinboards:write`). Share settings live in `share.rs`. Routes on one board take
//! [`BoardAuth`], so a collaborator of that board may use them.

use axum::{
    extract::{rejection::QueryRejection, Query, State},
    routing::{get, put},
    Router,
};

use super::{ApiJson, ApiPath, Envelope};
use crate::{
    app::AppState,
    auth::{Auth, BoardAuth, PinboardsRead, PinboardsWrite},
    error::{Error, Result},
    pinboards::{
        ops::{self, BoardListParams, MoveBody, PlaceBody},
        CreateBoardBody, UpdateBoardBody,
    },
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/pinboards", get(list).post(create))
        .route(
            "/pinboards/{id}",
            get(read).put(update).patch(update).delete(delete),
        )
        .route("/pinboards/{id}/pins", axum::routing::post(place))
        .route(
            "/pinboards/{id}/pins/{pin_id}",
            put(move_pin).delete(unplace),
        )
        .merge(super::share::routes())
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinboardsRead>,
    params: std::result::Result<Query<BoardListParams>, QueryRejection>,
) -> Result<Envelope> {
    let params = params.map(|Query(q)| q).map_err(|e| {
        Error::validation(
            "query",
            format!("a well-formed query string ({})", e.body_text()),
        )
    })?;
    let (data, pagination) = ops::list(&state, &auth.principal, &params).await?;
    Ok(Envelope::paginated(data, &pagination))
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinboardsWrite>,
    ApiJson(body, _): ApiJson<CreateBoardBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::create(&state, &auth.principal, body).await?,
    ))
}

async fn read(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsRead>,
    ApiPath(id): ApiPath<String>,
) -> Result<Envelope> {
    Ok(Envelope::new(ops::get(&state, &auth.principal, &id).await?))
}

async fn update(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body, _): ApiJson<UpdateBoardBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::update(&state, &auth.principal, &id, body).await?,
    ))
}

async fn delete(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath(id): ApiPath<String>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::delete(&state, &auth.principal, &id).await?,
    ))
}

async fn place(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath(id): ApiPath<String>,
    ApiJson(body, _): ApiJson<PlaceBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::place(&state, &auth.principal, &id, body).await?,
    ))
}

async fn move_pin(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath((id, pin_id)): ApiPath<(String, String)>,
    ApiJson(body, _): ApiJson<MoveBody>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::move_pin(&state, &auth.principal, &id, &pin_id, body).await?,
    ))
}

async fn unplace(
    State(state): State<AppState>,
    auth: BoardAuth<PinboardsWrite>,
    ApiPath((id, pin_id)): ApiPath<(String, String)>,
) -> Result<Envelope> {
    Ok(Envelope::new(
        ops::unplace(&state, &auth.principal, &id, &pin_id).await?,
    ))
}
