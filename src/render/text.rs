//! Text-like pins: `markdown`, `json`, `code` and `image`.

use maud::{html, Markup, PreEscaped};
use pulldown_cmark::{html as cmark_html, Event, Options, Parser};
use serde_json::Value;

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
    cmark_html::push_html(&mut unsafe_html, events);
    html! { div.md { (PreEscaped(ammonia::clean(&unsafe_html))) } }.into_string()
}

/// Containers nested deeper than this start closed (the root's entries are depth 0).
const OPEN_DEPTH: usize = 2;
/// Containers with more entries than this start closed, whatever their depth.
const OPEN_ENTRIES: usize = 20;

/// Any JSON as a tree of native `<details>` (no script): every object or array can be
/// opened and closed, the first levels open unless they are long; keys, strings, numbers,
/// booleans and null each in their own colour (and strings in quotes, null in italics, so
/// the colour never carries the kind alone).
pub fn json(config: &JsonConfig) -> String {
    let tree = match &config.data {
        Value::Object(map) if !map.is_empty() => entries(&config.data, 0),
        Value::Array(items) if !items.is_empty() => entries(&config.data, 0),
        leaf => html! { p.jv { (scalar(leaf)) } },
    };
    html! { div.json { (tree) } }.into_string()
}

/// The entries of a container (an object's by key, an array's by index), each a `<li>`: a
/// scalar after its key, or a nested container under a `<summary>` of its key and size.
fn entries(container: &Value, depth: usize) -> Markup {
    let items: Vec<(Markup, &Value)> = match container {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (html! { span.jk { (k) } }, v))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (html! { span.ji { (i) } }, v))
            .collect(),
        _ => Vec::new(),
    };
    html! {
        ul.jt {
            @for (key, value) in &items {
                @match value {
                    Value::Object(map) if !map.is_empty() => li {
                        details open[opens(map.len(), depth)] {
                            summary { (key) span.jp { ": " } span.jc { "{" (count(map.len(), "key")) "}" } }
                            (entries(value, depth + 1))
                        }
                    },
                    Value::Array(list) if !list.is_empty() => li {
                        details open[opens(list.len(), depth)] {
                            summary { (key) span.jp { ": " } span.jc { "[" (count(list.len(), "item")) "]" } }
                            (entries(value, depth + 1))
                        }
                    },
                    leaf => li { (key) span.jp { ": " } (scalar(leaf)) },
                }
            }
        }
    }
}

/// Whether a container of `len` entries at `depth` starts open.
fn opens(len: usize, depth: usize) -> bool {
    depth < OPEN_DEPTH && len <= OPEN_ENTRIES
}

