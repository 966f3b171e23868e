//! Typed settings, layered: the embedded `config/default.toml`, an optional file, then
//! `CORKBOARD_*` environment variables (`__` for nesting) and `DATABASE_URL`.

use std::{fmt, net::SocketAddr, path::PathBuf};

use figment::{
    providers::{Env, Format, Toml},
    Figment,
};
use serde::{Deserialize, Serialize};

use crate::auth::Tier;

const DEFAULTS: &str = include_str!("../config/default.toml");

/// The whole effective configuration of one process.
#[derive(Clone, Deserialize, Serialize)]
pub struct Settings {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    /// Empty selects SQLite under `data_dir`.
    pub database_url: String,
    /// Base of every `shareable_url`; empty derives it from `listen`.
    pub public_url: String,
    pub default_tier: Tier,
    pub log_format: LogFormat,
    pub shutdown_grace_secs: u64,
    pub max_connections: u32,
    pub limits: Limits,
    pub rate_limits: crate::limits::RateLimitSettings,
    pub auth: AuthSettings,
    pub events: crate::events::EventSettings,
    pub http: crate::connections::HttpSettings,
    pub render: crate::pins::rendered::RenderSettings,
    pub hooks: crate::hooks::HookSettings,
    pub freshness: FreshnessSettings,
    pub webhooks: crate::webhooks::WebhookSettings,
    pub kiosk: KioskSettings,
}

/// `[kiosk]` settings: boards shown with `?kiosk=1`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct KioskSettings {
    /// Seconds each page of a board too tall for the screen stays up (1 to 3600).
    pub page_secs: u64,
}

/// `[freshness]` settings.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct FreshnessSettings {
    /// Seconds between two looks for pins gone stale (1 or more).
    pub check_secs: u64,
}

/// Credentials other than API keys.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct AuthSettings {
    pub jwt: crate::auth::JwtSettings,
    /// Web sign-in (CONTRACT.md 13).
    pub oidc: crate::auth::OidcSettings,
    /// Local accounts: sign-in with a password (CONTRACT.md 16).
    pub local: crate::auth::LocalSettings,
}

/// Input limits, enforced before any deep work is done on a request.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Limits {
    pub body_bytes: usize,
    pub pin_config_bytes: usize,
    pub json_depth: usize,
    pub title_chars: usize,
    pub tags: usize,
    pub tag_chars: usize,
    pub batch_items: usize,
    pub version_retention: u32,
    pub idempotency_ttl_secs: u64,
    pub keys_per_workspace: usize,
    pub roles_per_workspace: usize,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// A configuration that can't be used; the message says which key and why.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {0}")]
pub struct ConfigError(String);

