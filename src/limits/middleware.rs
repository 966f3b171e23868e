//! The middleware on every API route: guard, authenticate, price, charge, and headers.

use std::{
    net::{IpAddr, SocketAddr},
    time::Duration,
};

use axum::{
    body::{Body, Bytes},
    extract::{ConnectInfo, MatchedPath, Request, State},
    http::{Extensions, HeaderMap, HeaderName, HeaderValue, Method},
    middleware::Next,
    response::{IntoResponse, Response},
};
use serde::de::IgnoredAny;

use super::{AddressGuard, Cost, FailureMode, Quota, Usage, Window, HOUR_MS, MINUTE_MS};
use crate::{
    app::AppState,
    auth::{self, Authenticated, Principal, Reuse},
    clock,
    error::Error,
    metrics::Limit,
    store::postgres::conn,
};

/// Batch routes and the array whose length prices them: `ceil(n / 10)` tokens.
const BATCH_ROUTES: &[(&str, &str)] = &[
    ("/pins/batch", "pins"),
    ("/pins/batch/get", "pin_ids"),
    ("/pins/batch/update", "pins"),
    ("/pins/batch/delete", "pin_ids"),
    ("/pins/batch/upsert", "pins"),
];
/// Routes that read although they are POSTs.
const READ_POSTS: &[&str] = &["/pins/batch/get"];
/// The MCP endpoint: priced per JSON-RPC message ([`mcp_cost`]).
const MCP_ROUTE: &str = "/mcp";
/// How long a body may take to arrive while its request holds a database connection.
const PROMPT_BODY: Duration = Duration::from_millis(5);

/// Authenticates the request's credential behind the brute-force guard: a presented
/// credential that fails counts against its client address, and an address past its
/// failures this minute has every further failing credential refused with 429 (not 401)
/// until the minute ends. A valid credential always passes, so one broken script behind a
/// NAT can't lock its whole team out. Share pages use it too.
pub(crate) async fn guarded_authenticate(
    state: &AppState,
    headers: &HeaderMap,
    extensions: &Extensions,
    reuse: Reuse,
) -> Result<Authenticated, Error> {
    let now = state.clock.now_ms();
    let guard = &state.settings.rate_limits.auth_failures;
    let client = client_address(headers, extensions, &guard.client_ip_header);
    let result = auth::authenticate(headers, state, reuse).await;
    let (Err(Error::Unauthorized | Error::InvalidToken), Some(addr)) = (&result, client) else {
        return result;
    };
    if let Some(window) = state.auth_guard.blocked(&addr, now, guard.per_minute) {
        state.metrics.refused(Limit::AuthFailures);
        return Err(Error::TooManyAuthFailures {
            limit: guard.per_minute,
            reset_at: window.start + MINUTE_MS,
            retry_after: retry_after(window.start + MINUTE_MS, now),
        });
    }
    if headers.contains_key(axum::http::header::AUTHORIZATION) {
        state.auth_guard.record(addr, now);
    }
    result
}

