//! `/share/{id}.png` (CONTRACT.md 17): the link preview of a share page, a 1200x630 PNG of
//! the board (or pin) drawn by `render::preview`. Shown exactly when the share page is shown
//! to anyone: a private, missing, other or sign-in-only item is the 404 page, whoever asks
//! (a picture is for unfurlers, which never sign in). Counted against the client address's
//! share limit like a page.

use axum::{
    http::{header, request::Parts},
    response::{IntoResponse, Response},
};

use crate::{
    app::AppState,
    error::Error,
    limits::count_share_request,
    pinboards::view::{self, Door, Shown, Viewer},
    render::preview,
};

/// The picture of item `id`, or the 404 page.
pub(super) async fn png(state: &AppState, id: &str, request: &Parts) -> Response {
    if let Err(limited) = count_share_request(state, &request.headers, &request.extensions) {
        return limited.into_response();
    }
    let view = match view::page(state, Door::Share, id, Viewer::Public).await {
        // A view that follows a stream is one shared with anyone (see `PageView::since`).
        Ok(Shown::Found(view)) if view.since.is_some() => view,
        Ok(_) => return crate::web::not_found(),
        Err(e) => return e.into_response(),
    };
    // Tens of milliseconds of drawing: off the request threads.
    let drawn = tokio::task::spawn_blocking(move || preview::png(&view)).await;
    match drawn {
        Ok(Ok(png)) => {
            let fixed = [
                (header::CONTENT_TYPE, "image/png"),
                // Short: a board changes, and may stop being shared.
                (header::CACHE_CONTROL, "public, max-age=60"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ];
            (fixed, png).into_response()
        }
        Ok(Err(e)) => Error::internal(e).into_response(),
        Err(e) => Error::internal(e).into_response(),
    }
}
