//! The kinds of event the log holds and the streams carry: the one place their names are
//! spelled (the wire's `event:` and `type`, the `type` filter, the log's `event` column).

use std::fmt;

use serde::{Serialize, Serializer};

/// What changed, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    PinCreated,
    PinUpdated,
    PinDeleted,
    /// A pin's expected push didn't come (CONTRACT.md 15): once per lapse.
    PinStale,
    /// A pin's status changed (CONTRACT.md 15): once per change.
    PinStatus,
    PinboardCreated,
    PinboardUpdated,
    PinboardDeleted,
    DatasetCreated,
    DatasetUpdated,
    DatasetDeleted,
    /// `POST /webhooks/{id}/test`: delivered only to that webhook (CONTRACT.md 15).
    WebhookTest,
    /// A webhook failed for `webhooks.disable_after_secs` and was disabled.
    WebhookDisabled,
}

/// The kind of resource an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Pin,
    Pinboard,
    Dataset,
    Webhook,
}

impl EventKind {
    /// Every kind, in the order the API description lists them.
    pub const ALL: [EventKind; 13] = [
        EventKind::PinCreated,
        EventKind::PinUpdated,
        EventKind::PinDeleted,
        EventKind::PinStale,
        EventKind::PinStatus,
        EventKind::PinboardCreated,
        EventKind::PinboardUpdated,
        EventKind::PinboardDeleted,
        EventKind::DatasetCreated,
        EventKind::DatasetUpdated,
        EventKind::DatasetDeleted,
        EventKind::WebhookTest,
        EventKind::WebhookDisabled,
    ];

    /// The name of every kind, in the order of [`EventKind::ALL`].
    pub const NAMES: [&'static str; EventKind::ALL.len()] = {
        let mut names = [""; EventKind::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = EventKind::ALL[i].as_str();
            i += 1;
        }
        names
    };

    /// The name on the wire and in the log (`pin.created`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            EventKind::PinCreated => "pin.created",
            EventKind::PinUpdated => "pin.updated",
            EventKind::PinDeleted => "pin.deleted",
            EventKind::PinStale => "pin.stale",
            EventKind::PinStatus => "pin.status",
            EventKind::PinboardCreated => "pinboard.created",
            EventKind::PinboardUpdated => "pinboard.updated",
            EventKind::PinboardDeleted => "pinboard.deleted",
            EventKind::DatasetCreated => "dataset.created",
            EventKind::DatasetUpdated => "dataset.updated",
            EventKind::DatasetDeleted => "dataset.deleted",
            EventKind::WebhookTest => "webhook.test",
            EventKind::WebhookDisabled => "webhook.disabled",
        }
    }

    /// The kind named `name`, if there is one.
    pub fn parse(name: &str) -> Option<EventKind> {
        EventKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// What the event is about.
    pub const fn resource(self) -> Resource {
        match self {
            EventKind::PinCreated
            | EventKind::PinUpdated
            | EventKind::PinDeleted
            | EventKind::PinStale
            | EventKind::PinStatus => Resource::Pin,
            EventKind::PinboardCreated
            | EventKind::PinboardUpdated
            | EventKind::PinboardDeleted => Resource::Pinboard,
            EventKind::DatasetCreated | EventKind::DatasetUpdated | EventKind::DatasetDeleted => {
                Resource::Dataset
            }
            EventKind::WebhookTest | EventKind::WebhookDisabled => Resource::Webhook,
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EventKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::EventKind;

    #[test]
    fn each_kind_is_parsed_back_from_its_name() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::NAMES.len(), EventKind::ALL.len());
        assert_eq!(EventKind::parse("pin.moved"), None);
        assert_eq!(EventKind::parse("PIN.CREATED"), None);
    }
}
