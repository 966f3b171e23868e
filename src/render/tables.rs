//! Rows of things: `flexible-table`, `status-grid`, `list` and `timeline`.

use serde_json::Value;

use super::numbers::readable;
use super::times::time;
use super::{esc, link};
use crate::pin_types::{
    flexible_table::{ColumnType, FlexibleTableConfig},
    list::ListConfig,
    status_grid::{Status, StatusGridConfig},
    timeline::TimelineConfig,
};

/// A cell as its column type reads: numbers formatted, links only when http(s).
fn cell(kind: ColumnType, value: Option<&Value>) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => esc(s),
        Value::Null => String::new(),
        other => esc(&other.to_string()),
    };
    match (kind, value) {
        (_, None | Some(Value::Null)) => "<td></td>".to_owned(),
        (ColumnType::Number, Some(Value::Number(n))) => {
            format!(
                "<td class=\"num\">{}</td>",
                esc(&readable(n.as_f64().unwrap_or(f64::NAN)))
            )
        }
        (ColumnType::Boolean, Some(Value::Bool(b))) => {
            format!("<td>{}</td>", if *b { "Yes" } else { "No" })
        }
        (ColumnType::Date, Some(Value::String(s))) => {
            format!("<td>{}</td>", time(s))
        }
        (ColumnType::Link, Some(Value::String(s))) => format!("<td>{}</td>", link(s, s)),
        (_, Some(v)) => format!("<td>{}</td>", text(v)),
    }
}

pub fn flexible_table(config: &FlexibleTableConfig) -> String {
    let head: String = config
        .columns
        .iter()
        .map(|c| format!("<th scope=\"col\">{}</th>", esc(&c.name)))
        .collect();
    let body: String = config
        .rows
        .iter()
        .map(|row| {
            let cells: String = config
                .columns
                .iter()
                .map(|c| cell(c.kind, row.cells.get(&c.id)))
                .collect();
            format!("<tr>{cells}</tr>")
        })
        .collect();
    format!("<div class=\"scroll\"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")
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
    let items: String = config
        .items
        .iter()
        .map(|item| {
            let (class, words) = status(item.status);
            let detail = item
                .detail
                .as_deref()
                .map(|d| format!("<span class=\"muted\">{}</span>", esc(d)))
                .unwrap_or_default();
            format!(
                "<li class=\"{class}\"><span class=\"badge\">{words}</span> <strong>{}</strong> {detail}</li>",
                esc(&item.name)
            )
        })
        .collect();
    format!("<ul class=\"status-grid\">{items}</ul>")
}

pub fn list(config: &ListConfig) -> String {
    let items: String = config
        .items
        .iter()
        .map(|item| {
            let mark = match item.checked {
                Some(true) => "<span class=\"mark\" title=\"done\">☑</span> ",
                Some(false) => "<span class=\"mark\" title=\"to do\">☐</span> ",
                None => "",
            };
            let text = match &item.url {
                Some(url) => link(url, &item.text),
                None => esc(&item.text),
            };
            format!("<li>{mark}{text}</li>")
        })
        .collect();
    format!("<ul class=\"list\">{items}</ul>")
}

pub fn timeline(config: &TimelineConfig) -> String {
    let events: String = config
        .events
        .iter()
        .map(|event| {
            let badge = event
                .status
                .map(|s| {
                    let (class, words) = status(s);
                    format!(" <span class=\"badge {class}\">{words}</span>")
                })
                .unwrap_or_default();
            let description = event
                .description
                .as_deref()
                .map(|d| format!("<p class=\"muted\">{}</p>", esc(d)))
                .unwrap_or_default();
            format!(
                "<li>{} <strong>{}</strong>{badge}{description}</li>",
                time(&event.time),
                esc(&event.title)
            )
        })
        .collect();
    format!("<ol class=\"timeline\">{events}</ol>")
}
