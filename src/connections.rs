//! Serving HTTP connections with limits on slow and idle clients (each connection holds a
//! file descriptor that live event streams need):
//!
//! - a request head must arrive within `http.header_timeout_secs` of its first byte;
//! - a connection with no request in flight and nothing arriving is closed after
//!   `http.idle_timeout_secs` (keep-alive);
//! - a request body that stalls (no byte for `http.body_stall_secs`) ends the request with
//!   408 `REQUEST_TIMEOUT` (the body layer is in [`crate::app::router`]).
//!
//! hyper's own header timeout also runs while a keep-alive connection waits for its next
//! request, so it can't tell the two apart; here each connection has a [`Watch`]: its socket
//! records when bytes arrive, the service records when requests start and their responses
//! end, and a watchdog closes the connection when either limit passes. A request in flight
//! (an event stream, a slow query) is never cut by these two limits.

use std::{
    future::Future,
    net::SocketAddr,
    pin::Pin,
    sync::{
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
        Arc,
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::{
    body::Body,
    extract::{ConnectInfo, Request},
    response::Response,
    Router,
};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::{conn::auto::Builder, graceful::GracefulShutdown},
    service::TowerToHyperService,
};
use serde::{Deserialize, Serialize};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::{TcpListener, TcpStream},
};
use tower::{Service, ServiceExt};

use crate::limits::OpenPerAddress;

/// `[http]` settings: limits on slow and idle connections.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct HttpSettings {
    /// Seconds a request head may take from its first byte.
    pub header_timeout_secs: u64,
    /// Seconds a connection may sit with no request in flight and nothing arriving. Behind
    /// a load balancer that keeps connections open, make this longer than its idle timeout.
    pub idle_timeout_secs: u64,
    /// Seconds a request body may go without a byte before the request ends (408).
    pub body_stall_secs: u64,
    /// Niceness (0-19) of the threads that serve event streams: above 0, a machine short of
    /// CPU runs requests first and pushes to viewers with what is left (see [`serve`]).
    pub stream_nice: i32,
    /// Connections one client address may hold open; behind a proxy, its requests in flight
    /// (see [`crate::limits::OpenPerAddress`]).
    pub max_connections_per_address: usize,
    /// Origins whose pages may call the API (CORS, see `api::cors`); `*` for any. Empty: no
    /// CORS headers at all.
    pub cors_origins: Vec<String>,
}

/// What a connection is doing, shared by its socket, its service and its watchdog.
struct Watch {
    start: Instant,
    /// Requests whose response hasn't finished.
    in_flight: AtomicUsize,
    /// When the connection last became idle (ms since `start`).
    idle_since: AtomicU64,
    /// When the first byte arrived since it became idle (ms since `start` + 1; 0: none).
    head_since: AtomicU64,
    /// An HTTP/1 response on it is an event stream: the connection moves to the stream
    /// threads.
    streaming: AtomicBool,
}

