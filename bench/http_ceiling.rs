//! The HTTP ceiling for the benchmarks: an axum handler that returns a fixed JSON body, built
//! with the same profile as the service. `http_ceiling 127.0.0.1:18090`

use axum::{http::header, routing::any, Router};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18090".into());
    let body = r#"{"success":true,"data":{"pin_id":"p-0000000000000000000000","version":1}}"#;
    let app = Router::new().fallback(any(move || async move {
        ([(header::CONTENT_TYPE, "application/json")], body)
    }));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    axum::serve(listener, app).await
}