pub async fn enforce(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let now = state.clock.now_ms();
    let limits = &state.settings.rate_limits;
    let Authenticated {
        principal,
        unconfirmed,
    } = match guarded_authenticate(&state, req.headers(), req.extensions(), Reuse::Yes).await {
        Ok(authenticated) => authenticated,
        Err(e) => return e.into_response(),
    };
    let tier = principal.tier;
    req.extensions_mut().insert(principal.clone());

    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().trim_start_matches("/v1").to_owned())
        .unwrap_or_default();
    let (req, body) = match read_body(req, state.limits().body_bytes).await {
        Ok(read) => read,
        Err(e) => return e.into_response(),
    };
    let mcp = route == MCP_ROUTE;
    let cost = if mcp {
        mcp_cost(&body)
    } else if is_dry_run(req.uri().query()) {
        // A dry run writes nothing: one token, nothing of the write bucket (CONTRACT.md 14).
        Cost {
            tokens: 1,
            write: false,
        }
    } else {
        Cost {
            tokens: BATCH_ROUTES
                .iter()
                .find(|(path, _)| *path == route)
                .map_or(1, |(_, field)| batch_tokens(&body, field)),
            write: req.method() != Method::GET && !READ_POSTS.contains(&route.as_str()),
        }
    };
    let tier_limits = limits.tier(tier);
    let quota = Quota {
        per_minute: tier_limits.per_minute,
        per_hour: tier_limits.per_hour,
        write_capacity: limits.write_bucket.capacity,
        write_window_ms: i64::try_from(limits.write_bucket.window_secs.saturating_mul(1000))
            .unwrap_or(i64::MAX),
    };
    let timeout = Duration::from_millis(limits.timeout_ms);
    let usage = match state
        .limiter
        .check(principal.subject.id(), now, cost, &quota, timeout)
        .await
    {
        Ok(usage) => {
            state.set_limiter_healthy(true);
            usage
        }
        Err(e) => {
            state.set_limiter_healthy(false);
            tracing::warn!(error = %e, "rate limiter unavailable");
            return match limits.failure_mode {
                FailureMode::Open => match confirm(&state, req, unconfirmed, None).await {
                    Ok(req) => next.run(req).await,
                    Err(e) => e.into_response(),
                },
                FailureMode::Closed => Error::Unavailable.into_response(),
            };
        }
    };
    let mut req = match confirm(&state, req, unconfirmed, usage.auth_changes).await {
        Ok(req) => req,
        Err(e) => return e.into_response(),
    };
    let report = Report::new(&usage, cost, &quota);
    let mut response = if usage.granted {
        next.run(req).await
    } else {
        let (window, limit, used, reset_at) = report.refusal(&usage, cost, &quota);
        state.metrics.refused(Limit::of_window(window));
        let refusal = Error::RateLimited {
            window,
            limit,
            used,
            cost: cost.tokens,
            reset_at,
            retry_after: retry_after(reset_at, now),
            tier: tier.as_str(),
            upgrade_url: upgrade_url(&state),
        };
        if mcp {
            // A refused tool call is a tool result (`isError`), answered by the MCP handler.
            req.extensions_mut()
                .insert(crate::mcp::Refused(std::sync::Arc::new(refusal)));
            next.run(req).await
        } else {
            refusal.into_response()
        }
    };
    report.write(response.headers_mut());
    response
}

/// A principal kept on PostgreSQL serves only if no key, membership or role changed since it
/// was kept (`changes`: the count the rate-limit check read, in a statement that began after
/// this request arrived, so after any change it must see); else the key's rows are read again
/// and its principal replaces the kept one (a revoked key: 401).
async fn confirm(
    state: &AppState,
    mut req: Request,
    unconfirmed: Option<i64>,
    changes: Option<i64>,
) -> Result<Request, Error> {
    if unconfirmed.is_some() && unconfirmed != changes {
        let fresh =
            guarded_authenticate(state, req.headers(), req.extensions(), Reuse::Refresh).await?;
        req.extensions_mut().insert(fresh.principal);
    }
    Ok(req)
}

/// The client's address: from the trusted proxy's header when one is configured and sent,
/// else the TCP peer.
pub(crate) fn client_address(
    headers: &HeaderMap,
    extensions: &Extensions,
    proxy_header: &str,
) -> Option<IpAddr> {
    let forwarded = (!proxy_header.is_empty())
        .then(|| headers.get(proxy_header))
        .flatten()
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .and_then(|first| first.trim().parse().ok());
    forwarded.or_else(|| {
        extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip())
    })
}

fn upgrade_url(state: &AppState) -> String {
    let configured = &state.settings.rate_limits.upgrade_url;
    if configured.is_empty() {
        format!("{}/upgrade", state.public_base())
    } else {
        configured.clone()
    }
}

