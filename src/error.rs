//! The one error type of the crate and its HTTP envelope
//! `{"success": false, "error": {"code", "message", "details"?}}`.

use axum::{
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Serialize;
use serde_json::{json, Value};

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an [`Error::Internal`] happened: an error with its sources, or a message. Logged with
/// its chain of sources, never sent.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Every way a request can fail, each with a stable code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{message}")]
    Validation {
        message: String,
        field: String,
        expected: String,
        index: Option<usize>,
    },
    #[error("{message}")]
    PinConfigInvalid {
        message: String,
        field: String,
        expected: String,
        index: Option<usize>,
    },
    #[error("missing or invalid credential")]
    Unauthorized,
    /// A bearer credential was sent and refused (unknown, revoked, expired, bad signature).
    #[error("missing or invalid credential")]
    InvalidToken,
    #[error("{0}")]
    Forbidden(String),
    #[error("this operation requires the scope `{0}`")]
    ScopeRequired(&'static str),
    #[error("{what} not found")]
    NotFound {
        what: &'static str,
        index: Option<usize>,
    },
    #[error("method not allowed on this path")]
    MethodNotAllowed,
    #[error("{0}")]
    Conflict(String),
    /// A unique value (a pin's `key`) that another resource holds: 409 `CONFLICT` naming
    /// the field.
    #[error("{message}")]
    Taken {
        message: String,
        field: String,
        index: Option<usize>,
    },
    #[error("the resource changed since it was read (If-Match does not match version {current})")]
    PreconditionFailed { current: i64 },
    #[error("request body is larger than {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// The request body stopped arriving (`http.body_stall_secs` without a byte).
    #[error("the request body stopped arriving; send it without pauses")]
    RequestTimeout,
    #[error("request body must be JSON (Content-Type: application/json)")]
    UnsupportedMediaType,
    #[error("rate limit exceeded: {used} of {limit} tokens used this {window}; this request costs {cost}")]
    RateLimited {
        window: &'static str,
        limit: u32,
        used: u32,
        cost: u32,
        reset_at: i64,
        retry_after: u64,
        tier: &'static str,
        upgrade_url: String,
    },
    #[error("too many failed authentications from this address; retry after {retry_after} s")]
    TooManyAuthFailures {
        limit: u32,
        reset_at: i64,
        retry_after: u64,
    },
    #[error("too many requests to share pages from this address; retry after {retry_after} s")]
    TooManyShareRequests {
        limit: u32,
        reset_at: i64,
        retry_after: u64,
    },
    #[error("too many open event streams for this {per} (at most {limit})")]
    TooManyStreams { limit: u32, per: &'static str },
    #[error("too many open connections from this address (at most {limit})")]
    TooManyConnections { limit: u32 },
    #[error("the store is unavailable; retry shortly")]
    Unavailable,
    #[error("internal error")]
    Internal(#[source] Cause),
}

impl Error {
    /// An `INTERNAL_ERROR` caused by `cause` (an error, kept with its sources, or a message).
    pub fn internal(cause: impl Into<Cause>) -> Self {
        Error::Internal(cause.into())
    }

    /// An `INTERNAL_ERROR` caused by `cause` while doing `what` (`migrating`, `stored JSON`).
    pub fn internal_in(what: impl Into<String>, cause: impl Into<Cause>) -> Self {
        Error::internal(In {
            what: what.into(),
            cause: cause.into(),
        })
    }

    /// A `VALIDATION_FAILED` for `field`.
    pub fn validation(field: impl Into<String>, expected: impl Into<String>) -> Self {
        let field = field.into();
        let expected = expected.into();
        Error::Validation {
            message: format!("invalid `{field}`: expected {expected}"),
            field,
            expected,
            index: None,
        }
    }

    /// A `CONFLICT` on `field`, whose value another resource already holds.
    pub fn taken(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Taken {
            message: message.into(),
            field: field.into(),
            index: None,
        }
    }

    /// Marks the error as belonging to item `index` of a batch.
    pub fn at_index(self, i: usize) -> Self {
        match self {
            Error::Validation {
                message,
                field,
                expected,
                ..
            } => Error::Validation {
                message: format!("item {i}: {message}"),
                field,
                expected,
                index: Some(i),
            },
            Error::PinConfigInvalid {
                message,
                field,
                expected,
                ..
            } => Error::PinConfigInvalid {
                message: format!("item {i}: {message}"),
                field,
                expected,
                index: Some(i),
            },
            Error::NotFound { what, .. } => Error::NotFound {
                what,
                index: Some(i),
            },
            Error::Taken { message, field, .. } => Error::Taken {
                message: format!("item {i}: {message}"),
                field,
                index: Some(i),
            },
            other => other,
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Error::Validation { .. } | Error::PinConfigInvalid { .. } => StatusCode::BAD_REQUEST,
            Error::Unauthorized | Error::InvalidToken => StatusCode::UNAUTHORIZED,
            Error::Forbidden(_) | Error::ScopeRequired(_) => StatusCode::FORBIDDEN,
            Error::NotFound { .. } => StatusCode::NOT_FOUND,
            Error::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Error::Conflict(_) | Error::Taken { .. } => StatusCode::CONFLICT,
            Error::PreconditionFailed { .. } => StatusCode::PRECONDITION_FAILED,
            Error::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Error::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Error::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Error::RateLimited { .. }
            | Error::TooManyAuthFailures { .. }
            | Error::TooManyShareRequests { .. }
            | Error::TooManyStreams { .. }
            | Error::TooManyConnections { .. } => StatusCode::TOO_MANY_REQUESTS,
            Error::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// Every code [`Error::code`] can return (the API description lists them).
    pub const CODES: [&'static str; 15] = [
        "VALIDATION_FAILED",
        "PIN_CONFIG_INVALID",
        "UNAUTHORIZED",
        "FORBIDDEN",
        "SCOPE_REQUIRED",
        "NOT_FOUND",
        "METHOD_NOT_ALLOWED",
        "CONFLICT",
        "PRECONDITION_FAILED",
        "PAYLOAD_TOO_LARGE",
        "REQUEST_TIMEOUT",
        "UNSUPPORTED_MEDIA_TYPE",
        "RATE_LIMIT_EXCEEDED",
        "SERVICE_UNAVAILABLE",
        "INTERNAL_ERROR",
    ];

    pub fn code(&self) -> &'static str {
        match self {
            Error::Validation { .. } => "VALIDATION_FAILED",
            Error::PinConfigInvalid { .. } => "PIN_CONFIG_INVALID",
            Error::Unauthorized | Error::InvalidToken => "UNAUTHORIZED",
            Error::Forbidden(_) => "FORBIDDEN",
            Error::ScopeRequired(_) => "SCOPE_REQUIRED",
            Error::NotFound { .. } => "NOT_FOUND",
            Error::MethodNotAllowed => "METHOD_NOT_ALLOWED",
            Error::Conflict(_) | Error::Taken { .. } => "CONFLICT",
            Error::PreconditionFailed { .. } => "PRECONDITION_FAILED",
            Error::PayloadTooLarge { .. } => "PAYLOAD_TOO_LARGE",
            Error::RequestTimeout => "REQUEST_TIMEOUT",
            Error::UnsupportedMediaType => "UNSUPPORTED_MEDIA_TYPE",
            Error::RateLimited { .. }
            | Error::TooManyAuthFailures { .. }
            | Error::TooManyShareRequests { .. }
            | Error::TooManyStreams { .. }
            | Error::TooManyConnections { .. } => "RATE_LIMIT_EXCEEDED",
            Error::Unavailable => "SERVICE_UNAVAILABLE",
            Error::Internal(_) => "INTERNAL_ERROR",
        }
    }

    fn details(&self) -> Option<Value> {
        match self {
            Error::Validation {
                field,
                expected,
                index,
                ..
            }
            | Error::PinConfigInvalid {
                field,
                expected,
                index,
                ..
            } => {
                let mut d = json!({ "field": field, "expected": expected });
                if let Some(i) = index {
                    d["index"] = json!(i);
                }
                Some(d)
            }
            Error::Taken { field, index, .. } => {
                let mut d = json!({ "field": field });
                if let Some(i) = index {
                    d["index"] = json!(i);
                }
                Some(d)
            }
            Error::ScopeRequired(scope) => Some(json!({ "required_scope": scope })),
            Error::NotFound { index: Some(i), .. } => Some(json!({ "index": i })),
            Error::PreconditionFailed { current } => Some(json!({ "current_version": current })),
            Error::PayloadTooLarge { limit } => Some(json!({ "limit_bytes": limit })),
            Error::RateLimited {
                window,
                limit,
                used,
                reset_at,
                tier,
                upgrade_url,
                ..
            } => Some(json!({
                "limit": limit,
                "used": used,
                "window": window,
                "resetAt": crate::clock::iso(*reset_at),
                "tier": tier,
                "upgrade_url": upgrade_url,
            })),
            Error::TooManyStreams { limit, per } => Some(json!({
                "limit": limit,
                "window": "streams",
                "per": per,
            })),
            Error::TooManyConnections { limit } => Some(json!({
                "limit": limit,
                "window": "connections",
                "per": "address",
            })),
            Error::TooManyShareRequests {
                limit, reset_at, ..
            } => Some(json!({
                "limit": limit,
                "window": "share",
                "resetAt": crate::clock::iso(*reset_at),
            })),
            Error::TooManyAuthFailures {
                limit, reset_at, ..
            } => Some(json!({
                "limit": limit,
                "window": "auth_failures",
                "resetAt": crate::clock::iso(*reset_at),
            })),
            _ => None,
        }
    }

    /// The envelope body of this error, as JSON text.
    pub fn body(&self) -> String {
        serde_json::to_string(&ErrorEnvelope {
            success: false,
            error: ErrorBody {
                code: self.code(),
                message: self.to_string(),
                details: self.details(),
            },
        })
        .unwrap_or_default()
    }
}

/// Field order as documented: `success`, then `error` with `code`, `message`, `details`.
#[derive(Serialize)]
struct ErrorEnvelope {
    success: bool,
    error: ErrorBody,
}

#[derive(Serialize)]
struct ErrorBody {
    code: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<Value>,
}

/// Only maps the error: whether the request's PostgreSQL connection must be checked before
/// reuse is decided where the store hands its results out
/// ([`crate::store::postgres::conn::note_error`]).
impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                tracing::warn!(error = %e, "store unavailable");
                Error::Unavailable
            }
            sqlx::Error::Database(db) if is_busy(db.code().as_deref()) => {
                tracing::warn!(error = %db, "store busy");
                Error::Unavailable
            }
            sqlx::Error::Database(db) if is_pin_key_taken(&*db) => {
                Error::taken("key", "another pin of this workspace has this key")
            }
            other => Error::internal(other),
        }
    }
}

