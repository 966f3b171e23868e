//! The playlist operations: create, list, read, update and delete for a caller of the API
//! (`pinboards:write` to change, `pinboards:read` to read, stated by their routes), and
//! what the pages play: a signed-in reader's playlist ([`to_play`]) and a playlist every
//! board of which is shared with anyone ([`shared`]).

use super::{CreatePlaylistBody, PlaylistRecord, UpdatePlaylistBody};
use crate::{
    app::AppState,
    auth::{authorize, Access, Principal, Scope},
    clock,
    error::{Error, Result},
    store::{Playlist, PlaylistQuery},
    wire::{Deleted, Page, PageParams},
};

fn playlist_missing() -> Error {
    Error::NotFound {
        what: "playlist",
        index: None,
    }
}

/// `POST /playlists`: every item must name a board of the caller's workspace (400 at
/// `items[i].pinboard_id` otherwise, the same for another workspace's board as for none).
pub async fn create(
    state: &AppState,
    who: &Principal,
    body: CreatePlaylistBody,
) -> Result<PlaylistRecord> {
    let playlist = body.into_playlist(state.limits(), clock::now_ms())?;
    state
        .store
        .insert_playlist(&who.workspace_id, &playlist)
        .await?;
    Ok(PlaylistRecord::new(&playlist, state.public_base()))
}

/// `GET /playlists/{id}`.
pub async fn get(state: &AppState, who: &Principal, id: &str) -> Result<PlaylistRecord> {
    let playlist = state
        .store
        .get_playlist(&who.workspace_id, id)
        .await?
        .ok_or_else(playlist_missing)?;
    Ok(PlaylistRecord::new(&playlist, state.public_base()))
}

/// `GET /playlists`: newest first, keyset-paginated like `GET /pinboards`.
pub async fn list(
    state: &AppState,
    who: &Principal,
    params: &PageParams,
) -> Result<Page<PlaylistRecord>> {
    let (limit, before_seq) = params.window()?;
    let query = PlaylistQuery {
        limit: limit + 1,
        before_seq,
    };
    let rows = state
        .store
        .list_playlists(&who.workspace_id, &query)
        .await?;
    let base = state.public_base();
    Ok(Page::of(rows, limit, |(seq, _)| *seq).map(|(_, p)| PlaylistRecord::new(&p, base)))
}

/// `PUT /playlists/{id}`: the parts sent replace the stored ones.
pub async fn update(
    state: &AppState,
    who: &Principal,
    id: &str,
    body: UpdatePlaylistBody,
) -> Result<PlaylistRecord> {
    let change = body.into_change(state.limits(), clock::now_ms())?;
    let playlist = state
        .store
        .update_playlist(&who.workspace_id, id, &change)
        .await?
        .ok_or_else(playlist_missing)?;
    Ok(PlaylistRecord::new(&playlist, state.public_base()))
}

/// `DELETE /playlists/{id}`: its boards stay.
pub async fn delete(state: &AppState, who: &Principal, id: &str) -> Result<Deleted> {
    if state.store.delete_playlist(&who.workspace_id, id).await? {
        Ok(Deleted::new(id))
    } else {
        Err(playlist_missing())
    }
}

/// For `/play/{id}`: the playlist of `who`'s workspace when they may read boards there
/// (`pinboards:read`), else `None` (the page is the 404 page, whatever the reason). Each
/// board is then shown only as the board view lets them read it.
pub async fn to_play(state: &AppState, who: Principal, id: &str) -> Result<Option<Playlist>> {
    let me = match authorize(state, who, Access::workspace(Scope::PinboardsRead), None).await {
        Ok(me) => me,
        Err(Error::ScopeRequired(_) | Error::Forbidden(_)) => return Ok(None),
        Err(other) => return Err(other),
    };
    state.store.get_playlist(&me.workspace_id, id).await
}

/// For `/share/playlist/{id}`: the playlist when it has boards and every one of them is
/// shared with anyone (public, not only after sign-in), else `None`.
pub async fn shared(state: &AppState, id: &str) -> Result<Option<Playlist>> {
    Ok(state
        .store
        .shared_playlist(id)
        .await?
        .filter(|playlist| !playlist.items.is_empty()))
}