/// Counts a request to a page (a share page, a signed-in page, their fragments and
/// streams, the sign-in routes) against its client address's minute
/// (`rate_limits.share.per_minute`); 429 once the address has used it up.
pub(crate) fn count_share_request(
    state: &AppState,
    headers: &HeaderMap,
    extensions: &Extensions,
) -> Result<(), Error> {
    let limits = &state.settings.rate_limits;
    match client_address(headers, extensions, &limits.auth_failures.client_ip_header) {
        Some(addr) => count(state, &state.share_guard, addr),
        None => Ok(()),
    }
}

/// Charges one call to the hook `hook_id` against its minute (`hooks.per_minute`), in the
/// limiter every API key is counted in (on PostgreSQL, shared by all replicas). Past it: 429
/// `RATE_LIMIT_EXCEEDED` with `Retry-After`, the details of a key's minute window (a hook
/// has no tier of its own: `tier` is the configured default). A limiter that can't answer
/// is handled as for keys (`rate_limits.failure_mode`).
pub(crate) async fn count_hook_call(state: &AppState, hook_id: &str) -> Result<(), Error> {
    let now = state.clock.now_ms();
    let limits = &state.settings.rate_limits;
    let per_minute = state.settings.hooks.per_minute;
    let quota = Quota {
        per_minute,
        // Only the minute binds: the hour and the write bucket hold what a minute can.
        per_hour: per_minute.saturating_mul(60),
        write_capacity: per_minute,
        write_window_ms: MINUTE_MS,
    };
    let cost = Cost {
        tokens: 1,
        write: false,
    };
    let timeout = Duration::from_millis(limits.timeout_ms);
    let usage = match state
        .limiter
        .check(hook_id, now, cost, &quota, timeout)
        .await
    {
        Ok(usage) => {
            state.set_limiter_healthy(true);
            usage
        }
        Err(e) => {
            state.set_limiter_healthy(false);
            tracing::warn!(error = %e, "rate limiter unavailable");
            return match limits.failure_mode {
                FailureMode::Open => Ok(()),
                FailureMode::Closed => Err(Error::Unavailable),
            };
        }
    };
    if usage.granted {
        return Ok(());
    }
    state.metrics.refused(Limit::Hook);
    let reset_at = usage.minute.start + MINUTE_MS;
    Err(Error::RateLimited {
        window: "minute",
        limit: per_minute,
        used: usage.minute.used,
        cost: cost.tokens,
        reset_at,
        retry_after: retry_after(reset_at, now),
        tier: state.settings.default_tier.as_str(),
        upgrade_url: upgrade_url(state),
    })
}

/// Counts a signed-in page request against its user's minute (`rate_limits.share.per_minute`,
/// every session of the user together, besides its address's); 429 once used up.
pub(crate) fn count_user_request(state: &AppState, user: &Principal) -> Result<(), Error> {
    let key = format!("{}/{}", user.workspace_id, user.subject.id());
    count(state, &state.user_page_guard, key)
}

/// Counts one request of `key` in `guard` against `rate_limits.share.per_minute`.
fn count<K: std::hash::Hash + Eq>(
    state: &AppState,
    guard: &AddressGuard<K>,
    key: K,
) -> Result<(), Error> {
    let now = state.clock.now_ms();
    let per_minute = state.settings.rate_limits.share.per_minute;
    if let Some(window) = guard.blocked(&key, now, per_minute) {
        state.metrics.refused(Limit::Share);
        let reset_at = window.start + MINUTE_MS;
        return Err(Error::TooManyShareRequests {
            limit: per_minute,
            reset_at,
            retry_after: retry_after(reset_at, now),
        });
    }
    guard.record(key, now);
    Ok(())
}

fn retry_after(reset_at: i64, now: i64) -> u64 {
    u64::try_from((reset_at - now + 999) / 1000)
        .unwrap_or(0)
        .max(1)
}

