//! `/mcp`: the Model Context Protocol endpoint for agents (CONTRACT.md 10), over the
//! Streamable HTTP transport of the official Rust SDK (`rmcp`), stateless: every request
//! stands alone, so any replica answers any request and a load balancer needs no affinity.
//!
//! The HTTP request passes the same middleware as every API route first
//! ([`crate::limits::enforce`]): the bearer credential (401 without one), the brute-force
//! guard, and the rate limits, priced per tool exactly as the tool's REST route
//! ([`tools::ToolSpec`]), with the `X-RateLimit-*` headers on the response. A call the
//! limits refuse reaches the handler as a [`Refused`] and becomes a tool error, so nothing
//! is written. Each tool then calls its REST route's operation ([`tools`]).

pub mod tools;

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    http::{header, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
    Router,
};
use rmcp::{
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        session::never::NeverSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    },
    ErrorData, RoleServer, ServerHandler,
};
use serde_json::{json, Value};

use crate::{app::AppState, auth::Principal, error::Error};

/// A tool call the rate limits refused, handed to the handler so that it answers with the
/// `RATE_LIMIT_EXCEEDED` tool error (the middleware has already written the headers).
#[derive(Clone)]
pub struct Refused(pub Arc<Error>);

/// The MCP server: the tools over the application state.
#[derive(Clone)]
struct Corkboard {
    state: AppState,
}

/// The `/mcp` route, behind the API middleware like every `/v1` route.
pub fn routes(state: AppState) -> Router<AppState> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .disable_allowed_hosts();
    let service = StreamableHttpService::new(
        move || {
            Ok(Corkboard {
                state: state.clone(),
            })
        },
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .layer(axum::middleware::map_response(enveloped))
}

/// Refuses a request whose `Origin` is present and is not this server's (its public base
/// URL's origin) with the 403 envelope, as the MCP specification asks of servers: a page of
/// another site, even one whose name was rebound to this address (DNS rebinding), can't
/// drive the tools from a visitor's browser. Agents send no `Origin`.
pub async fn same_origin(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(origin) = request.headers().get(header::ORIGIN) else {
        return next.run(request).await;
    };
    let own = url::Url::parse(state.public_base()).map(|u| u.origin().ascii_serialization());
    match (origin.to_str(), own) {
        (Ok(origin), Ok(own)) if origin.eq_ignore_ascii_case(&own) => next.run(request).await,
        _ => Error::Forbidden(format!(
            "requests from another origin are refused (Origin must be {} or absent)",
            state.public_base()
        ))
        .into_response(),
    }
}

/// The transport's own refusals (plain text from rmcp) as the error envelope every other
/// route answers with (CONTRACT.md 1).
async fn enveloped(response: Response) -> Response {
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || json {
        return response;
    }
    let allow = response.headers().get(header::ALLOW).cloned();
    let text = axum::body::to_bytes(response.into_body(), 4096)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let error = match status {
        StatusCode::METHOD_NOT_ALLOWED => Error::MethodNotAllowed,
        StatusCode::UNSUPPORTED_MEDIA_TYPE if text.starts_with("fail to deserialize") => {
            Error::validation("body", "one JSON-RPC 2.0 message (an object)")
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => Error::UnsupportedMediaType,
        StatusCode::NOT_ACCEPTABLE => {
            Error::validation("Accept", "both application/json and text/event-stream")
        }
        s if s.is_server_error() => Error::internal(text),
        _ if text.contains("MCP-Protocol-Version") => Error::validation(
            "MCP-Protocol-Version",
            "a protocol version this server speaks",
        ),
        _ => Error::validation("body", text.trim().to_owned()),
    };
    let mut response = error.into_response();
    if let Some(allow) = allow {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
}

/// A tool result for an error: `isError` with the REST error object as structured content.
fn tool_error(error: &Error) -> CallToolResult {
    let object = serde_json::from_str::<Value>(&error.body())
        .ok()
        .and_then(|mut body| body.get_mut("error").map(Value::take))
        .unwrap_or_else(|| json!({"code": error.code(), "message": error.to_string()}));
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
        "{}: {error}",
        error.code()
    ))]);
    result.structured_content = Some(object);
    result
}

/// A short text for clients that show text: what the tool returned, by id or count.
fn summary(tool: &str, data: &Value) -> String {
    if let Some(id) = data.get("id").and_then(Value::as_str) {
        return format!("{tool}: {id}");
    }
    match data.get("data").and_then(Value::as_array) {
        Some(items) => format!("{tool}: {} item(s)", items.len()),
        None => format!("{tool}: done"),
    }
}

impl ServerHandler for Corkboard {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("corkboard", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Corkboard: push typed pins (stat cards, charts, tables, markdown, ...) onto \
                 pinboards people watch. Start with list_pin_types, then create_pin.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tools::TOOLS
            .iter()
            .map(|t| Tool::new(t.name, t.description, t.input_schema()))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = tools::find(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        };
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let extension = |parts: Option<&axum::http::request::Parts>| {
            parts.and_then(|p| p.extensions.get::<Principal>().cloned())
        };
        if let Some(Refused(error)) = parts.and_then(|p| p.extensions.get::<Refused>()) {
            return Ok(tool_error(error).into());
        }
        let Some(who) = extension(parts) else {
            return Ok(tool_error(&Error::Unauthorized).into());
        };
        let arguments = request.arguments.unwrap_or_default();
        let result = match tool.call(&self.state, who, arguments).await {
            Ok(data) => {
                let mut result =
                    CallToolResult::success(vec![ContentBlock::text(summary(tool.name, &data))]);
                result.structured_content = Some(data);
                result
            }
            Err(error) => {
                error.log_if_internal("tool failed");
                tool_error(&error)
            }
        };
        Ok(result.into())
    }
}
