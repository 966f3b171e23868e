//! Figures: `stat-cards`, `kpi` and `progress`.

use super::numbers::{fit, plain, readable};
use super::{charts::sparkline, esc};
use crate::pin_types::{
    kpi::{KpiConfig, KpiValue},
    progress::ProgressConfig,
    stat_cards::{StatCardsConfig, Trend, TrendGood},
};

/// Most characters of a KPI's figure before it is compacted (`12,345,678,901` is `12.3B`).
const FIGURE_CHARS: usize = 10;

/// A change with its trend as an arrow, coloured by whether that direction is good
/// (`trend_good`, default up: a fall in latency is green), and said in words in its title.
fn change(change: Option<&str>, trend: Option<Trend>, good: Option<TrendGood>) -> String {
    let good = good.unwrap_or_default();
    let (arrow, words) = match trend {
        Some(Trend::Up) => ("▲ ", "up"),
        Some(Trend::Down) => ("▼ ", "down"),
        Some(Trend::Flat) => ("▶ ", "flat"),
        None => ("", ""),
    };
    let (class, judged) = match (trend, good) {
        (Some(Trend::Up), TrendGood::Up) | (Some(Trend::Down), TrendGood::Down) => {
            ("good", ", good")
        }
        (Some(Trend::Up), TrendGood::Down) | (Some(Trend::Down), TrendGood::Up) => ("bad", ", bad"),
        _ => ("flat", ""),
    };
    match (change, words) {
        (None, "") => String::new(),
        (text, _) => format!(
            "<p class=\"change {class}\" title=\"trend {words}{judged}\">{arrow}{}</p>",
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
                change(card.change.as_deref(), card.trend, card.trend_good)
            )
        })
        .collect();
    format!("<div class=\"cards\">{cards}</div>")
}

pub fn kpi(config: &KpiConfig) -> String {
    let value = match &config.value {
        KpiValue::Number(n) => fit(*n, FIGURE_CHARS),
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
        change(config.change.as_deref(), config.trend, config.trend_good),
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
                plain(value),
                plain(item.max),
                esc(&readable(item.value)),
                esc(&readable(item.max))
            )
        })
        .collect();
    format!("<ul class=\"progress\">{items}</ul>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_fall_is_green_where_a_fall_is_good() {
        let latency: KpiConfig = serde_json::from_value(json!({
            "label": "p95 <ms>", "value": 12345.5, "change": "-12%", "trend": "down",
            "trend_good": "down"
        }))
        .unwrap();
        let html = kpi(&latency);
        assert!(
            html.contains("class=\"change good\" title=\"trend down, good\">▼ -12%"),
            "{html}"
        );
        assert!(
            html.contains(">12,345.5<") && html.contains("p95 &lt;ms&gt;"),
            "{html}"
        );
        let sales = KpiConfig {
            trend_good: None,
            ..latency
        };
        assert!(kpi(&sales).contains("class=\"change bad\" title=\"trend down, bad\""));
        let cards: StatCardsConfig = serde_json::from_value(json!({"cards": [
            {"title": "Errors", "value": "3", "change": "+1", "trend": "up", "trend_good": "down"},
            {"title": "Users", "value": "42", "change": "+4", "trend": "up"},
            {"title": "Flat", "value": "1", "trend": "flat", "trend_good": "down"}
        ]}))
        .unwrap();
        let html = stat_cards(&cards);
        assert_eq!(html.matches("change bad").count(), 1, "{html}");
        assert_eq!(html.matches("change good").count(), 1, "{html}");
        assert!(
            html.contains("class=\"change flat\" title=\"trend flat\">▶ flat"),
            "{html}"
        );
    }

    #[test]
    fn kpi_figures_are_written_for_reading() {
        let big: KpiConfig =
            serde_json::from_value(json!({"label": "Bytes", "value": 98765432101.0})).unwrap();
        assert!(kpi(&big).contains(">98.8B<"), "{}", kpi(&big));
        let noisy: KpiConfig =
            serde_json::from_value(json!({"label": "Ratio", "value": 0.30000000000000004}))
                .unwrap();
        assert!(kpi(&noisy).contains(">0.3<"));
    }
}
