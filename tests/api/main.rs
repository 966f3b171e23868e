//! HTTP tests of the whole API against the real router, on SQLite and on PostgreSQL.
//! One binary: every module below shares it, and tests run in parallel.

mod api_keys;
mod append;
mod auth;
mod batch;
mod blocks;
mod cli;
mod collaborators;
mod connections;
mod datasets;
mod errors;
mod helpers;
mod idp;
mod jwt;
mod key_limits;
mod keys;
mod limits;
mod lists;
mod live;
mod mcp;
mod openapi;
mod ops;
mod outage;
mod pin_types;
mod pinboards;
mod pins;
mod placements;
mod roles;
mod share_pages;
mod sharing;
mod signed_in_pages;
mod slow_clients;
mod smoke;
mod templates;
mod upsert;
mod web_sign_in;
