//! Where a stream a client asks for resumes: the one reading of `Last-Event-ID` for every
//! stream (`/v1/events`, `/share/{id}/events`, `/boards/{id}/events`).

use axum::http::HeaderMap;

use super::Resume;

impl Resume {
    /// After the `Last-Event-ID` header (a browser's own reconnect: the newest id it has
    /// seen) when one is sent, else after `query` (the `last_event_id` query parameter: a
    /// page script's first connection, from the event id its page was drawn at), else live.
    pub fn requested(headers: &HeaderMap, query: Option<String>) -> Resume {
        headers
            .get("last-event-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .or(query)
            .map_or(Resume::Live, Resume::After)
    }

    /// [`Resume::requested`] with the request's query string, whose first `last_event_id`
    /// counts.
    pub fn requested_in(headers: &HeaderMap, query: Option<&str>) -> Resume {
        let last_event_id = query.and_then(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .find(|(name, _)| name == "last_event_id")
                .map(|(_, value)| value.into_owned())
        });
        Resume::requested(headers, last_event_id)
    }
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue};

    use super::Resume;

    fn after(resume: Resume) -> Option<String> {
        match resume {
            Resume::Live => None,
            Resume::After(id) => Some(id),
        }
    }

    #[test]
    fn the_header_comes_before_the_query() {
        let mut headers = HeaderMap::new();
        assert_eq!(after(Resume::requested_in(&headers, None)), None);
        assert_eq!(after(Resume::requested_in(&headers, Some("kiosk=1"))), None);
        assert_eq!(
            after(Resume::requested_in(
                &headers,
                Some("last_event_id=7&last_event_id=9")
            )),
            Some("7".to_owned())
        );
        headers.insert("last-event-id", HeaderValue::from_static("12"));
        assert_eq!(
            after(Resume::requested_in(&headers, Some("last_event_id=7"))),
            Some("12".to_owned())
        );
        assert_eq!(
            after(Resume::requested(&headers, Some("7".to_owned()))),
            Some("12".to_owned())
        );
        // A header that is not text is not an id: the query's counts.
        let mut odd = HeaderMap::new();
        odd.insert("last-event-id", HeaderValue::from_bytes(b"\xff").unwrap());
        assert_eq!(
            after(Resume::requested(&odd, Some("7".to_owned()))),
            Some("7".to_owned())
        );
    }
}
