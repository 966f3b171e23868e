//! `/docs/pin-types` (CONTRACT.md 17): every pin type's catalogue example drawn by the one
//! renderer, beside the JSON Schema of its configuration and the example itself, on the
//! share pages' shell (their style sheet, allowed by its hash; no script).

use std::sync::OnceLock;

use maud::{html, PreEscaped};

use super::{page::page, pin_body, Page, View};
use crate::pin_types::PinType;

/// The catalogue's own layout (assets/catalogue.css, embedded at build time), added to the
/// share pages' style sheet.
const CSS: &str = include_str!("../../assets/catalogue.css");

/// The page, drawn once: the catalogue can't change while the process runs.
pub fn pin_types_page() -> Page {
    static PAGE: OnceLock<(String, String, String)> = OnceLock::new();
    let (html, fragment, csp) = PAGE.get_or_init(|| {
        let page = draw();
        (page.html, page.fragment, page.csp)
    });
    Page {
        found: true,
        html: html.clone(),
        fragment: fragment.clone(),
        csp: csp.clone(),
        referrer: "no-referrer",
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

fn draw() -> Page {
    let body = html! {
        header {
            h1 { "Pin types" }
        }
        div.intro {
            p {
                "Each of the " (PinType::ALL.len()) " pin types, its catalogue example drawn as boards draw it, \
                 beside the JSON Schema of its " code { "pin_config" } ". The same catalogue is "
                a href="/v1/pin-types" { code { "GET /v1/pin-types" } } "; the whole API is in the "
                a href="/docs" { "API reference" } "."
            }
            ul.toc {
                @for t in PinType::ALL {
                    li { a href=(format!("#{}", t.as_str())) { (t.as_str()) } }
                }
            }
        }
        main data-title="Pin types" {
            @for t in PinType::ALL {
                section."type" id=(t.as_str()) {
                    h2 { (t.description()) code { (t.as_str()) } }
                    section.pin aria-label=(format!("Example of {}", t.as_str())) {
                        h2 { "Example" }
                        (PreEscaped(pin_body(t.as_str(), &t.example().to_string())))
                    }
                    div.schema {
                        h3 { "JSON Schema of pin_config" }
                        pre { code { (pretty(&t.schema())) } }
                        details {
                            summary { "The example's pin_config" }
                            pre { code { (pretty(&t.example())) } }
                        }
                    }
                }
            }
        }
        footer { "Corkboard · " a href="/docs" { "API reference" } }
    };
    page("Pin types", body.into_string(), CSS, true, &View::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_is_drawn_beside_its_escaped_schema() {
        let page = pin_types_page();
        for t in PinType::ALL {
            assert!(page
                .html
                .contains(&format!("<section class=\"type\" id=\"{}\">", t.as_str())));
        }
        assert_eq!(
            page.html.matches("class=\"schema\"").count(),
            PinType::ALL.len()
        );
        assert!(
            !page.html.contains("can't be shown"),
            "every example renders"
        );
        assert!(
            page.html.contains("&quot;$schema&quot;") || page.html.contains("&quot;type&quot;")
        );
        assert!(!page.html.contains("<script"));
    }
}
