//! Playlists (CONTRACT.md 17): a workspace's boards shown in turn on a screen, each for its
//! `seconds`. Request bodies parsed into checked values and the record reads return;
//! [`ops`] holds the operations, which the API and the pages (`/play/{id}`,
//! `/share/playlist/{id}`) call.

pub mod ops;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    clock,
    config::Limits,
    error::{Error, Result},
    pins::{is_blank, NOT_BLANK, TITLE_CHARS},
    store::{Playlist, PlaylistChange, PlaylistItem},
    wire::body::{non_empty, present},
};

/// Most boards in one playlist.
pub const MAX_ITEMS: usize = 100;
/// Fewest seconds a board is shown.
pub const MIN_SECONDS: i64 = 5;
/// Most seconds a board is shown.
pub const MAX_SECONDS: i64 = 3600;

/// One board of a playlist's body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaylistItemBody {
    /// A pinboard of the caller's workspace (`pb-...`).
    pub pinboard_id: String,
    /// How long the board is shown, in seconds.
    #[schemars(range(min = MIN_SECONDS, max = MAX_SECONDS))]
    pub seconds: i64,
}

/// `POST /playlists` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePlaylistBody {
    /// Not only spaces, tabs and line breaks.
    #[schemars(length(min = 1, max = TITLE_CHARS), regex(pattern = NOT_BLANK))]
    pub name: String,
    /// The boards in the order they are shown.
    #[schemars(length(min = 1, max = MAX_ITEMS))]
    pub items: Vec<PlaylistItemBody>,
}

/// `PUT /playlists/{id}` body: each part sent replaces the stored one (`items` the whole
/// list).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = non_empty)]
pub struct UpdatePlaylistBody {
    /// Not only spaces, tabs and line breaks.
    #[serde(default, deserialize_with = "present")]
    #[schemars(
        with = "String",
        length(min = 1, max = TITLE_CHARS),
        regex(pattern = NOT_BLANK)
    )]
    pub name: Option<String>,
    /// The boards in the order they are shown.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Vec<PlaylistItemBody>", length(min = 1, max = MAX_ITEMS))]
    pub items: Option<Vec<PlaylistItemBody>>,
}

fn check_name(name: &str, limits: &Limits) -> Result<()> {
    if is_blank(name) || name.chars().count() > limits.title_chars {
        return Err(Error::validation(
            "name",
            format!("1 to {} characters, not all blank", limits.title_chars),
        ));
    }
    Ok(())
}

/// The checked items: 1 to [`MAX_ITEMS`], each shown [`MIN_SECONDS`] to [`MAX_SECONDS`].
/// That each names a board of the workspace is checked by the store, in the write.
fn checked_items(items: Vec<PlaylistItemBody>) -> Result<Vec<PlaylistItem>> {
    if items.is_empty() || items.len() > MAX_ITEMS {
        return Err(Error::validation(
            "items",
            format!("1 to {MAX_ITEMS} items"),
        ));
    }
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            if !(MIN_SECONDS..=MAX_SECONDS).contains(&item.seconds) {
                return Err(Error::validation(
                    format!("items[{i}].seconds"),
                    format!("an integer from {MIN_SECONDS} to {MAX_SECONDS}"),
                ));
            }
            Ok(PlaylistItem {
                pinboard_id: item.pinboard_id,
                seconds: item.seconds,
            })
        })
        .collect()
}

impl CreatePlaylistBody {
    /// Checks everything the body alone can say and builds the playlist to store.
    pub fn into_playlist(self, limits: &Limits, now: i64) -> Result<Playlist> {
        check_name(&self.name, limits)?;
        Ok(Playlist {
            id: crate::ids::new_id("pl-"),
            name: self.name,
            items: checked_items(self.items)?,
            created_at: now,
            updated_at: now,
        })
    }
}

impl UpdatePlaylistBody {
    /// Checks every part sent; a body that changes nothing (`{}`) is refused.
    pub fn into_change(self, limits: &Limits, now: i64) -> Result<PlaylistChange> {
        if self.name.is_none() && self.items.is_none() {
            return Err(Error::validation("body", "at least one of name and items"));
        }
        if let Some(name) = &self.name {
            check_name(name, limits)?;
        }
        Ok(PlaylistChange {
            name: self.name,
            items: self.items.map(checked_items).transpose()?,
            at: now,
        })
    }
}

/// One board of a playlist record.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "PlaylistItem", deny_unknown_fields)]
pub struct PlaylistItemRecord {
    pub pinboard_id: String,
    pub seconds: i64,
}

/// The playlist record of creates, reads, updates and lists.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Playlist", deny_unknown_fields)]
pub struct PlaylistRecord {
    pub id: String,
    pub name: String,
    /// Its boards in the order they are shown (a deleted board's items are dropped).
    pub items: Vec<PlaylistItemRecord>,
    /// The page that plays it for a signed-in member of the workspace.
    #[schemars(extend("format" = "uri"))]
    pub play_url: String,
    /// The page that plays it for anyone, which shows only while every board of it is
    /// shared with anyone.
    #[schemars(extend("format" = "uri"))]
    pub share_url: String,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
}

impl PlaylistRecord {
    pub fn new(playlist: &Playlist, public_base: &str) -> Self {
        PlaylistRecord {
            id: playlist.id.clone(),
            name: playlist.name.clone(),
            items: playlist
                .items
                .iter()
                .map(|i| PlaylistItemRecord {
                    pinboard_id: i.pinboard_id.clone(),
                    seconds: i.seconds,
                })
                .collect(),
            play_url: format!("{public_base}/play/{}", playlist.id),
            share_url: format!("{public_base}/share/playlist/{}", playlist.id),
            created_at: clock::iso(playlist.created_at),
            updated_at: clock::iso(playlist.updated_at),
        }
    }
}
