//! Storage: two databases behind one interface, picked by the URL scheme ([`Store`]).
//!
//! - `sql.rs`: [`sql::Backend`], what one database provides (connections, the statements
//!   whose text differs, the operations it tunes its own way), and the statement, row and
//!   connection traits the shared code is written against.
//! - `keys.rs`, `pins.rs`, `boards.rs`, `placements.rs`, `identity.rs`, `local.rs`,
//!   `invitations.rs`, `datasets.rs`, `blocks.rs`, `hooks.rs`, `webhooks.rs`, `playlists.rs`,
//!   `embeds.rs`: each resource's
//!   stored shapes, its portable statements and its operations, written once as a blanket
//!   implementation over [`sql::Backend`].
//! - `group_commit.rs`: the queue and thread that group single creates and updates into one
//!   commit.
//! - `sqlite/` and `postgres/`: only what differs: connecting (pragmas, pools, PostgreSQL's
//!   per-request connection), dialect statements, creates and the reads each tunes.
//!
//! Every pin and board method takes the caller's workspace id: there is no way to read or
//! write a pin by id alone. The one exception is what share pages read (`shared_pin`,
//! `shared_board`, `shared_playlist`): they know only an id, and the query itself admits only what anyone may
//! see; `board_grant`, a user's collaborator role on a board of any workspace; and
//! `find_hook`: a call to a hook's url names only its token, whose row names the workspace;
//! and `due_webhooks`, `webhook_workspaces` and `claim_webhooks`: the delivery worker leases due webhooks of
//! every workspace, each row naming its workspace for every statement after.
//!
//! The statements one create and one read run are named constants (`FIND_KEY`,
//! `INSERT_PIN`, `postgres::GET_PINS`): `bench/sql/` runs the same text beside them
//! (`bench_sql.rs` keeps them equal).

/// [`PIN_COLUMNS`] as a literal, so statements that list them can be `concat!`ed constants.
macro_rules! pin_columns {
    () => {
        "id, pin_type, pin_config, pin_layout, is_public, allow_edit, require_sign_in, \
         allow_comments, title, tags, provenance, version, created_at, updated_at, key, \
         expected_every_secs, last_pushed_at, status_rules, status"
    };
}

/// The head of [`INSERT_PIN`], before its `VALUES`; SQLite's batches add many rows to it.
macro_rules! insert_pins_into {
    () => {
        "INSERT INTO pins (id, workspace_id, pin_type, pin_config, pin_layout, is_public, \
         title, tags, provenance, version, created_at, updated_at, key, expected_every_secs, \
         last_pushed_at, stale_due_at, status_rules, status, status_due)"
    };
}

mod auth_epoch;
#[cfg(test)]
mod bench_sql;
mod blocks;
mod boards;
mod datasets;
mod embeds;
mod events;
mod group_commit;
mod hooks;
mod identity;
mod invitations;
mod json;
mod keys;
mod local;
mod pins;
mod placements;
mod playlists;
pub(crate) mod postgres;
mod sessions;
pub(crate) mod sql;
mod sqlite;
mod webhooks;

pub use auth_epoch::AuthEpoch;
pub use blocks::{Block, BlockEdit};
pub use boards::{
    board_changed, BoardChange, BoardQuery, Pinboard, PlacedPin, Placement, Position, Sharing,
};
pub use datasets::{Dataset, DatasetChange, DatasetCheck, DatasetQuery, NamedChange};
pub use events::{Commits, Event, NewEvent, Render};
pub use hooks::{HookQuery, HookRow};
pub use identity::{Collaborator, Member, RoleRow, SignIn, UserRow};
pub use invitations::{
    Accepted, InvitationRow, Joiner, MemberRow, OpenInvitation, PendingCollaborator,
};
pub use json::{checked_json, JsonText, Serialized};
pub use keys::KeyRow;
pub use local::{NewOwner, PasswordUser};
pub use pins::{
    Change, Created, DeleteCheck, Idempotent, Logged, Pin, PinKey, PinQuery, StatusMark, Upserted,
};
pub use placements::{BoardWrite, Placed, Placer};
pub use playlists::{Playlist, PlaylistChange, PlaylistItem, PlaylistQuery};
pub use sessions::SessionRow;
pub use webhooks::{
    DeliveryRow, Failure, WebhookChange, WebhookQuery, WebhookRow, KEPT_DELIVERIES,
};

