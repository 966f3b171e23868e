//! Playlists in the store (CONTRACT.md 17): the stored shapes and [`PlaylistStore`], written
//! once for both databases. A playlist's items are rows of `playlist_items` in order; each
//! names a board of the playlist's workspace (checked, and kept from going away, in the
//! write's transaction), and deleting the board drops its items (`ON DELETE CASCADE`).

use super::sql::Begin as _;

use super::sql::{Backend, Record};
use crate::error::{Error, Result};

/// A stored playlist with its items in order.
#[derive(Debug, Clone)]
pub struct Playlist {
    pub id: String,
    pub name: String,
    pub items: Vec<PlaylistItem>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One board of a playlist and how long it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlaylistItem {
    pub pinboard_id: String,
    pub seconds: i64,
}

/// Position of one page of `GET /playlists`, newest first.
#[derive(Debug, Clone, Default)]
pub struct PlaylistQuery {
    /// Rows to fetch (one more than shown, to learn `has_more`).
    pub limit: i64,
    /// Only playlists created before this position (from the cursor).
    pub before_seq: Option<i64>,
}

/// A change of a stored playlist: each supplied part replaces the stored one.
#[derive(Debug, Clone)]
pub struct PlaylistChange {
    pub name: Option<String>,
    pub items: Option<Vec<PlaylistItem>>,
    pub at: i64,
}

/// Playlists in the store. Every method but [`PlaylistStore::shared_playlist`] takes the
/// caller's workspace id.
pub(crate) trait PlaylistStore {
    /// Stores a new playlist; a 400 at `items[i].pinboard_id` for the first item naming no
    /// board of the workspace.
    async fn insert_playlist(&self, ws: &str, playlist: &Playlist) -> Result<()>;
    async fn get_playlist(&self, ws: &str, id: &str) -> Result<Option<Playlist>>;
    async fn list_playlists(&self, ws: &str, query: &PlaylistQuery)
        -> Result<Vec<(i64, Playlist)>>;
    /// Applies `change`; `None` when the workspace has no such playlist.
    async fn update_playlist(
        &self,
        ws: &str,
        id: &str,
        change: &PlaylistChange,
    ) -> Result<Option<Playlist>>;
    /// False when the workspace has no such playlist.
    async fn delete_playlist(&self, ws: &str, id: &str) -> Result<bool>;
    /// For the playlist's share page, which knows only an id: the playlist when every board
    /// of it is shared with anyone, checked in the query itself.
    async fn shared_playlist(&self, id: &str) -> Result<Option<Playlist>>;
}

const PLAYLIST_COLUMNS: &str = "id, name, created_at, updated_at";
const INSERT_PLAYLIST: &str = "INSERT INTO playlists (id, workspace_id, name, created_at, \
     updated_at) VALUES ($1, $2, $3, $4, $5)";
const INSERT_ITEM: &str = "INSERT INTO playlist_items (playlist_id, position, pinboard_id, \
     seconds) VALUES ($1, $2, $3, $4)";
const ITEMS_OF: &str = "SELECT i.pinboard_id, i.seconds FROM playlist_items i \
     JOIN playlists p ON p.id = i.playlist_id \
     WHERE p.workspace_id = $1 AND i.playlist_id = $2 ORDER BY i.position";
const DELETE_ITEMS: &str = "DELETE FROM playlist_items WHERE playlist_id = $1";
const UPDATE_PLAYLIST: &str =
    "UPDATE playlists SET name = $3, updated_at = $4 WHERE workspace_id = $1 AND id = $2";
const DELETE_PLAYLIST: &str = "DELETE FROM playlists WHERE workspace_id = $1 AND id = $2";
/// Only when no item's board is hidden from anyone (a board not public, or public only
/// after sign-in).
const SHARED_PLAYLIST: &str = "SELECT p.workspace_id, p.id, p.name, p.created_at, p.updated_at \
     FROM playlists p WHERE p.id = $1 AND NOT EXISTS (SELECT 1 FROM playlist_items i \
     JOIN pinboards b ON b.id = i.pinboard_id \
     WHERE i.playlist_id = p.id AND NOT (b.is_public AND NOT b.require_sign_in))";

fn playlist_at(row: &impl Record, first: usize) -> Result<Playlist> {
    Ok(Playlist {
        id: row.get(first)?,
        name: row.get(first + 1)?,
        items: Vec::new(),
        created_at: row.get(first + 2)?,
        updated_at: row.get(first + 3)?,
    })
}

fn item_at(row: &impl Record, first: usize) -> Result<PlaylistItem> {
    Ok(PlaylistItem {
        pinboard_id: row.get(first)?,
        seconds: row.get(first + 1)?,
    })
}

/// Checks inside the write's transaction that every item names a board of workspace `ws`,
/// keeping those boards from being deleted until the commit; the first that doesn't is a
/// 400 at its field path (another workspace's board looks the same as a missing one).
async fn check_boards<B: Backend>(tx: &mut B::Db, ws: &str, items: &[PlaylistItem]) -> Result<()> {
    let ids: Vec<String> = items.iter().map(|i| i.pinboard_id.clone()).collect();
    let sql = format!(
        "SELECT id FROM pinboards WHERE workspace_id = $1 AND {}{}",
        B::in_list("id", 2),
        B::FOR_KEY_SHARE
    );
    let rows = B::query(&sql)
        .bind(ws)
        .bind_list(&ids)
        .fetch_all(tx)
        .await?;
    let found = rows
        .iter()
        .map(|r| r.get::<String>(0))
        .collect::<std::result::Result<std::collections::HashSet<_>, _>>()?;
    match items.iter().position(|i| !found.contains(&i.pinboard_id)) {
        Some(i) => Err(Error::validation(
            format!("items[{i}].pinboard_id"),
            "the id of a pinboard of this workspace",
        )),
        None => Ok(()),
    }
}

async fn insert_items<B: Backend>(tx: &mut B::Db, id: &str, items: &[PlaylistItem]) -> Result<()> {
    for (position, item) in (0_i64..).zip(items) {
        B::query(INSERT_ITEM)
            .bind(id)
            .bind(position)
            .bind(&item.pinboard_id)
            .bind(item.seconds)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

async fn items_of<B: Backend>(db: &mut B::Db, ws: &str, id: &str) -> Result<Vec<PlaylistItem>> {
    let rows = B::query(ITEMS_OF).bind(ws).bind(id).fetch_all(db).await?;
    rows.iter().map(|r| item_at(r, 0)).collect()
}

impl<B: Backend> PlaylistStore for B {
    async fn insert_playlist(&self, ws: &str, playlist: &Playlist) -> Result<()> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        check_boards::<B>(&mut *tx, ws, &playlist.items).await?;
        B::query(INSERT_PLAYLIST)
            .bind(&playlist.id)
            .bind(ws)
            .bind(&playlist.name)
            .bind(playlist.created_at)
            .bind(playlist.updated_at)
            .execute(&mut *tx)
            .await?;
        insert_items::<B>(&mut *tx, &playlist.id, &playlist.items).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn get_playlist(&self, ws: &str, id: &str) -> Result<Option<Playlist>> {
        let mut conn = self.reader().await?;
        let sql =
            format!("SELECT {PLAYLIST_COLUMNS} FROM playlists WHERE workspace_id = $1 AND id = $2");
        let Some(row) = B::query(&sql)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
        else {
            return Ok(None);
        };
        let mut playlist = playlist_at(&row, 0)?;
        playlist.items = items_of::<B>(&mut *conn, ws, id).await?;
        Ok(Some(playlist))
    }

    async fn list_playlists(
        &self,
        ws: &str,
        query: &PlaylistQuery,
    ) -> Result<Vec<(i64, Playlist)>> {
        let mut conn = self.reader().await?;
        let sql = format!(
            "SELECT seq, {PLAYLIST_COLUMNS} FROM playlists WHERE workspace_id = $1 AND seq < $2 \
             ORDER BY seq DESC LIMIT $3"
        );
        let rows = B::query(&sql)
            .bind(ws)
            .bind(query.before_seq.unwrap_or(i64::MAX))
            .bind(query.limit)
            .fetch_all(&mut *conn)
            .await?;
        let mut page = rows
            .iter()
            .map(|r| Ok((r.get(0)?, playlist_at(r, 1)?)))
            .collect::<Result<Vec<(i64, Playlist)>>>()?;
        let ids: Vec<String> = page.iter().map(|(_, p)| p.id.clone()).collect();
        if ids.is_empty() {
            return Ok(page);
        }
        // Every listed playlist's items in one query.
        let sql = format!(
            "SELECT i.playlist_id, i.pinboard_id, i.seconds FROM playlist_items i \
             JOIN playlists p ON p.id = i.playlist_id WHERE p.workspace_id = $1 AND {} \
             ORDER BY i.playlist_id, i.position",
            B::in_list("p.id", 2)
        );
        let rows = B::query(&sql)
            .bind(ws)
            .bind_list(&ids)
            .fetch_all(&mut *conn)
            .await?;
        for row in &rows {
            let playlist_id: String = row.get(0)?;
            if let Some((_, p)) = page.iter_mut().find(|(_, p)| p.id == playlist_id) {
                p.items.push(item_at(row, 1)?);
            }
        }
        Ok(page)
    }

    async fn update_playlist(
        &self,
        ws: &str,
        id: &str,
        change: &PlaylistChange,
    ) -> Result<Option<Playlist>> {
        let mut conn = self.writer().await?;
        let mut tx = conn.begin().await?;
        let sql = format!(
            "SELECT {PLAYLIST_COLUMNS} FROM playlists WHERE workspace_id = $1 AND id = $2{}",
            B::FOR_UPDATE
        );
        let Some(row) = B::query(&sql)
            .bind(ws)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?
        else {
            return Ok(None);
        };
        let mut playlist = playlist_at(&row, 0)?;
        if let Some(name) = &change.name {
            playlist.name = name.clone();
        }
        playlist.updated_at = change.at.max(playlist.updated_at);
        B::query(UPDATE_PLAYLIST)
            .bind(ws)
            .bind(id)
            .bind(&playlist.name)
            .bind(playlist.updated_at)
            .execute(&mut *tx)
            .await?;
        match &change.items {
            Some(items) => {
                check_boards::<B>(&mut *tx, ws, items).await?;
                B::query(DELETE_ITEMS).bind(id).execute(&mut *tx).await?;
                insert_items::<B>(&mut *tx, id, items).await?;
                playlist.items = items.clone();
            }
            None => playlist.items = items_of::<B>(&mut *tx, ws, id).await?,
        }
        tx.commit().await?;
        Ok(Some(playlist))
    }

    async fn delete_playlist(&self, ws: &str, id: &str) -> Result<bool> {
        // Its items follow (ON DELETE CASCADE; SQLite's writer enforces foreign keys).
        let done = B::query(DELETE_PLAYLIST)
            .bind(ws)
            .bind(id)
            .execute(&mut *self.writer().await?)
            .await?;
        Ok(done == 1)
    }

    async fn shared_playlist(&self, id: &str) -> Result<Option<Playlist>> {
        let mut conn = self.reader().await?;
        let Some(row) = B::query(SHARED_PLAYLIST)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
        else {
            return Ok(None);
        };
        let ws: String = row.get(0)?;
        let mut playlist = playlist_at(&row, 1)?;
        playlist.items = items_of::<B>(&mut *conn, &ws, id).await?;
        Ok(Some(playlist))
    }
}