/// Reads the request's body, if it has one, so that batches can be priced and the handler
/// parses it from memory. While it arrives promptly the request keeps its database
/// connection; a body still arriving after [`PROMPT_BODY`] is waited for without one, so slow
/// clients can't hold the pool.
async fn read_body(req: Request, limit: usize) -> Result<(Request, Bytes), Error> {
    if axum::body::HttpBody::size_hint(req.body()).exact() == Some(0) {
        return Ok((req, Bytes::new()));
    }
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, limit);
    tokio::pin!(read);
    let read = if conn::holds_connection() {
        match tokio::time::timeout(PROMPT_BODY, read.as_mut()).await {
            Ok(read) => read,
            Err(_) => {
                conn::release_request_connection();
                read.await
            }
        }
    } else {
        read.await
    };
    let bytes = read.map_err(|e| body_error(e, limit))?;
    Ok((Request::from_parts(parts, Body::from(bytes.clone())), bytes))
}

/// Why a body couldn't be read: too large (413), stalled (408), or cut off (400).
pub(crate) fn body_error(error: axum::Error, limit: usize) -> Error {
    let error = error.into_inner();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&*error);
    while let Some(e) = cause {
        if e.is::<http_body_util::LengthLimitError>() {
            return Error::PayloadTooLarge { limit };
        }
        if e.is::<tower_http::timeout::TimeoutError>() {
            return Error::RequestTimeout;
        }
        cause = e.source();
    }
    Error::validation("body", "a complete request body")
}

/// The price of an MCP message: a `tools/call` costs what the tool's REST route costs (a
/// write if it writes, `ceil(n / 10)` for a batch); the protocol's own messages
/// (`initialize`, `tools/list`, notifications) cost nothing.
fn mcp_cost(body: &[u8]) -> Cost {
    #[derive(serde::Deserialize)]
    struct Message {
        method: String,
        #[serde(default)]
        params: Option<Call>,
    }
    #[derive(serde::Deserialize)]
    struct Call {
        name: String,
        #[serde(default)]
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    }
    let free = Cost {
        tokens: 0,
        write: false,
    };
    let Ok(Message {
        method,
        params: Some(call),
    }) = serde_json::from_slice::<Message>(body)
    else {
        return free;
    };
    let Some(tool) = crate::mcp::tools::find(&call.name).filter(|_| method == "tools/call") else {
        return free;
    };
    let tokens = tool.batch_field.map_or(1, |field| {
        let n = call
            .arguments
            .as_ref()
            .and_then(|args| args.get(field))
            .and_then(serde_json::Value::as_array)
            .map_or(0, Vec::len);
        u32::try_from(n.div_ceil(10)).unwrap_or(u32::MAX).max(1)
    });
    Cost {
        tokens,
        write: tool.write,
    }
}

/// Whether the query asks for a dry run (`dry_run=true`).
fn is_dry_run(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .any(|(name, value)| name == "dry_run" && value == "true")
    })
}

/// A batch's price by its item count: `ceil(n / 10)` tokens. A body that can't be counted
/// costs 1; the handler then reports what is wrong with it.
fn batch_tokens(body: &[u8], field: &str) -> u32 {
    #[derive(serde::Deserialize)]
    struct Items {
        pins: Option<Vec<IgnoredAny>>,
        pin_ids: Option<Vec<IgnoredAny>>,
    }
    let items = serde_json::from_slice::<Items>(body)
        .ok()
        .and_then(|items| {
            if field == "pins" {
                items.pins
            } else {
                items.pin_ids
            }
        })
        .map_or(0, |items| items.len());
    u32::try_from(items.div_ceil(10)).unwrap_or(u32::MAX).max(1)
}

/// The seven `X-RateLimit-*` headers. For a write, the minute figures are those of whichever
/// binds sooner, the minute window or the write bucket, so the headers never promise a
/// request that would be refused.
struct Report {
    hour: (u32, u32, i64),
    minute: (u32, u32, i64),
    cost: u32,
}

