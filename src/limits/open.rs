//! `http.max_connections_per_address`: what one client address may hold open at once.
//!
//! Where the address is known decides what is counted. Without `client_ip_header` the
//! address is the TCP peer, known at accept: each connection is counted from accept to close,
//! idle ones included, and one past the cap is closed at once, before a byte is read (a 429
//! would need its request, and the connection would hold a descriptor while waiting for one).
//! Behind a proxy every connection comes from the proxy, which may carry any number of
//! clients, so connections aren't counted; each request in flight is counted against the
//! address the header names (an event stream until it ends), and one past the cap is answered
//! 429 ([`count_in_flight`]).

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex},
};

use axum::{
    body::Body,
    extract::{Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::{
    app::AppState,
    connections::Tracked,
    error::Error,
    metrics::{Limit, Metrics},
};

/// Open connections (or requests in flight) per client address.
pub struct OpenPerAddress {
    limit: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
    metrics: Arc<Metrics>,
}

impl OpenPerAddress {
    pub fn new(limit: usize, metrics: Arc<Metrics>) -> Arc<OpenPerAddress> {
        Arc::new(OpenPerAddress {
            limit,
            open: Mutex::default(),
            metrics,
        })
    }

    /// A place for one more of `ip`'s, held until dropped; `None` when `ip` holds the cap.
    pub fn take(self: &Arc<Self>, ip: IpAddr) -> Option<Place> {
        let mut open = self.open.lock().ok()?;
        let count = open.entry(ip).or_default();
        if *count >= self.limit {
            self.metrics.refused(Limit::Connections);
            return None;
        }
        *count += 1;
        Some(Place {
            of: self.clone(),
            ip,
        })
    }

    fn refusal(&self) -> Error {
        Error::TooManyConnections {
            limit: u32::try_from(self.limit).unwrap_or(u32::MAX),
        }
    }
}

/// One counted connection or request of an address.
pub struct Place {
    of: Arc<OpenPerAddress>,
    ip: IpAddr,
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Ok(mut open) = self.of.open.lock() {
            if let Some(count) = open.get_mut(&self.ip) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    open.remove(&self.ip);
                }
            }
        }
    }
}

/// Behind a proxy (`client_ip_header` set): counts the request, until its response body
/// ends, against the client address; 429 past the cap. Without the header connections are
/// counted at accept instead ([`crate::connections::serve`]).
pub(crate) async fn count_in_flight(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let header = &state.settings.rate_limits.auth_failures.client_ip_header;
    if header.is_empty() {
        return next.run(req).await;
    }
    let Some(ip) = super::client_address(req.headers(), req.extensions(), header) else {
        return next.run(req).await;
    };
    let Some(place) = state.open_per_address.take(ip) else {
        return state.open_per_address.refusal().into_response();
    };
    next.run(req)
        .await
        .map(|body| Body::new(Tracked::new(body, place)))
}
