//! Rows of things: `flexible-table`, `status-grid`, `list` and `timeline`.
//!
//! A table's columns are sized to their content: numbers right-aligned in tabular figures,
//! dates, yes/no and numbers kept on one line, text and links wrapping. A table wider than
//! its pin scrolls sideways inside the pin (`.scroll`), never the page.

use maud::{html, Markup, PreEscaped};
use serde_json::Value;

use super::link;
use super::numbers::readable;
use super::times::time;
use crate::pin_types::{
    flexible_table::{ColumnType, FlexibleTableConfig},
    list::ListConfig,
    status_grid::{Status, StatusGridConfig},
    timeline::TimelineConfig,
};

/// Text at most this long in every cell of its column keeps the column on one line.
const SHORT_TEXT: usize = 24;

/// The class of a column's heading and cells: how its content is aligned and wrapped
/// (none for text with a long value, which wraps as prose does; `short` for text that is
/// short in every row).
fn column_class(kind: ColumnType, short: bool) -> Option<&'static str> {
    match kind {
        ColumnType::Number => Some("num"),
        ColumnType::Date | ColumnType::Boolean => Some("nw"),
        ColumnType::Link => Some("url"),
        ColumnType::Text if short => Some("nw"),
        ColumnType::Text => None,
    }
}

/// Whether every value of column `id` is short text (or none).
fn all_short(config: &FlexibleTableConfig, id: &str) -> bool {
    config.rows.iter().all(|row| match row.cells.get(id) {
        Some(Value::String(s)) => s.chars().count() <= SHORT_TEXT,
        Some(Value::Null) | None => true,
        Some(other) => other.to_string().chars().count() <= SHORT_TEXT,
    })
}

/// A cell as its column type reads: numbers formatted, links only when http(s).
fn cell(kind: ColumnType, class: Option<&'static str>, value: Option<&Value>) -> Markup {
    let content = match (kind, value) {
        (_, None | Some(Value::Null)) => html! {},
        (ColumnType::Number, Some(Value::Number(n))) => {
            html! { (readable(n.as_f64().unwrap_or(f64::NAN))) }
        }
        (ColumnType::Boolean, Some(Value::Bool(b))) => html! { (if *b { "Yes" } else { "No" }) },
        (ColumnType::Date, Some(Value::String(s))) => html! { (PreEscaped(time(s))) },
        (ColumnType::Link, Some(Value::String(s))) => html! { (PreEscaped(link(s, s))) },
        (_, Some(Value::String(s))) => html! { (s) },
        (_, Some(other)) => html! { (other.to_string()) },
    };
    html! { td class=[class] { (content) } }
}

pub fn flexible_table(config: &FlexibleTableConfig) -> String {
    let classes: Vec<Option<&str>> = config
        .columns
        .iter()
        .map(|c| column_class(c.kind, all_short(config, &c.id)))
        .collect();
    html! {
        div.scroll {
            table {
                thead {
                    tr {
                        @for (c, class) in config.columns.iter().zip(&classes) {
                            th scope="col" class=[class] { (c.name) }
                        }
                    }
                }
                tbody {
                    @for row in &config.rows {
                        tr {
                            @for (c, class) in config.columns.iter().zip(&classes) {
                                (cell(c.kind, *class, row.cells.get(&c.id)))
                            }
                        }
                    }
                }
            }
        }
    }
    .into_string()
}

/// The class and words of a status (the colour never carries the meaning alone).
fn status(status: Status) -> (&'static str, &'static str) {
    match status {
        Status::Ok => ("st-ok", "OK"),
        Status::Warn => ("st-warn", "Warning"),
        Status::Error => ("st-error", "Error"),
        Status::Unknown => ("st-unknown", "Unknown"),
    }
}

pub fn status_grid(config: &StatusGridConfig) -> String {
    html! {
        ul.status-grid {
            @for item in &config.items {
                @let (class, words) = status(item.status);
                li class=(class) {
                    span.badge { (words) }
                    " "
                    strong { (item.name) }
                    @if let Some(detail) = &item.detail { " " span.muted { (detail) } }
                }
            }
        }
    }
    .into_string()
}

pub fn list(config: &ListConfig) -> String {
    html! {
        ul.list {
            @for item in &config.items {
                li {
                    @match item.checked {
                        Some(true) => { span.mark.done title="done" { "☑" } " " },
                        Some(false) => { span.mark title="to do" { "☐" } " " },
                        None => {},
                    }
                    @match &item.url {
                        Some(url) => (PreEscaped(link(url, &item.text))),
                        None => (item.text),
                    }
                }
            }
        }
    }
    .into_string()
}