impl Settings {
    /// Defaults, then `file` (if any), then the environment.
    pub fn load(file: Option<&std::path::Path>) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Toml::string(DEFAULTS));
        if let Some(file) = file {
            if !file.exists() {
                return Err(ConfigError(format!("file {} not found", file.display())));
            }
            figment = figment.merge(Toml::file(file));
        }
        let figment = figment
            .merge(Env::raw().only(&["DATABASE_URL"]))
            .merge(Env::prefixed("CORKBOARD_").ignore(&["CONFIG"]).split("__"));
        Self::from_figment(figment)
    }

    /// The built-in defaults with `layers` (TOML texts) merged on top in order: for tests
    /// and tools.
    pub fn with_overrides(layers: &[&str]) -> Result<Self, ConfigError> {
        let figment = layers
            .iter()
            .fold(Figment::from(Toml::string(DEFAULTS)), |f, layer| {
                f.merge(Toml::string(layer))
            });
        Self::from_figment(figment)
    }

    fn from_figment(figment: Figment) -> Result<Self, ConfigError> {
        let settings: Settings = figment.extract().map_err(|e| ConfigError(e.to_string()))?;
        settings.check()?;
        Ok(settings)
    }

    fn check(&self) -> Result<(), ConfigError> {
        let url = self.database_url.as_str();
        if !(url.is_empty()
            || url.starts_with("sqlite:")
            || url.starts_with("postgres://")
            || url.starts_with("postgresql://"))
        {
            return Err(ConfigError(
                "database_url must be empty, sqlite:... or postgres://...".into(),
            ));
        }
        if self.limits.batch_items == 0 || self.limits.json_depth == 0 || self.max_connections == 0
        {
            return Err(ConfigError(
                "limits.batch_items, limits.json_depth and max_connections must be at least 1"
                    .into(),
            ));
        }
        if self.http.max_connections_per_address == 0 {
            return Err(ConfigError(
                "http.max_connections_per_address must be at least 1".into(),
            ));
        }
        crate::api::cors::layer(&self.http.cors_origins).map_err(ConfigError)?;
        if self.freshness.check_secs == 0 {
            return Err(ConfigError(
                "freshness.check_secs must be at least 1".into(),
            ));
        }
        if !(1..=3600).contains(&self.kiosk.page_secs) {
            return Err(ConfigError("kiosk.page_secs must be from 1 to 3600".into()));
        }
        if self.hooks.per_minute == 0 {
            return Err(ConfigError("hooks.per_minute must be at least 1".into()));
        }
        self.webhooks.check().map_err(ConfigError)?;
        if self.rate_limits.write_bucket.window_secs == 0 {
            return Err(ConfigError(
                "rate_limits.write_bucket.window_secs must be at least 1".into(),
            ));
        }
        self.auth.jwt.check().map_err(ConfigError)?;
        self.auth
            .oidc
            .check(&self.auth.jwt.issuer)
            .map_err(ConfigError)?;
        self.auth.local.check().map_err(ConfigError)?;
        if !self.public_url.is_empty() && url::Url::parse(&self.public_url).is_err() {
            return Err(ConfigError("public_url must be an absolute URL".into()));
        }
        Ok(())
    }

    /// The store URL in force: `database_url`, or the SQLite file under `data_dir`.
    pub fn store_url(&self) -> String {
        if self.database_url.is_empty() {
            format!("sqlite://{}", self.data_dir.join("corkboard.db").display())
        } else {
            self.database_url.clone()
        }
    }

    /// Base of share links, without a trailing slash.
    pub fn public_base(&self) -> String {
        if self.public_url.is_empty() {
            format!("http://{}", self.listen)
        } else {
            self.public_url.trim_end_matches('/').to_owned()
        }
    }

    /// The effective configuration as JSON with secrets redacted, for `corkboard config`.
    pub fn redacted_json(&self) -> String {
        let mut shown = self.clone();
        shown.database_url = redact_url(&shown.database_url);
        shown.auth.jwt = shown.auth.jwt.redacted();
        shown.auth.oidc = shown.auth.oidc.redacted();
        serde_json::to_string_pretty(&shown).unwrap_or_default()
    }
}

/// Hides the password of a database URL.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("REDACTED"));
            parsed.to_string()
        }
        _ => url.to_owned(),
    }
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("listen", &self.listen)
            .field("data_dir", &self.data_dir)
            .field("database_url", &redact_url(&self.database_url))
            .field("public_url", &self.public_url)
            .field("default_tier", &self.default_tier)
            .field("log_format", &self.log_format)
            .field("limits", &self.limits)
            .field("rate_limits", &self.rate_limits)
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kiosk_pages_turn_every_15_s_unless_told_and_within_bounds() {
        let defaults = Settings::with_overrides(&[]).expect("defaults");
        assert_eq!(defaults.kiosk.page_secs, 15);
        let set = Settings::with_overrides(&["[kiosk]\npage_secs = 5"]).expect("5 s");
        assert_eq!(set.kiosk.page_secs, 5);
        for wrong in ["[kiosk]\npage_secs = 0", "[kiosk]\npage_secs = 3601"] {
            let refused = Settings::with_overrides(&[wrong])
                .expect_err(wrong)
                .to_string();
            assert!(refused.contains("kiosk.page_secs"), "{refused}");
        }
    }
}
