//! Text-like pins: `markdown`, `json`, `code` and `image`.

use pulldown_cmark::{html, Event, Options, Parser};

use super::esc;
use crate::pin_types::{
    code::CodeConfig, image::ImageConfig, json::JsonConfig, markdown::MarkdownConfig, parse_web_url,
};

/// Markdown to HTML. Raw HTML in the source is shown as text, and the result still goes
/// through ammonia's allow-list (no script, no event handlers, no `javascript:` links, no
/// `style`), so nothing in a pin can run or restyle the page.
pub fn markdown(config: &MarkdownConfig) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(&config.text, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        // Checkbox inputs wouldn't survive sanitising: show the state as a character.
        Event::TaskListMarker(done) => Event::Text(if done { "☑ " } else { "☐ " }.into()),
        other => other,
    });
    let mut unsafe_html = String::with_capacity(config.text.len() * 3 / 2);
    html::push_html(&mut unsafe_html, events);
    format!("<div class=\"md\">{}</div>", ammonia::clean(&unsafe_html))
}

/// Any JSON, pretty-printed and escaped.
pub fn json(config: &JsonConfig) -> String {
    let pretty = serde_json::to_string_pretty(&config.data).unwrap_or_default();
    format!("<pre class=\"json\">{}</pre>", esc(&pretty))
}

/// Source code, escaped, under its language's name.
pub fn code(config: &CodeConfig) -> String {
    format!(
        "<figure class=\"code\"><figcaption>{}</figcaption><pre><code>{}</code></pre></figure>",
        esc(&config.language),
        esc(&config.code)
    )
}

/// A picture from an http(s) URL (anything else shows its alt text instead).
pub fn image(config: &ImageConfig) -> String {
    let alt = config.alt.as_deref().unwrap_or("");
    let picture = match parse_web_url(&config.url) {
        Some(url) => format!(
            "<img src=\"{}\" alt=\"{}\" loading=\"lazy\" referrerpolicy=\"no-referrer\">",
            esc(url.as_str()),
            esc(alt)
        ),
        None => format!("<p class=\"muted\">{}</p>", esc(alt)),
    };
    let caption = config
        .caption
        .as_deref()
        .map(|c| format!("<figcaption>{}</figcaption>", esc(c)))
        .unwrap_or_default();
    format!("<figure class=\"image\">{picture}{caption}</figure>")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tags of an HTML text (escaped text has no `<`).
    fn tags(html: &str) -> Vec<&str> {
        html.split('<')
            .skip(1)
            .filter_map(|rest| rest.split('>').next())
            .collect()
    }

    #[test]
    fn markdown_is_inert() {
        let config = MarkdownConfig {
            text: "# Hi\n\n- [x] done\n\n<script>alert(1)</script>\n\n\"><img src=x onerror=alert(1)> \
                   [x](javascript:alert(1)) <b onclick=\"x()\">b</b>"
                .into(),
        };
        let html = markdown(&config);
        assert!(html.contains("<h1>Hi</h1>"), "{html}");
        assert!(html.contains("☑ done"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
        for tag in tags(&html) {
            assert!(
                !tag.starts_with("script") && !tag.starts_with("img"),
                "{tag}"
            );
            assert!(
                !tag.contains("onerror") && !tag.contains("onclick"),
                "{tag}"
            );
            assert!(!tag.contains("javascript:"), "{tag}");
        }
    }
}
