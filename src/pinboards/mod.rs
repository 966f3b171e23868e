//! Pinboards: request bodies parsed into checked values, and the record shape reads return.
//! [`ops`] holds the board and placement operations, [`sharing`] the share settings of pins
//! and boards, [`grid`] the rules of the 12-column grid, [`collaborators`] the users given a
//! role on one board, [`view`] what pages show each viewer.

pub mod collaborators;
pub mod grid;
pub mod ops;
pub mod sharing;
pub mod view;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{
    clock,
    config::Limits,
    error::{Error, Result},
    pins::{
        check_tags, is_blank, shareable_url, PinRecord, NOT_BLANK, TAGS, TAG_CHARS, TITLE_CHARS,
    },
    store::{Pinboard, PlacedPin, Position, Sharing},
    wire::body::{non_empty, nullable, present},
};

/// Longest board description, in characters.
pub const DESCRIPTION_CHARS: usize = 2000;

/// `POST /pinboards` body.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = serde_json::json!({"title": "Operations", "description": "Nightly jobs", "tags": ["ops"]}))]
pub struct CreateBoardBody {
    /// Not only spaces, tabs and line breaks.
    #[schemars(length(min = 1, max = TITLE_CHARS), regex(pattern = NOT_BLANK))]
    pub title: String,
    #[serde(default)]
    #[schemars(length(max = DESCRIPTION_CHARS))]
    pub description: Option<String>,
    #[serde(default)]
    #[schemars(length(max = TAGS), inner(length(min = 1, max = TAG_CHARS)))]
    pub tags: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub is_public: Option<bool>,
}

/// `PUT`/`PATCH /pinboards/{id}` body: only supplied fields change; `description: null`
/// clears the description, `tags: null` empties the tags.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = non_empty)]
pub struct UpdateBoardBody {
    /// Not only spaces, tabs and line breaks (a pinboard always has a title).
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(
        with = "String",
        length(min = 1, max = TITLE_CHARS),
        regex(pattern = NOT_BLANK)
    )]
    pub title: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(length(max = DESCRIPTION_CHARS))]
    pub description: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(length(max = TAGS), inner(length(min = 1, max = TAG_CHARS)))]
    pub tags: Option<Option<Vec<String>>>,
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "bool")]
    pub is_public: Option<bool>,
}

fn check_title(title: &str, limits: &Limits) -> Result<()> {
    let chars = title.chars().count();
    if is_blank(title) || chars > limits.title_chars {
        return Err(Error::validation(
            "title",
            format!("1 to {} characters, not all blank", limits.title_chars),
        ));
    }
    Ok(())
}

/// A description (of a board or a dataset): at most [`DESCRIPTION_CHARS`] characters.
pub(crate) fn check_description(description: &str) -> Result<()> {
    if description.chars().count() > DESCRIPTION_CHARS {
        return Err(Error::validation(
            "description",
            format!("at most {DESCRIPTION_CHARS} characters"),
        ));
    }
    Ok(())
}

impl CreateBoardBody {
    /// Checks everything and builds the board to store.
    pub fn into_board(self, limits: &Limits, now: i64) -> Result<Pinboard> {
        check_title(&self.title, limits)?;
        if let Some(description) = &self.description {
            check_description(description)?;
        }
        let tags = self.tags.unwrap_or_default();
        check_tags(&tags, "tags", limits)?;
        Ok(Pinboard {
            id: crate::ids::new_id("pb-"),
            title: self.title,
            description: self.description,
            tags,
            sharing: Sharing {
                is_public: self.is_public.unwrap_or(false),
                ..Sharing::default()
            },
            created_at: now,
            updated_at: now,
        })
    }
}

/// A checked board update, applied to the current board inside the write transaction.
#[derive(Debug)]
pub struct BoardUpdate {
    title: Option<String>,
    description: Option<Option<String>>,
    tags: Option<Vec<String>>,
    is_public: Option<bool>,
}

impl UpdateBoardBody {
    /// Checks every supplied field; an update that changes nothing (`{}`) is refused.
    pub fn into_update(self, limits: &Limits) -> Result<BoardUpdate> {
        let title = match self.title {
            Some(None) => {
                return Err(Error::validation(
                    "title",
                    format!(
                        "1 to {} characters (a pinboard always has a title)",
                        limits.title_chars
                    ),
                ))
            }
            Some(Some(title)) => {
                check_title(&title, limits)?;
                Some(title)
            }
            None => None,
        };
        if let Some(Some(description)) = &self.description {
            check_description(description)?;
        }
        let tags = self.tags.map(Option::unwrap_or_default);
        if let Some(tags) = &tags {
            check_tags(tags, "tags", limits)?;
        }
        if title.is_none()
            && self.description.is_none()
            && tags.is_none()
            && self.is_public.is_none()
        {
            return Err(Error::validation(
                "body",
                "at least one field to update (title, description, tags or is_public)",
            ));
        }
        Ok(BoardUpdate {
            title,
            description: self.description,
            tags,
            is_public: self.is_public,
        })
    }
}

impl BoardUpdate {
    pub fn apply(&self, mut board: Pinboard, now: i64) -> Pinboard {
        if let Some(title) = &self.title {
            board.title = title.clone();
        }
        if let Some(description) = &self.description {
            board.description = description.clone();
        }
        if let Some(tags) = &self.tags {
            board.tags = tags.clone();
        }
        if let Some(is_public) = self.is_public {
            board.sharing.is_public = is_public;
        }
        board.updated_at = board.next_updated_at(now);
        board
    }
}

/// The pinboard record (CONTRACT.md 6) of creates, updates and lists.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "Pinboard", deny_unknown_fields)]
pub struct BoardRecord {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub is_public: bool,
    #[schemars(extend("format" = "uri"))]
    pub shareable_url: String,
    #[schemars(extend("format" = "date-time"))]
    pub created_at: String,
    #[schemars(extend("format" = "date-time"))]
    pub updated_at: String,
}

impl BoardRecord {
    pub fn new(board: &Pinboard, public_base: &str) -> Self {
        BoardRecord {
            id: board.id.clone(),
            title: board.title.clone(),
            description: board.description.clone(),
            tags: board.tags.clone(),
            is_public: board.sharing.is_public,
            shareable_url: shareable_url(public_base, &board.id),
            created_at: clock::iso(board.created_at),
            updated_at: clock::iso(board.updated_at),
        }
    }
}

/// A single board read: the record plus its pins in position order.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "PinboardWithPins", deny_unknown_fields)]
pub struct BoardWithPins {
    #[serde(flatten)]
    pub board: BoardRecord,
    pub pins: Vec<PlacedRecord>,
}

impl BoardWithPins {
    pub fn new(board: &Pinboard, placed: &[PlacedPin], public_base: &str) -> Result<Self> {
        Ok(BoardWithPins {
            board: BoardRecord::new(board, public_base),
            pins: placed
                .iter()
                .map(|p| PlacedRecord::new(p, public_base))
                .collect::<Result<_>>()?,
        })
    }
}

/// One placed pin of a board read.
#[derive(Debug, Serialize, JsonSchema)]
#[schemars(rename = "PlacedPin", deny_unknown_fields)]
pub struct PlacedRecord {
    pub pin_id: String,
    pub position: Position,
    pub pin: PinRecord,
}

impl PlacedRecord {
    pub fn new(placed: &PlacedPin, public_base: &str) -> Result<Self> {
        Ok(PlacedRecord {
            pin_id: placed.pin.id.clone(),
            position: placed.position,
            pin: PinRecord::new(&placed.pin, public_base)?,
        })
    }
}
