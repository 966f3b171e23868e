//! What a pin's frame says of its signals (CONTRACT.md 15 and 17): its status as a colour
//! and a word (never colour alone), and, when it is stale, that it is greyed and since
//! when it has had no update. Drawn into the pin's HTML, so a live redraw (the fragment the
//! page script swaps in on `pin.status` and `pin.stale`) carries it too.

use maud::html;

/// The classes a pin's frame takes and the HTML that goes under its heading.
#[derive(Debug, Default, PartialEq)]
pub struct Signal {
    /// ` sig-<status>` and ` stale`, each when it applies (with its leading space).
    pub classes: String,
    pub html: String,
}

/// The signal of a pin whose status is `status` (`ok`, `warning`, `critical`; anything
/// else is shown as no status) and that is `stale` at `now` (ms), pushed last at
/// `last_pushed_at` (ms).
pub fn signal(status: Option<&str>, stale: bool, last_pushed_at: i64, now: i64) -> Signal {
    let word = match status {
        Some("ok") => Some(("ok", "OK")),
        Some("warning") => Some(("warning", "Warning")),
        Some("critical") => Some(("critical", "Critical")),
        _ => None,
    };
    let mut classes = String::new();
    if let Some((class, _)) = word {
        classes.push_str(" sig-");
        classes.push_str(class);
    }
    if stale {
        classes.push_str(" stale");
    }
    let since = duration(now.saturating_sub(last_pushed_at));
    let html = html! {
        @if let Some((class, word)) = word {
            p class={ "pill " (class) } title={ "Status: " (word) } { (word) }
        }
        @if stale {
            p.stale-note { "No update for " (since) }
        }
    };
    Signal {
        classes,
        html: html.into_string(),
    }
}

/// A duration for a glance: whole seconds, minutes, hours, then days (`3 h`, `2 d`).
pub fn duration(ms: i64) -> String {
    let secs = ms.max(0) / 1000;
    match secs {
        0..=59 => format!("{secs} s"),
        60..=3599 => format!("{} min", secs / 60),
        3600..=172_799 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_a_colour_and_a_word() {
        let s = signal(Some("critical"), false, 0, 0);
        assert_eq!(s.classes, " sig-critical");
        assert_eq!(
            s.html,
            "<p class=\"pill critical\" title=\"Status: Critical\">Critical</p>"
        );
        assert!(signal(Some("ok"), false, 0, 0).html.contains(">OK<"));
        assert!(signal(Some("warning"), false, 0, 0)
            .html
            .contains(">Warning<"));
        assert_eq!(signal(None, false, 0, 0), Signal::default());
        assert_eq!(
            signal(Some("<b>\"x"), false, 0, 0),
            Signal::default(),
            "an unknown status draws nothing, and nothing of it reaches the page"
        );
    }

    #[test]
    fn a_stale_pin_says_since_when() {
        let hour = 3_600_000;
        let s = signal(Some("warning"), true, 0, 3 * hour + 1234);
        assert_eq!(s.classes, " sig-warning stale");
        assert!(
            s.html
                .ends_with("<p class=\"stale-note\">No update for 3 h</p>"),
            "{}",
            s.html
        );
        assert_eq!(duration(59_999), "59 s");
        assert_eq!(duration(60_000), "1 min");
        assert_eq!(duration(47 * hour), "47 h");
        assert_eq!(duration(72 * hour), "3 d");
        assert_eq!(duration(-5), "0 s", "a clock behind the store's");
    }
}
