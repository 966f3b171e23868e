//! Figures: `stat-cards`, `kpi` and `progress`.

use super::{charts::sparkline, esc, num};
use crate::pin_types::{
    kpi::{KpiConfig, KpiValue},
    progress::ProgressConfig,
    stat_cards::{StatCardsConfig, Trend},
};

/// A change with its trend as an arrow and a class (colour) that says the same in words.
fn change(change: Option<&str>, trend: Option<Trend>) -> String {
    let (class, arrow, words) = match trend {
        Some(Trend::Up) => ("up", "▲ ", "up"),
        Some(Trend::Down) => ("down", "▼ ", "down"),
        Some(Trend::Flat) => ("flat", "▶ ", "flat"),
        None => ("flat", "", ""),
    };
    match (change, words) {
        (None, "") => String::new(),
        (text, _) => format!(
            "<p class=\"change {class}\" title=\"trend {words}\">{arrow}{}</p>",
            esc(text.unwrap_or(words))
        ),
    }
}

pub fn stat_cards(config: &StatCardsConfig) -> String {
    let cards: String = config
        .cards
        .iter()
        .map(|card| {
            let description = card
                .description
                .as_deref()
                .map(|d| format!("<p class=\"muted\">{}</p>", esc(d)))
                .unwrap_or_default();
            format!(
                "<div class=\"card\"><p class=\"label\">{}</p><p class=\"figure\">{}</p>{}{description}</div>",
                esc(&card.title),
                esc(&card.value),
                change(card.change.as_deref(), card.trend)
            )
        })
        .collect();
    format!("<div class=\"cards\">{cards}</div>")
}

pub fn kpi(config: &KpiConfig) -> String {
    let value = match &config.value {
        KpiValue::Number(n) => num(*n),
        KpiValue::Text(text) => text.clone(),
    };
    let unit = config
        .unit
        .as_deref()
        .map(|u| format!("<span class=\"unit\">{}</span>", esc(u)))
        .unwrap_or_default();
    format!(
        "<div class=\"kpi\"><p class=\"label\">{}</p><p class=\"figure\">{}{unit}</p>{}{}</div>",
        esc(&config.label),
        esc(&value),
        change(config.change.as_deref(), config.trend),
        sparkline(config.sparkline.as_deref().unwrap_or_default())
    )
}

pub fn progress(config: &ProgressConfig) -> String {
    let items: String = config
        .items
        .iter()
        .map(|item| {
            let value = item.value.clamp(0.0, item.max);
            format!(
                "<li><span class=\"label\">{}</span><progress value=\"{}\" max=\"{}\"></progress>\
                 <span class=\"num\">{} / {}</span></li>",
                esc(&item.label),
                num(value),
                num(item.max),
                esc(&num(item.value)),
                esc(&num(item.max))
            )
        })
        .collect();
    format!("<ul class=\"progress\">{items}</ul>")
}
