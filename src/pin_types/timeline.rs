//! `timeline`: dated events.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::rules::{date, max_chars_each, max_items};
use super::status_grid::Status;
use super::{ConfigError, PinConfig};

/// Most events in one timeline.
pub(crate) const MAX_EVENTS: usize = 500;

/// Dated events with title, description and status.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineConfig {
    /// The events, at most 500, shown in the given order.
    #[schemars(length(max = MAX_EVENTS))]
    pub events: Vec<Event>,
}

/// One event.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// When: ISO 8601, as an RFC 3339 date-time with offset
    /// ("2024-03-01T10:00:00Z") or a `YYYY-MM-DD` date (checked by the service).
    pub time: String,
    /// What happened, at most 200 characters.
    #[schemars(length(max = 200))]
    pub title: String,
    /// More about it, at most 1000 characters.
    #[schemars(length(max = 1000))]
    pub description: Option<String>,
    /// How it went: ok, warn, error or unknown, as in `status-grid`.
    pub status: Option<Status>,
}

/// The catalogue's example.
pub(super) fn example() -> Value {
    json!({"events": [
        {"time": "2024-03-01", "title": "Project start"},
        {"time": "2024-03-04T09:30:00Z", "title": "Deploy v2", "description": "Canary first",
         "status": "ok"},
        {"time": "2024-03-05T14:00:00+01:00", "title": "Incident", "status": "error"}
    ]})
}

impl PinConfig for TimelineConfig {
    fn check(&self) -> Result<(), ConfigError> {
        max_items(
            || "events".to_owned(),
            self.events.len(),
            MAX_EVENTS,
            "events",
        )?;
        for (i, event) in self.events.iter().enumerate() {
            date(|| format!("events[{i}].time"), &event.time)?;
            let texts = [
                ("title", Some(event.title.as_str()), 200),
                ("description", event.description.as_deref(), 1000),
            ];
            max_chars_each(&format!("events[{i}]"), texts)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin_types::tests::assert_refusals;
    use crate::pin_types::PinType;

    #[test]
    fn refusals() {
        let many = vec![json!({"time": "2024-01-01", "title": "x"}); MAX_EVENTS + 1];
        let mut cases = vec![
            ("/events", None, "events", "a JSON array (required)"),
            ("/events", Some(json!(many)), "events", "at most 500 events"),
            (
                "/events/0/time",
                None,
                "events[0].time",
                "a string (required)",
            ),
            (
                "/events/0/time",
                Some(json!(1709251200)),
                "events[0].time",
                "a string",
            ),
            (
                "/events/1/title",
                Some(json!("x".repeat(201))),
                "events[1].title",
                "at most 200",
            ),
            (
                "/events/1/status",
                Some(json!("done")),
                "events[1].status",
                "one of ok, warn",
            ),
            (
                "/events/2/at",
                Some(json!("x")),
                "events[2].at",
                "no such field",
            ),
        ];
        for time in [
            "2024-02-30",
            "yesterday",
            "2024-03-01 10:00",
            "03/01/2024",
            "",
        ] {
            cases.push((
                "/events/2/time",
                Some(json!(time)),
                "events[2].time",
                "ISO 8601",
            ));
        }
        assert_refusals(PinType::Timeline, cases);
    }
}