/// "1 key", "3 items".
fn count(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// A value without entries (an empty object or array among them) in its kind's colour,
/// written as JSON writes it.
fn scalar(value: &Value) -> Markup {
    match value {
        Value::String(_) => html! { span.js { (value.to_string()) } },
        Value::Number(n) => html! { span.jn { (n.to_string()) } },
        Value::Bool(b) => html! { span.jb { (b) } },
        Value::Null => html! { span.jz { "null" } },
        Value::Object(_) => html! { span.jc { "{}" } },
        Value::Array(_) => html! { span.jc { "[]" } },
    }
}

/// Source code, escaped, under its language's name: a monospace block that keeps its
/// indentation and scrolls sideways rather than wrap, each line numbered (by the style
/// sheet, so the numbers are not copied with the code). Not highlighted: see
/// docs/API-DESIGN.md, "Code pins".
pub fn code(config: &CodeConfig) -> String {
    let lines: Vec<&str> = config.code.split_inclusive('\n').collect();
    // The gutter's width in digits, one class per width (`d1`..`d5`: the code is at most
    // 50,000 characters).
    let digits = lines.len().max(1).to_string().len().min(5);
    html! {
        figure.code {
            figcaption { (config.language) }
            pre { code class={ "d" (digits) } { @for line in &lines { span.ln { (line) } } } }
        }
    }
    .into_string()
}

/// A picture from an http(s) URL (anything else shows its alt text instead).
pub fn image(config: &ImageConfig) -> String {
    let alt = config.alt.as_deref().unwrap_or("");
    html! {
        figure.image {
            @match parse_web_url(&config.url) {
                Some(url) => img src=(url.as_str()) alt=(alt) loading="lazy" referrerpolicy="no-referrer";,
                None => p.muted { (alt) },
            }
            @if let Some(caption) = &config.caption { figcaption { (caption) } }
        }
    }
    .into_string()
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

    fn tree(data: serde_json::Value) -> String {
        json(&JsonConfig { data })
    }

    #[test]
    fn json_is_a_tree_with_each_kind_in_its_colour() {
        let html = tree(serde_json::json!(
            {"build": 1842, "ok": true, "tags": ["prod", "eu"], "owner": null, "none": {}}
        ));
        assert!(
            html.starts_with("<div class=\"json\"><ul class=\"jt\">"),
            "{html}"
        );
        for entry in [
            "<li><span class=\"jk\">build</span><span class=\"jp\">: </span><span class=\"jn\">1842</span></li>",
            "<li><span class=\"jk\">ok</span><span class=\"jp\">: </span><span class=\"jb\">true</span></li>",
            "<li><span class=\"jk\">owner</span><span class=\"jp\">: </span><span class=\"jz\">null</span></li>",
            "<li><span class=\"jk\">none</span><span class=\"jp\">: </span><span class=\"jc\">{}</span></li>",
            "<li><details open><summary><span class=\"jk\">tags</span><span class=\"jp\">: </span>\
             <span class=\"jc\">[2 items]</span></summary><ul class=\"jt\">\
             <li><span class=\"ji\">0</span><span class=\"jp\">: </span><span class=\"js\">&quot;prod&quot;</span></li>",
        ] {
            assert!(html.contains(entry), "{entry} in {html}");
        }
        assert_eq!(
            tree(serde_json::json!("x")),
            "<div class=\"json\"><p class=\"jv\"><span class=\"js\">&quot;x&quot;</span></p></div>"
        );
    }

    #[test]
    fn deep_or_long_containers_start_closed() {
        let html = tree(
            serde_json::json!({"a": {"b": {"c": {"d": 1}}}, "many": (0..21).collect::<Vec<_>>()}),
        );
        assert!(
            html.contains("<details open><summary><span class=\"jk\">a</span>"),
            "{html}"
        );
        assert!(
            html.contains("<details open><summary><span class=\"jk\">b</span>"),
            "{html}"
        );
        assert!(html.contains("<details><summary><span class=\"jk\">c</span><span class=\"jp\">: </span><span class=\"jc\">{1 key}</span>"), "{html}");
        assert!(html.contains("<details><summary><span class=\"jk\">many</span><span class=\"jp\">: </span><span class=\"jc\">[21 items]</span>"), "{html}");
        assert!(
            html.contains("<span class=\"ji\">20</span>"),
            "closed, not cut: {html}"
        );
    }

    #[test]
    fn hostile_json_and_code_stay_text() {
        let html =
            tree(serde_json::json!({"<script>k</script>": ["</span><script>alert(1)</script>"]}));
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("<span class=\"jk\">&lt;script&gt;k&lt;/script&gt;</span>"),
            "{html}"
        );
        assert!(
            html.contains("&quot;&lt;/span&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;"),
            "{html}"
        );
        let code = code(&CodeConfig {
            language: "html".into(),
            code: "</code></pre><script>alert(1)</script>\n  <b>".into(),
        });
        assert!(!code.contains("<script") && !code.contains("<b>"), "{code}");
        assert!(
            code.contains("&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;"),
            "{code}"
        );
    }

    #[test]
    fn code_keeps_its_lines_and_indentation() {
        let html = code(&CodeConfig {
            language: "rust".into(),
            code: "fn main() {\n    println!(\"hi\");\n}\n".into(),
        });
        assert_eq!(
            html,
            "<figure class=\"code\"><figcaption>rust</figcaption><pre><code class=\"d1\">\
             <span class=\"ln\">fn main() {\n</span><span class=\"ln\">    println!(&quot;hi&quot;);\n</span>\
             <span class=\"ln\">}\n</span></code></pre></figure>"
        );
        let long = code(&CodeConfig {
            language: "text".into(),
            code: "x\n".repeat(120),
        });
        assert!(
            long.contains("<code class=\"d3\">") && long.matches("class=\"ln\"").count() == 120
        );
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