use std::sync::Arc;

use crate::{error::Result, Error};
use blocks::BlockStore;
use boards::BoardStore;
use datasets::DatasetStore;
use embeds::EmbedStore;
use events::EventStore;
use hooks::HookStore;
use identity::IdentityStore;
use invitations::InvitationStore;
use keys::KeyStore;
use local::LocalStore;
use pins::PinStore;
use placements::PlacementStore;
use playlists::PlaylistStore;
use sessions::SessionStore;
use sql::Backend;
use webhooks::WebhookStore;

/// The store in use.
#[derive(Clone)]
pub enum Store {
    Sqlite(sqlite::SqliteStore),
    Postgres(postgres::PgStore),
}

/// Each operation of the store in use. A PostgreSQL failure is looked at on its way out
/// ([`postgres::conn::note_error`]): one that may have come from the request's connection
/// has it checked before its reuse.
macro_rules! delegate {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {$(
        pub async fn $name(&self $(, $arg: $ty)*) -> $ret {
            match self {
                Store::Sqlite(s) => s.$name($($arg),*).await,
                Store::Postgres(s) => s
                    .$name($($arg),*)
                    .await
                    .inspect_err(postgres::conn::note_error),
            }
        }
    )*};
}

impl Store {
    /// Connects to `url` (`sqlite:` or `postgres:`) and applies the migrations; `render`
    /// gives the records the event log carries.
    pub async fn open(url: &str, max_connections: u32, render: Arc<dyn Render>) -> Result<Store> {
        if url.starts_with("sqlite:") {
            Ok(Store::Sqlite(
                sqlite::SqliteStore::open(url, max_connections, render).await?,
            ))
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Store::Postgres(
                postgres::PgStore::open(url, max_connections, render).await?,
            ))
        } else {
            Err(Error::internal(format!(
                "unsupported store URL scheme in {}",
                crate::config::redact_url(url)
            )))
        }
    }

    /// The PostgreSQL connections, for state that replicas share (rate limits).
    pub fn pg_connections(&self) -> Option<postgres::conn::Connections> {
        match self {
            Store::Sqlite(_) => None,
            Store::Postgres(s) => Some(s.connections()),
        }
    }

    /// What tells whether an API key's principal kept by an earlier request is still true.
    pub fn auth(&self) -> &AuthEpoch {
        match self {
            Store::Sqlite(s) => s.auth(),
            Store::Postgres(s) => s.auth(),
        }
    }

    /// PostgreSQL: the count of changes to keys, memberships and roles by any writer, which
    /// the rate-limit check reads too; SQLite: `None` ([`AuthEpoch`] sees every change).
    pub async fn auth_changes(&self) -> Result<Option<i64>> {
        match self {
            Store::Sqlite(_) => Ok(None),
            Store::Postgres(s) => s
                .auth_changes()
                .await
                .map(Some)
                .inspect_err(postgres::conn::note_error),
        }
    }

    /// Where the live streams learn that a workspace has new events.
    pub fn commits(&self) -> &Commits {
        match self {
            Store::Sqlite(s) => s.commits(),
            Store::Postgres(s) => s.commits(),
        }
    }

    pub async fn close(&self) {
        match self {
            Store::Sqlite(s) => s.close().await,
            Store::Postgres(s) => s.close().await,
        }
    }

    /// How its connection pools stand, for `/metrics`.
    pub fn pools(&self) -> Vec<crate::metrics::PoolUse> {
        match self {
            Store::Sqlite(s) => s.pools(),
            Store::Postgres(s) => s.pools(),
        }
    }

    pub fn backend_name(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "sqlite",
            Store::Postgres(_) => "postgres",
        }
    }

    delegate! {
        fn ping(&self) -> Result<()>;
        fn ensure_workspace(&self, name: &str) -> Result<String>;
        fn claim_bootstrap(&self) -> Result<bool>;
        fn insert_key(&self, key: &KeyRow) -> Result<()>;
        fn find_key(&self, lookup: &str) -> Result<Option<KeyRow>>;
        fn list_keys(&self) -> Result<Vec<(KeyRow, String)>>;
        fn revoke_key(&self, id: &str, at: i64) -> Result<bool>;
        fn touch_key(&self, id: &str, at: i64) -> Result<()>;
        fn live_keys(&self, ws: &str) -> Result<i64>;
        fn insert_pins(&self, ws: &str, pins: &[Pin], idem: Option<&Idempotent>) -> Result<Created>;
        fn get_pins(&self, ws: &str, ids: &[String]) -> Result<Vec<Pin>>;
        fn list_pin_keys(&self, ws: &str, query: &PinQuery) -> Result<Vec<PinKey>>;
        fn update_pins(&self, ws: &str, ids: &[String], retention: u32, change: &mut Change<'_>) -> Result<Vec<Pin>>;
        fn update_read(&self, ws: &str, old: Pin, new: Pin, retention: u32, logged: Logged) -> Result<Option<Pin>>;
        fn sweep_stale(&self, now: i64, limit: i64) -> Result<i64>;
        fn status_marks(&self, limit: i64) -> Result<Vec<StatusMark>>;
        fn clear_status_marks(&self, ws: &str, marks: &[(String, i64, i64)]) -> Result<()>;
        fn touch_pin(&self, ws: &str, id: &str, version: i64, at: i64) -> Result<()>;
        fn delete_pins(&self, ws: &str, ids: &[String], check: &mut DeleteCheck<'_>) -> Result<()>;
        fn list_versions(&self, ws: &str, id: &str, retention: u32, before_version: Option<i64>, limit: i64) -> Result<Option<Vec<Pin>>>;
        fn find_idempotent(&self, ws: &str, key: &str, since: i64) -> Result<Option<Idempotent>>;
        fn pins_by_key(&self, ws: &str, keys: &[String]) -> Result<Vec<Pin>>;
        fn upsert_pins(&self, ws: &str, new: &[Pin], retention: u32, change: &mut Change<'_>) -> Result<Vec<Upserted>>;
        fn insert_pinboard(&self, ws: &str, board: &Pinboard) -> Result<()>;
        fn get_pinboard(&self, ws: &str, id: &str) -> Result<Option<Pinboard>>;
        fn placed_pins(&self, ws: &str, board_id: &str) -> Result<Vec<PlacedPin>>;
        fn list_pinboards(&self, ws: &str, query: &BoardQuery) -> Result<Vec<(i64, Pinboard)>>;
        fn update_pinboard(&self, ws: &str, id: &str, change: &mut BoardChange<'_>) -> Result<Pinboard>;
        fn delete_pinboard(&self, ws: &str, id: &str, since: Option<i64>) -> Result<bool>;
        fn place_pin(&self, ws: &str, board_id: &str, pin_id: &str, at: BoardWrite, place: &mut Placer<'_>) -> Result<Placed>;
        fn move_placement(&self, ws: &str, board_id: &str, pin_id: &str, at: BoardWrite, place: &mut Placer<'_>) -> Result<Placed>;
        fn remove_placement(&self, ws: &str, board_id: &str, pin_id: &str, at: BoardWrite) -> Result<i64>;
        fn shared_pin(&self, id: &str) -> Result<Option<Pin>>;
        fn shared_board(&self, id: &str) -> Result<Option<(Pinboard, Vec<PlacedPin>)>>;
        fn shared_workspace(&self, id: &str) -> Result<Option<String>>;
        fn workspace_of(&self, id: &str) -> Result<Option<String>>;
        fn find_member(&self, subject: &str, workspace: &str) -> Result<Option<Member>>;
        fn member_role(&self, ws: &str, user_id: &str) -> Result<Option<String>>;
        fn enroll(&self, who: &SignIn<'_>) -> Result<Member>;
        fn insert_role(&self, ws: &str, role: &RoleRow) -> Result<()>;
        fn find_role(&self, ws: &str, name: &str) -> Result<Option<RoleRow>>;
        fn list_roles(&self, ws: &str) -> Result<Vec<RoleRow>>;
        fn workspace_keys(&self, ws: &str) -> Result<Vec<KeyRow>>;
        fn revoke_workspace_key(&self, ws: &str, id: &str, at: i64) -> Result<bool>;
        fn find_users(&self, user: &str) -> Result<Vec<UserRow>>;
        fn add_collaborator(&self, ws: &str, board_id: &str, who: &Collaborator) -> Result<bool>;
        fn collaborators(&self, ws: &str, board_id: &str) -> Result<Vec<Collaborator>>;
        fn set_collaborator_role(&self, ws: &str, board_id: &str, user_id: &str, role: &str) -> Result<bool>;
        fn remove_collaborator(&self, ws: &str, board_id: &str, user_id: &str) -> Result<bool>;
        fn events_after(&self, ws: &str, seq: i64, limit: i64) -> Result<Vec<Event>>;
        fn event_bounds(&self) -> Result<(i64, i64)>;
        fn newest_event_of(&self, ws: &str) -> Result<i64>;
        fn share_event_key(&self, offer: &str) -> Result<String>;
        fn prune_events(&self, before: i64) -> Result<u64>;
        fn board_grant(&self, board_id: &str, user_id: &str) -> Result<Option<(String, String)>>;
        fn grants_holding_pin(&self, ws: &str, pin_id: &str, user_id: &str) -> Result<Vec<String>>;
        fn insert_dataset(&self, ws: &str, dataset: &Dataset) -> Result<()>;
        fn get_dataset(&self, ws: &str, id: &str) -> Result<Option<Dataset>>;
        fn list_datasets(&self, ws: &str, query: &DatasetQuery) -> Result<Vec<(i64, Dataset)>>;
        fn datasets_named(&self, ws: &str, names: &[String]) -> Result<Vec<Dataset>>;
        fn dataset_stamps(&self, ws: &str, names: &[String]) -> Result<Vec<(String, String, i64)>>;
        fn update_dataset(&self, ws: &str, id: &str, change: &mut DatasetChange<'_>) -> Result<Dataset>;
        fn delete_dataset(&self, ws: &str, id: &str, check: &mut DatasetCheck<'_>) -> Result<()>;
        fn write_dataset_named(&self, ws: &str, name: &str, change: &mut NamedChange<'_>) -> Result<Dataset>;
        fn insert_hook(&self, hook: &HookRow) -> Result<()>;
        fn find_hook(&self, lookup: &str) -> Result<Option<HookRow>>;
        fn list_hooks(&self, ws: &str, query: &HookQuery) -> Result<Vec<(i64, HookRow)>>;
        fn delete_hook(&self, ws: &str, id: &str) -> Result<bool>;
        fn insert_webhook(&self, hook: &WebhookRow, cap: i64) -> Result<bool>;
        fn get_webhook(&self, ws: &str, id: &str) -> Result<Option<WebhookRow>>;
        fn list_webhooks(&self, ws: &str, query: &WebhookQuery) -> Result<Vec<(i64, WebhookRow)>>;
        fn update_webhook(&self, ws: &str, id: &str, change: &mut WebhookChange<'_>) -> Result<Option<WebhookRow>>;
        fn delete_webhook(&self, ws: &str, id: &str) -> Result<bool>;
        fn webhook_deliveries(&self, ws: &str, id: &str, limit: i64) -> Result<Vec<DeliveryRow>>;
        fn log_webhook_event(&self, ws: &str, event: &NewEvent) -> Result<()>;
        fn due_webhooks(&self, now: i64, limit: i64) -> Result<Vec<String>>;
        fn webhook_workspaces(&self) -> Result<Vec<String>>;
        fn claim_webhooks(&self, worker: &str, ids: &[String], now: i64, lease_until: i64) -> Result<Vec<WebhookRow>>;
        fn webhook_progress(&self, ws: &str, id: &str, worker: &str, attempts: &[DeliveryRow], cursor: i64, lease_until: i64) -> Result<bool>;
        fn webhook_failed(&self, ws: &str, id: &str, worker: &str, attempt: &DeliveryRow, failure: &Failure) -> Result<bool>;
        fn release_webhook(&self, ws: &str, id: &str, worker: &str) -> Result<()>;
        fn pin_blocks(&self, ws: &str, pin_id: &str) -> Result<Option<Vec<Block>>>;
        fn blocks_of(&self, ws: &str, pin_ids: &[String]) -> Result<std::collections::HashMap<String, Vec<Block>>>;
        fn insert_session(&self, session: &SessionRow) -> Result<()>;
        fn find_session(&self, id_hash: &str, now: i64) -> Result<Option<SessionRow>>;
        fn delete_session(&self, id_hash: &str) -> Result<bool>;
        fn collaborator_boards(&self, user_id: &str, limit: i64) -> Result<Vec<Pinboard>>;
        fn replace_setup_token(&self, token_hash: &str, now: i64, expires_at: i64) -> Result<()>;
        fn setup_token_open(&self, token_hash: &str, now: i64) -> Result<bool>;
        fn complete_setup(&self, owner: &NewOwner<'_>) -> Result<Option<String>>;
        fn password_user(&self, email: &str, prefer: &str) -> Result<Option<PasswordUser>>;
        fn write_blocks(&self, ws: &str, pin_id: &str, now: i64, retention: u32, edit: &mut BlockEdit<'_>) -> Result<Vec<Block>>;
        fn insert_invitation(&self, ws: &str, row: &InvitationRow, now: i64, cap: i64) -> Result<bool>;
        fn invitations(&self, ws: &str, now: i64) -> Result<Vec<InvitationRow>>;
        fn delete_invitation(&self, ws: &str, id: &str) -> Result<bool>;
        fn open_invitation(&self, token_hash: &str, now: i64) -> Result<Option<OpenInvitation>>;
        fn accept_invitation(&self, token_hash: &str, joiner: &Joiner<'_>, now: i64) -> Result<Accepted>;
        fn members(&self, ws: &str) -> Result<Vec<MemberRow>>;
        fn add_pending_collaborator(&self, ws: &str, board_id: &str, who: &PendingCollaborator) -> Result<bool>;
        fn pending_collaborators(&self, ws: &str, board_id: &str) -> Result<Vec<PendingCollaborator>>;
        fn set_pending_role(&self, ws: &str, board_id: &str, email: &str, role: &str) -> Result<bool>;
        fn remove_pending_collaborator(&self, ws: &str, board_id: &str, email: &str) -> Result<bool>;
        fn insert_playlist(&self, ws: &str, playlist: &Playlist) -> Result<()>;
        fn get_playlist(&self, ws: &str, id: &str) -> Result<Option<Playlist>>;
        fn list_playlists(&self, ws: &str, query: &PlaylistQuery) -> Result<Vec<(i64, Playlist)>>;
        fn update_playlist(&self, ws: &str, id: &str, change: &PlaylistChange) -> Result<Option<Playlist>>;
        fn delete_playlist(&self, ws: &str, id: &str) -> Result<bool>;
        fn shared_playlist(&self, id: &str) -> Result<Option<Playlist>>;
        fn embed_origins(&self, ws: &str, id: &str) -> Result<Vec<String>>;
        fn set_embed_origins(&self, ws: &str, id: &str, origins: &[String]) -> Result<bool>;
    }
}
