//! HTTP tests of the whole API against the real router, on SQLite and on PostgreSQL.
//! One binary: every module below shares it, and tests run in parallel.

mod api_keys;
mod auth;
mod batch;
mod blocks;
mod cli;
mod collaborators;
mod connections;
mod datasets;
mod errors;
mod helpers;
mod hooks;
mod idp;
mod jwt;
mod key_limits;
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
mod web_sign_in;