pub fn timeline(config: &TimelineConfig) -> String {
    html! {
        ol.timeline {
            @for event in &config.events {
                @let class = event.status.map(|s| status(s).0);
                li class=[class] {
                    p.when {
                        (PreEscaped(time(&event.time)))
                        @if let Some(s) = event.status { " " span.badge { (status(s).1) } }
                    }
                    strong { (event.title) }
                    @if let Some(d) = &event.description { p.muted { (d) } }
                }
            }
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const HOSTILE: &str = "<script>alert(1)</script>\"><img src=x onerror=alert(1)>";
    const ESCAPED: &str =
        "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;";

    fn table(config: serde_json::Value) -> String {
        flexible_table(&serde_json::from_value(config).unwrap())
    }

    #[test]
    fn columns_are_aligned_and_wrapped_by_their_type() {
        let html = table(json!({
            "columns": [
                {"id": "host", "name": "Host", "type": "text"},
                {"id": "load", "name": "Load", "type": "number"},
                {"id": "seen", "name": "Seen", "type": "date"},
                {"id": "up", "name": "Up", "type": "boolean"},
                {"id": "site", "name": "Site", "type": "link"}
            ],
            "rows": [{"id": "a", "cells": {
                "host": "web-1", "load": 1234.5, "seen": "2024-02-29", "up": true,
                "site": "https://example.com/"
            }}, {"id": "b", "cells": {"host": null}}]
        }));
        assert!(
            html.starts_with("<div class=\"scroll\"><table><thead><tr>"),
            "{html}"
        );
        assert!(
            html.contains("<th scope=\"col\" class=\"nw\">Host</th><th scope=\"col\" class=\"num\">Load</th>\
                           <th scope=\"col\" class=\"nw\">Seen</th><th scope=\"col\" class=\"nw\">Up</th>\
                           <th scope=\"col\" class=\"url\">Site</th>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"nw\">web-1</td><td class=\"num\">1,234.5</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"nw\"><time datetime=\"2024-02-29\">2024-02-29</time></td><td class=\"nw\">Yes</td>"),
            "{html}"
        );
        assert!(
            html.contains("<td class=\"url\"><a href=\"https://example.com/\""),
            "{html}"
        );
        assert!(
            html.contains("<tr><td class=\"nw\"></td><td class=\"num\"></td>"),
            "empty cells: {html}"
        );
    }

    #[test]
    fn hostile_text_is_escaped_everywhere() {
        let html = table(json!({
            "columns": [{"id": "t", "name": HOSTILE, "type": "text"}],
            "rows": [{"id": "a", "cells": {"t": HOSTILE}}]
        }));
        assert!(
            html.contains(&format!("<th scope=\"col\">{ESCAPED}</th>")),
            "{html}"
        );
        assert!(html.contains(&format!("<td>{ESCAPED}</td>")), "{html}");
        let grid = status_grid(
            &serde_json::from_value(
                json!({"items": [{"name": HOSTILE, "status": "warn", "detail": HOSTILE}]}),
            )
            .unwrap(),
        );
        assert!(
            grid.contains(&format!(
                "<li class=\"st-warn\"><span class=\"badge\">Warning</span> <strong>{ESCAPED}</strong> <span class=\"muted\">{ESCAPED}</span></li>"
            )),
            "{grid}"
        );
        let items = list(
            &serde_json::from_value(json!({"items": [
                {"text": HOSTILE, "checked": true},
                {"text": "docs", "url": "javascript:alert(1)"}
            ]}))
            .unwrap(),
        );
        assert!(
            items.contains(&format!("☑</span> {ESCAPED}</li>")),
            "{items}"
        );
        assert!(items.contains("<li>docs</li>"), "no script link: {items}");
        let events = timeline(
            &serde_json::from_value(json!({"events": [
                {"time": "2024-03-04T09:30:00Z", "title": HOSTILE, "description": HOSTILE, "status": "error"}
            ]}))
            .unwrap(),
        );
        assert!(
            events.contains(&format!(
                "<li class=\"st-error\"><p class=\"when\"><time datetime=\"2024-03-04T09:30:00Z\">2024-03-04 09:30 UTC</time> \
                 <span class=\"badge\">Error</span></p><strong>{ESCAPED}</strong><p class=\"muted\">{ESCAPED}</p></li>"
            )),
            "{events}"
        );
    }
}
