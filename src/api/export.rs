//! `GET /export` (scope `*`): the caller's workspace as the archive `corkboard export`
//! writes (CONTRACT.md 18), streamed as it is read, so the server holds a page of rows and
//! a chunk of output at a time however large the workspace. The archive holds no secret.

use aide::{
    axum::{routing::get_with, ApiRouter},
    generate::GenContext,
    openapi::{MediaType, Operation, Response as AideResponse},
    OperationOutput,
};
use axum::{
    body::{Body, Bytes},
    extract::State,
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
};
use futures_util::StreamExt as _;
use tokio::sync::mpsc;

use crate::{
    app::AppState,
    auth::{AllScopes, Auth},
    error::{Error, Result},
    transfer::{self, Progress, Sink},
};

pub fn routes() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/export",
        get_with(export, |op| {
            op.summary("Download the workspace's archive (no keys, sessions or hook secrets)")
                .tag("operating")
                .id("exportWorkspace")
        }),
    )
}

/// Chunks of about 64 KiB waiting for a slow client, at most.
const QUEUED_CHUNKS: usize = 4;

async fn export(State(state): State<AppState>, auth: Auth<AllScopes>) -> Result<Archive> {
    let (tx, mut rx) = mpsc::channel(QUEUED_CHUNKS);
    let ws = auth.principal.workspace_id;
    let store = state.store.clone();
    tokio::spawn(async move {
        let mut sink = Chunks(tx.clone());
        let by_id = transfer::Workspace::Id(&ws);
        if let Err(e) = transfer::export(&store, by_id, &mut sink, &Progress::none()).await {
            // Before the first chunk the handler answers the error; after it, the body
            // ends broken, so the client can't mistake a cut archive for a whole one.
            tracing::error!(error = %e, source = ?std::error::Error::source(&e), "export failed");
            let _ = tx.send(Err(e)).await;
        }
    });
    let first = match rx.recv().await {
        Some(Ok(first)) => first,
        Some(Err(e)) => return Err(e),
        None => return Err(Error::internal("the export ended without output")),
    };
    let rest =
        tokio_stream(rx).map(|chunk| chunk.map_err(|_| std::io::Error::other("export failed")));
    let body =
        futures_util::stream::once(async move { Ok::<_, std::io::Error>(first) }).chain(rest);
    Ok(Archive(Body::from_stream(body)))
}

/// The receiver as a stream of its messages.
fn tokio_stream<T: Send + 'static>(
    rx: mpsc::Receiver<Result<T>>,
) -> impl futures_util::Stream<Item = Result<T>> {
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) })
}

/// The export's output, handed to the response a chunk at a time.
struct Chunks(mpsc::Sender<Result<Bytes>>);

impl Sink for Chunks {
    async fn put(&mut self, chunk: Vec<u8>) -> Result<()> {
        self.0
            .send(Ok(Bytes::from(chunk)))
            .await
            .map_err(|_| Error::internal("the client went away during the export"))
    }
}

/// The archive's response: JSON, to be saved as a file.
struct Archive(Body);

impl IntoResponse for Archive {
    fn into_response(self) -> Response {
        let name = format!(
            "attachment; filename=\"corkboard-export-{}.json\"",
            &crate::clock::iso(crate::clock::now_ms())[..10]
        );
        (
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                ),
                (
                    header::CONTENT_DISPOSITION,
                    HeaderValue::from_str(&name).unwrap_or(HeaderValue::from_static("attachment")),
                ),
                (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            self.0,
        )
            .into_response()
    }
}

impl OperationOutput for Archive {
    type Inner = Self;

    fn inferred_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<u16>, AideResponse)> {
        let object = ctx
            .schema
            .subschema_for::<serde_json::Map<String, serde_json::Value>>();
        let archive = AideResponse {
            description: "The archive (`Content-Disposition: attachment`), streamed: \
                `format` (`corkboard-export`), `version` (1), `workspace`, `exported_at`, then \
                the arrays `users`, `members`, `roles`, `pins`, `pinboards`, `placements`, \
                `collaborators`, `datasets`, `blocks`, `hooks` (no token or secret) and \
                `webhooks` (no signing secret). `corkboard import` restores it"
                .to_owned(),
            content: [(
                "application/json".to_owned(),
                MediaType {
                    schema: Some(aide::openapi::SchemaObject {
                        json_schema: object,
                        example: None,
                        external_docs: None,
                    }),
                    ..Default::default()
                },
            )]
            .into_iter()
            .collect(),
            ..Default::default()
        };
        vec![(Some(200), archive)]
    }
}
