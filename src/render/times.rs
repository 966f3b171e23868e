//! Timestamps as pages show them (CONTRACT.md 17, "Times"): a `<time>` element whose
//! `datetime` holds the ISO value and whose text is a readable UTC fallback; the page script
//! (assets/live.js) rewrites the text in the reader's language and time zone, and keeps
//! "updated 3 min ago" current. Without the script the fallback says which zone it is in.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

use maud::html;

/// A `<time>` of `value`, an RFC 3339 date-time (`2024-03-05T14:00:00+01:00`) or a
/// `YYYY-MM-DD` date as the pin types accept them: the value itself in `datetime` and, as
/// text, `2024-03-05 13:00 UTC` (a date stays a date, in no zone). Anything else (a stored
/// configuration older than the checks) is shown as it is, escaped, with no `datetime`.
pub fn time(value: &str) -> String {
    let markup = if let Ok(at) = DateTime::parse_from_rfc3339(value) {
        let utc = at.with_timezone(&Utc);
        html! {
            time datetime=(utc.to_rfc3339_opts(SecondsFormat::AutoSi, true)) {
                (utc.format("%Y-%m-%d %H:%M UTC").to_string())
            }
        }
    } else if let Ok(day) = NaiveDate::parse_from_str(value, "%Y-%m-%d") {
        let day = day.format("%Y-%m-%d").to_string();
        html! { time datetime=(day) { (day) } }
    } else {
        html! { time { (value) } }
    };
    markup.into_string()
}

/// "updated ..." of a page: epoch `ms` as a `<time>` the page script shows as a relative
/// time ("3 min ago") and keeps current; the UTC fallback otherwise.
pub fn updated(ms: i64) -> String {
    let at = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default();
    html! {
        time datetime=(at.to_rfc3339_opts(SecondsFormat::Millis, true)) data-ago="" {
            (at.format("%Y-%m-%d %H:%M UTC").to_string())
        }
    }
    .into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times_carry_their_instant_and_a_utc_fallback() {
        assert_eq!(
            time("2024-03-05T14:00:00+01:00"),
            "<time datetime=\"2024-03-05T13:00:00Z\">2024-03-05 13:00 UTC</time>"
        );
        assert_eq!(
            time("2024-03-04T09:30:15.250Z"),
            "<time datetime=\"2024-03-04T09:30:15.250Z\">2024-03-04 09:30 UTC</time>"
        );
    }

    #[test]
    fn a_date_stays_a_date_and_other_text_is_escaped() {
        assert_eq!(
            time("2024-02-29"),
            "<time datetime=\"2024-02-29\">2024-02-29</time>"
        );
        assert_eq!(time("soon <b>"), "<time>soon &lt;b&gt;</time>");
        assert_eq!(time("2024-02-30"), "<time>2024-02-30</time>");
    }

    #[test]
    fn updated_is_relative_for_the_script() {
        assert_eq!(
            updated(1_764_337_500_123),
            "<time datetime=\"2025-11-28T13:45:00.123Z\" data-ago=\"\">2025-11-28 13:45 UTC</time>"
        );
    }
}
