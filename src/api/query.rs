//! [`ApiQuery`]: query parameters whose rejection is the error envelope. Values arrive as
//! strings; the operations validate each one and name it on error.

use axum::{extract::FromRequestParts, http::request::Parts};
use serde::de::DeserializeOwned;

use crate::error::Error;

pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Error> {
        let query = parts.uri.query().unwrap_or_default();
        if query.contains("%00") {
            return Err(Error::validation("query", super::json::NO_NUL));
        }
        // A parameter given more than once fills a list (`?key=a&key=b`); repeated, one
        // that takes a single value is refused.
        serde_html_form::from_str::<T>(query)
            .map(ApiQuery)
            .map_err(|e| Error::validation("query", format!("a well-formed query string ({e})")))
    }
}