impl Watch {
    fn new() -> Arc<Watch> {
        Arc::new(Watch {
            start: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            head_since: AtomicU64::new(0),
            streaming: AtomicBool::new(false),
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn bytes_arrived(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0
            && self.head_since.load(Ordering::Acquire) == 0
        {
            self.head_since.store(self.now() + 1, Ordering::Release);
        }
    }

    fn request_started(&self) {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_since.store(0, Ordering::Release);
    }

    fn response_ended(&self) {
        self.idle_since.store(self.now(), Ordering::Release);
        self.head_since.store(0, Ordering::Release);
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// Whether the connection has outlived its limits.
    fn expired(&self, settings: &HttpSettings) -> bool {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return false;
        }
        let now = self.now();
        match self.head_since.load(Ordering::Acquire) {
            0 => {
                now.saturating_sub(self.idle_since.load(Ordering::Acquire))
                    > settings.idle_timeout_secs.saturating_mul(1000)
            }
            since => {
                now.saturating_sub(since - 1) > settings.header_timeout_secs.saturating_mul(1000)
            }
        }
    }
}

/// A socket that tells its [`Watch`] when bytes arrive.
struct Watched {
    stream: TcpStream,
    watch: Arc<Watch>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.watch.bytes_arrived();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Ends a request's stay in flight when its response body is done (or dropped).
struct InFlight(Arc<Watch>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.response_ended();
    }
}

/// A response body that holds `G` (its request's [`InFlight`], a place in a cap) until it
/// has been sent or dropped.
pub(crate) struct Tracked<G> {
    body: Body,
    _held: G,
}

impl<G> Tracked<G> {
    pub(crate) fn new(body: Body, held: G) -> Self {
        Tracked { body, _held: held }
    }
}

impl<G: Unpin + Send + 'static> http_body::Body for Tracked<G> {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A request whose body fails with a timeout once no byte has arrived for `stall` (the
/// body reader answers 408).
pub fn stall_limited(req: Request, stall: Duration) -> Request {
    req.map(|body| Body::new(tower_http::timeout::TimeoutBody::new(stall, body)))
}

/// Serves `app` on `listener` until `shutdown` resolves, then asks every connection to
/// finish its requests and waits for them; `stopping` is told when that begins. With
/// `per_peer`, each connection holds a place of its TCP peer's address from accept to close,
/// and one past the address's cap is closed at once.
///
/// A connection whose response is an event stream (HTTP/1) moves to threads of its own,
/// niced by `http.stream_nice`: every event is a write on each viewer's socket, and when
/// the machine is short of CPU those writes, not the requests, should wait. A viewer left
/// a buffer behind is ended and resumes from the log (see [`crate::events`]).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    settings: HttpSettings,
    per_peer: Option<Arc<OpenPerAddress>>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let streams = StreamThreads::start(settings.stream_nice)?;
    let graceful = GracefulShutdown::new();
    let settings = Arc::new(settings);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors and the like: wait a little rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let place = match &per_peer {
            Some(open) => match open.take(peer.ip()) {
                Some(place) => Some(place),
                None => {
                    tracing::debug!(%peer, "refused a connection: its address holds its cap");
                    continue;
                }
            },
            None => None,
        };
        let _ = stream.set_nodelay(true);
        let watch = Watch::new();
        let io = TokioIo::new(Watched {
            stream,
            watch: watch.clone(),
        });
        let service = connection_service(app.clone(), peer, watch.clone());
        let connection = Builder::new(TokioExecutor::new())
            .serve_connection_with_upgrades(io, TowerToHyperService::new(service))
            .into_owned();
        let connection = graceful.watch(connection);
        let settings = settings.clone();
        let guard = watch.clone();
        let served = async move {
            let _place = place;
            let watchdog = async {
                let mut tick = tokio::time::interval(Duration::from_millis(500));
                loop {
                    tick.tick().await;
                    if watch.expired(&settings) {
                        return;
                    }
                }
            };
            tokio::select! {
                result = connection => {
                    if let Err(e) = result {
                        tracing::trace!(error = %e, "connection ended with an error");
                    }
                }
                () = watchdog => tracing::debug!(%peer, "closed a slow or idle connection"),
            }
        };
        tokio::spawn(Handoff {
            served: Some(Box::pin(served)),
            watch: guard,
            streams: streams.handle(),
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// The runtime whose threads serve event streams.
struct StreamThreads {
    handle: tokio::runtime::Handle,
    /// Taken when dropped.
    runtime: Option<tokio::runtime::Runtime>,
}

impl StreamThreads {
    fn start(nice: i32) -> std::io::Result<StreamThreads> {
        let threads = std::thread::available_parallelism().map_or(2, usize::from);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("corkboard-streams")
            .on_thread_start(move || {
                if nice > 0 {
                    if let Err(e) = rustix::process::setpriority_process(None, nice.min(19)) {
                        tracing::warn!(error = %e, "could not lower the stream threads' priority");
                    }
                }
            })
            .enable_all()
            .build()?;
        Ok(StreamThreads {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        })
    }

    fn handle(&self) -> tokio::runtime::Handle {
        self.handle.clone()
    }
}

impl Drop for StreamThreads {
    fn drop(&mut self) {
        // Dropped inside the server's task, where a runtime may not block to stop.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A connection's task: moves the connection to the stream threads once a response on
/// it is an event stream.
struct Handoff<F> {
    served: Option<Pin<Box<F>>>,
    watch: Arc<Watch>,
    streams: tokio::runtime::Handle,
}

impl<F: Future<Output = ()> + Send + 'static> Future for Handoff<F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(served) = self.served.as_mut() else {
            return Poll::Ready(());
        };
        if served.as_mut().poll(cx).is_ready() {
            self.served = None;
            return Poll::Ready(());
        }
        if self.watch.streaming.load(Ordering::Acquire) {
            if let Some(served) = self.served.take() {
                self.streams.spawn(served);
            }
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

/// The router for one connection: its peer address as `ConnectInfo`, and its requests
/// reported to its [`Watch`].
fn connection_service(
    app: Router,
    peer: SocketAddr,
    watch: Arc<Watch>,
) -> impl Service<
    Request<hyper::body::Incoming>,
    Response = Response<Tracked<InFlight>>,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    tower::service_fn(move |mut req: Request<hyper::body::Incoming>| {
        let app = app.clone();
        let watch = watch.clone();
        async move {
            watch.request_started();
            let in_flight = InFlight(watch.clone());
            let http1 = req.version() < axum::http::Version::HTTP_2;
            req.extensions_mut().insert(ConnectInfo(peer));
            let response = app.oneshot(req.map(Body::new)).await?;
            if http1 && is_event_stream(&response) {
                watch.streaming.store(true, Ordering::Release);
            }
            Ok(response.map(|body| Tracked::new(body, in_flight)))
        }
    })
}

fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}