impl Report {
    fn new(usage: &Usage, cost: Cost, quota: &Quota) -> Report {
        let remaining = |limit: u32, w: &Window| limit.saturating_sub(w.used);
        let hour = (
            quota.per_hour,
            remaining(quota.per_hour, &usage.hour),
            usage.hour.start + HOUR_MS,
        );
        let mut minute = (
            quota.per_minute,
            remaining(quota.per_minute, &usage.minute),
            usage.minute.start + MINUTE_MS,
        );
        if cost.write {
            let bucket = remaining(quota.write_capacity, &usage.write);
            if bucket < minute.1 {
                minute = (
                    quota.write_capacity,
                    bucket,
                    usage.write.start + quota.write_window_ms,
                );
            }
        }
        Report {
            hour,
            minute,
            cost: cost.tokens,
        }
    }

    /// The window that refused the request (the one that frees up last, if several did).
    fn refusal(&self, usage: &Usage, cost: Cost, quota: &Quota) -> (&'static str, u32, u32, i64) {
        let write_tokens = cost.write_tokens();
        let candidates = [
            (
                "minute",
                quota.per_minute,
                usage.minute.used,
                cost.tokens,
                usage.minute.start + MINUTE_MS,
            ),
            (
                "hour",
                quota.per_hour,
                usage.hour.used,
                cost.tokens,
                usage.hour.start + HOUR_MS,
            ),
            (
                "write",
                quota.write_capacity,
                usage.write.used,
                write_tokens,
                usage.write.start + quota.write_window_ms,
            ),
        ];
        candidates
            .into_iter()
            .filter(|(_, limit, used, tokens, _)| used + tokens > *limit)
            .max_by_key(|(.., reset)| *reset)
            .map(|(name, limit, used, _, reset)| (name, limit, used, reset))
            .unwrap_or(("minute", quota.per_minute, usage.minute.used, self.minute.2))
    }

    fn write(&self, headers: &mut HeaderMap) {
        let mut set = |name: &'static str, value: String| {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(HeaderName::from_static(name), value);
            }
        };
        set("x-ratelimit-limit-hour", self.hour.0.to_string());
        set("x-ratelimit-remaining-hour", self.hour.1.to_string());
        set("x-ratelimit-reset-hour", clock::iso(self.hour.2));
        set("x-ratelimit-limit-minute", self.minute.0.to_string());
        set("x-ratelimit-remaining-minute", self.minute.1.to_string());
        set("x-ratelimit-reset-minute", clock::iso(self.minute.2));
        set("x-ratelimit-token-cost", self.cost.to_string());
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::body::{Body, Bytes};

    use super::body_error;
    use crate::error::Error;

    /// The code of the error a body that can't be read with `limit` is answered with.
    async fn code_of(body: Body, limit: usize) -> &'static str {
        let error = axum::body::to_bytes(body, limit)
            .await
            .expect_err("the body can't be read");
        body_error(error, limit).code()
    }

    #[tokio::test]
    async fn every_way_a_body_fails_is_a_listed_code() {
        let stalled = Body::new(tower_http::timeout::TimeoutBody::new(
            Duration::from_millis(1),
            Body::from_stream(futures_util::stream::pending::<Result<Bytes, std::io::Error>>()),
        ));
        let cut_off = Body::from_stream(futures_util::stream::once(async {
            Err::<Bytes, _>(std::io::Error::other("connection reset"))
        }));
        let codes = [
            code_of(stalled, 100).await,
            code_of(Body::from("too long"), 1).await,
            code_of(cut_off, 100).await,
        ];
        assert_eq!(
            codes,
            ["REQUEST_TIMEOUT", "PAYLOAD_TOO_LARGE", "VALIDATION_FAILED"]
        );
        for code in codes {
            assert!(Error::CODES.contains(&code), "{code}");
        }
    }
}
