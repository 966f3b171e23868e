//! [`ApiQuery`]: query parameters whose rejection is the error envelope. Values arrive as
//! strings; the operations validate each one and name it on error.

use axum::{
    extract::{FromRequestParts, Query},
    http::request::Parts,
};
use serde::de::DeserializeOwned;

use crate::error::Error;

pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        if parts.uri.query().is_some_and(|q| q.contains("%00")) {
            return Err(Error::validation("query", super::json::NO_NUL));
        }
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| ApiQuery(value))
            .map_err(|e| {
                Error::validation(
                    "query",
                    format!("a well-formed query string ({})", e.body_text()),
                )
            })
    }
}
