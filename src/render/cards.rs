//! Figures: `stat-cards`, `kpi` and `progress`.

use maud::{html, Markup, PreEscaped};

use super::charts::sparkline;
use super::numbers::{fit, plain, readable};
use crate::pin_types::{
    kpi::{KpiConfig, KpiValue},
    progress::ProgressConfig,
    stat_cards::{StatCardsConfig, Trend, TrendGood},
};

/// Most characters of a KPI's figure before it is compacted (`12,345,678,901` is `12.3B`).
const FIGURE_CHARS: usize = 10;

/// A change with its trend as an arrow, coloured by whether that direction is good
/// (`trend_good`, default up: a fall in latency is green), and said in words in its title.
fn change(change: Option<&str>, trend: Option<Trend>, good: Option<TrendGood>) -> Markup {
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
    html! {
        @if change.is_some() || !words.is_empty() {
            p class={ "change " (class) } title={ "trend " (words) (judged) } {
                (arrow) (change.unwrap_or(words))
            }
        }
    }
}

pub fn stat_cards(config: &StatCardsConfig) -> String {
    html! {
        div.cards {
            @for card in &config.cards {
                div.card {
                    p.label { (card.title) }
                    p.figure { (card.value) }
                    (change(card.change.as_deref(), card.trend, card.trend_good))
                    @if let Some(description) = &card.description {
                        p.muted { (description) }
                    }
                }
            }
        }
    }
    .into_string()
}

pub fn kpi(config: &KpiConfig) -> String {
    let value = match &config.value {
        KpiValue::Number(n) => fit(*n, FIGURE_CHARS),
        KpiValue::Text(text) => text.clone(),
    };
    html! {
        div.kpi {
            p.label { (config.label) }
            p.figure {
                (value)
                @if let Some(unit) = &config.unit {
                    span.unit { (unit) }
                }
            }
            (change(config.change.as_deref(), config.trend, config.trend_good))
            (PreEscaped(sparkline(config.sparkline.as_deref().unwrap_or_default())))
        }
    }
    .into_string()
}

pub fn progress(config: &ProgressConfig) -> String {
    html! {
        ul.progress {
            @for item in &config.items {
                li {
                    span.label { (item.label) }
                    progress value=(plain(item.value.clamp(0.0, item.max))) max=(plain(item.max)) {}
                    span.num { (readable(item.value)) " / " (readable(item.max)) }
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
