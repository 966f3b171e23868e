//! `/playlists` routes (CONTRACT.md 17): reads need `pinboards:read`, writes
//! `pinboards:write`. Thin handlers over [`crate::playlists::ops`].

use aide::{
    axum::{routing::get_with, ApiRouter},
    transform::TransformOperation,
};
use axum::extract::State;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    docs::{One, Page},
    ApiJson, ApiPath, ApiQuery, Envelope,
};
use crate::{
    app::AppState,
    auth::{Auth, PinboardsRead, PinboardsWrite},
    error::Result,
    playlists::{ops, CreatePlaylistBody, PlaylistRecord, UpdatePlaylistBody},
    wire::{Deleted, PageParams},
};

fn doc<'a>(op: TransformOperation<'a>, summary: &str) -> TransformOperation<'a> {
    op.summary(summary).tag("playlists")
}

const ITEMS_RULE: &str = "Every `items[i].pinboard_id` must name a pinboard of the caller's \
workspace: otherwise a 400 `VALIDATION_FAILED` at that path (another workspace's board looks \
the same as a missing one).";

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/playlists",
            get_with(list, |op| {
                doc(op, "List playlists, newest first").id("listPlaylists")
            })
            .post_with(create, |op| {
                doc(
                    op,
                    "Create a playlist: boards shown in turn, each for its seconds",
                )
                .description(ITEMS_RULE)
                .id("createPlaylist")
            }),
        )
        .api_route(
            "/playlists/{id}",
            get_with(read, |op| doc(op, "Read a playlist").id("getPlaylist"))
                .put_with(update, |op| {
                    doc(
                        op,
                        "Update a playlist (the parts sent replace the stored ones)",
                    )
                    .description(ITEMS_RULE)
                    .id("putPlaylist")
                })
                .delete_with(delete, |op| {
                    doc(op, "Delete a playlist (its boards stay)").id("deletePlaylist")
                }),
        )
}

/// `{id}` of the `/playlists/{id}` routes.
#[derive(Deserialize, JsonSchema)]
struct PlaylistPath {
    /// A playlist id (`pl-...`).
    id: String,
}

async fn list(
    State(state): State<AppState>,
    auth: Auth<PinboardsRead>,
    ApiQuery(params): ApiQuery<PageParams>,
) -> Result<Envelope<Page<PlaylistRecord>>> {
    Envelope::page(&ops::list(&state, &auth.principal, &params).await?)
}

async fn create(
    State(state): State<AppState>,
    auth: Auth<PinboardsWrite>,
    ApiJson(body, _): ApiJson<CreatePlaylistBody>,
) -> Result<Envelope<One<PlaylistRecord>>> {
    Envelope::of(&ops::create(&state, &auth.principal, body).await?)
}

async fn read(
    State(state): State<AppState>,
    auth: Auth<PinboardsRead>,
    ApiPath(PlaylistPath { id }): ApiPath<PlaylistPath>,
) -> Result<Envelope<One<PlaylistRecord>>> {
    Envelope::of(&ops::get(&state, &auth.principal, &id).await?)
}

async fn update(
    State(state): State<AppState>,
    auth: Auth<PinboardsWrite>,
    ApiPath(PlaylistPath { id }): ApiPath<PlaylistPath>,
    ApiJson(body, _): ApiJson<UpdatePlaylistBody>,
) -> Result<Envelope<One<PlaylistRecord>>> {
    Envelope::of(&ops::update(&state, &auth.principal, &id, body).await?)
}

async fn delete(
    State(state): State<AppState>,
    auth: Auth<PinboardsWrite>,
    ApiPath(PlaylistPath { id }): ApiPath<PlaylistPath>,
) -> Result<Envelope<One<Deleted>>> {
    Envelope::of(&ops::delete(&state, &auth.principal, &id).await?)
}
