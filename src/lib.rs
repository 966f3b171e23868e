//! Corkboard: automations, webhooks and agents push typed pins onto pinboards that people
//! watch change. `main` parses the command line; everything else lives here so tests build
//! the very same router (see [`app::serve`]).

pub mod api;
pub mod app;
pub mod auth;
pub mod blocks;
pub mod cli;
pub mod clock;
pub mod config;
pub mod connections;
pub mod datasets;
pub mod error;
pub mod events;
pub mod hooks;
pub mod ids;
pub mod invitations;
pub mod limits;
pub mod mcp;
pub mod metrics;
pub mod pin_types;
pub mod pinboards;
pub mod pins;
pub mod playlists;
pub mod render;
pub mod store;
pub mod templates;
pub mod transfer;
pub mod web;
pub mod webhooks;
pub mod wire;

pub use app::{router, serve, AppState};
pub use config::Settings;
pub use error::{Error, Result};
