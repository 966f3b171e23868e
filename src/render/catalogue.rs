//! `/docs/pin-types` (CONTRACT.md 17): every pin type's catalogue example drawn by the one
//! renderer, beside the JSON Schema of its configuration and the example itself, on the
//! share pages' shell (their style sheet, allowed by its hash; no script).

use std::sync::OnceLock;

use maud::{html, PreEscaped};

use super::{
    page::{page, Body},
    pin_body, Page,
};
use crate::pin_types::PinType;

/// The catalogue's own layout (assets/catalogue.css, embedded at build time), added to the
/// share pages' style sheet.
const CSS: &str = include_str!("../../assets/catalogue.css");

/// The page, drawn once: the catalogue can't change while the process runs.
pub fn pin_types_page() -> Page {
    static PAGE: OnceLock<Page> = OnceLock::new();
    PAGE.get_or_init(draw).clone()
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

fn draw() -> Page {
    let top = html! {
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
                    li { a href={ "#" (t.as_str()) } { (t.as_str()) } }
                }
            }
        }
    };
    let main = html! {
        main data-title="Pin types" {
            @for t in PinType::ALL {
                section."type" id=(t.as_str()) {
                    h2 { (t.description()) code { (t.as_str()) } }
                    section.pin aria-label={ "Example of " (t.as_str()) } {
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
    };
    let bottom = html! {
        footer { "Corkboard · " a href="/docs" { "API reference" } }
    };
    page("Pin types", Body { top, main, bottom }, CSS, true)
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