/// A write met the unique index on pins' keys (`pins_workspace_key`): PostgreSQL names the
/// index, SQLite the columns. However a pin write reaches the store (a create of any path, an
/// update, an upsert), a taken key is the caller's 409, decided by the index, never by a read
/// that a concurrent write could outdate.
fn is_pin_key_taken(db: &dyn sqlx::error::DatabaseError) -> bool {
    matches!(db.code().as_deref(), Some("2067" | "23505"))
        && (db.constraint() == Some("pins_workspace_key")
            || db.message().contains("pins.workspace_id, pins.key"))
}

/// SQLite's BUSY/LOCKED and PostgreSQL's connection-class and shutdown codes.
fn is_busy(code: Option<&str>) -> bool {
    matches!(code, Some("5" | "6" | "517" | "57P01" | "57P03"))
        || code.is_some_and(|c| c.starts_with("08"))
}

/// What was being done when `cause` happened: logged as `what: cause`.
#[derive(Debug, thiserror::Error)]
#[error("{what}")]
struct In {
    what: String,
    #[source]
    cause: Cause,
}

/// An error and each of its sources, `: ` between them.
struct Chain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

impl Error {
    /// Logs an `INTERNAL_ERROR`'s cause chain, once, in the current span (the request's);
    /// other errors are the caller's and aren't logged.
    pub(crate) fn log_if_internal(&self, what: &'static str) {
        if let Error::Internal(cause) = self {
            tracing::error!(cause = %Chain(&**cause), "{what}");
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        self.log_if_internal("request failed");
        let body = self.body();
        let mut response = (
            self.status(),
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response();
        let retry_after = match &self {
            Error::Unavailable => Some(1),
            Error::RateLimited { retry_after, .. }
            | Error::TooManyAuthFailures { retry_after, .. }
            | Error::TooManyShareRequests { retry_after, .. } => Some(*retry_after),
            Error::TooManyStreams { .. } | Error::TooManyConnections { .. } => Some(1),
            _ => None,
        };
        if let Some(secs) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        // RFC 6750: the scheme to use, and why the one sent was refused.
        let challenge = match &self {
            Error::Unauthorized => Some("Bearer"),
            Error::InvalidToken => Some("Bearer error=\"invalid_token\""),
            _ => None,
        };
        if let Some(challenge) = challenge {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::{Chain, Error};

    /// One error of each variant ([`variant`] keeps the list complete).
    fn one_of_each() -> Vec<Error> {
        vec![
            Error::validation("f", "x"),
            Error::PinConfigInvalid {
                message: String::new(),
                field: String::new(),
                expected: String::new(),
                index: None,
            },
            Error::Unauthorized,
            Error::InvalidToken,
            Error::Forbidden(String::new()),
            Error::ScopeRequired("pins:read"),
            Error::NotFound {
                what: "pin",
                index: None,
            },
            Error::MethodNotAllowed,
            Error::Conflict(String::new()),
            Error::taken("key", ""),
            Error::PreconditionFailed { current: 1 },
            Error::PayloadTooLarge { limit: 1 },
            Error::RequestTimeout,
            Error::UnsupportedMediaType,
            Error::RateLimited {
                window: "minute",
                limit: 1,
                used: 1,
                cost: 1,
                reset_at: 0,
                retry_after: 1,
                tier: "starter",
                upgrade_url: String::new(),
            },
            Error::TooManyAuthFailures {
                limit: 1,
                reset_at: 0,
                retry_after: 1,
            },
            Error::TooManyShareRequests {
                limit: 1,
                reset_at: 0,
                retry_after: 1,
            },
            Error::TooManyStreams {
                limit: 1,
                per: "workspace",
            },
            Error::TooManyConnections { limit: 1 },
            Error::Unavailable,
            Error::internal(""),
        ]
    }

    /// How many variants [`Error`] has.
    const VARIANTS: usize = 21;

    /// The variant's position: a new variant doesn't compile until it is numbered here, and
    /// [`one_of_each_variant_is_listed`] fails until [`one_of_each`] has one.
    fn variant(error: &Error) -> usize {
        match error {
            Error::Validation { .. } => 0,
            Error::PinConfigInvalid { .. } => 1,
            Error::Unauthorized => 2,
            Error::InvalidToken => 3,
            Error::Forbidden(_) => 4,
            Error::ScopeRequired(_) => 5,
            Error::NotFound { .. } => 6,
            Error::MethodNotAllowed => 7,
            Error::Conflict(_) => 8,
            Error::PreconditionFailed { .. } => 9,
            Error::PayloadTooLarge { .. } => 10,
            Error::RequestTimeout => 11,
            Error::UnsupportedMediaType => 12,
            Error::RateLimited { .. } => 13,
            Error::TooManyAuthFailures { .. } => 14,
            Error::TooManyShareRequests { .. } => 15,
            Error::TooManyStreams { .. } => 16,
            Error::TooManyConnections { .. } => 17,
            Error::Unavailable => 18,
            Error::Internal(_) => 19,
            Error::Taken { .. } => 20,
        }
    }

    #[test]
    fn one_of_each_variant_is_listed() {
        let mut listed: Vec<usize> = one_of_each().iter().map(variant).collect();
        listed.sort_unstable();
        listed.dedup();
        assert_eq!(listed, (0..VARIANTS).collect::<Vec<_>>());
    }

    #[test]
    fn every_code_is_listed_for_the_api_description() {
        let all = one_of_each();
        for error in &all {
            assert!(Error::CODES.contains(&error.code()), "{}", error.code());
        }
        for code in Error::CODES {
            assert!(
                all.iter().any(|e| e.code() == code),
                "{code} is never returned"
            );
        }
    }

    #[test]
    fn an_internal_error_keeps_its_cause_for_the_log_only() {
        let cause = std::io::Error::other("disk on fire");
        let error = Error::internal(cause);
        assert_eq!(error.code(), "INTERNAL_ERROR");
        assert!(!error.body().contains("disk on fire"), "{}", error.body());
        let source = std::error::Error::source(&error).expect("a source");
        assert_eq!(Chain(source).to_string(), "disk on fire");
    }

    #[test]
    fn converting_a_database_error_keeps_it_as_the_cause() {
        let error = Error::from(sqlx::Error::RowNotFound);
        let Error::Internal(cause) = &error else {
            panic!("{error:?}");
        };
        assert!(cause.downcast_ref::<sqlx::Error>().is_some());
        assert!(matches!(
            Error::from(sqlx::Error::PoolTimedOut),
            Error::Unavailable
        ));
    }
}
