//! The scripts and the linked style sheet of the pages, embedded in the binary at build
//! time and served at `/assets/<name>-<hash>.<ext>` (one route, `api::share`): the hash of
//! what is served is in the name, so a browser keeps each for good and a new build's
//! asset has a new name.
//!
//! Scripts are served minified (the `minifier` crate, once, at first use): their sources
//! keep the comments that explain them, and a viewer loads none of those. live.js, which
//! every live page loads, goes from 3.2 to 2.0 kB gzipped.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// One embedded asset.
pub struct Asset {
    name: &'static str,
    kind: Kind,
    source: &'static str,
    served: OnceLock<Served>,
}

#[derive(Clone, Copy)]
enum Kind {
    Script,
    Style,
}

/// What is served of an asset: its text and the path that names it.
struct Served {
    path: String,
    text: String,
}

impl Asset {
    const fn script(name: &'static str, source: &'static str) -> Asset {
        Asset {
            name,
            kind: Kind::Script,
            source,
            served: OnceLock::new(),
        }
    }

    const fn style(name: &'static str, source: &'static str) -> Asset {
        Asset {
            name,
            kind: Kind::Style,
            source,
            served: OnceLock::new(),
        }
    }

    fn served(&self) -> &Served {
        self.served.get_or_init(|| {
            let (text, ext) = match self.kind {
                Kind::Script => (minifier::js::minify(self.source).to_string(), "js"),
                Kind::Style => (self.source.to_owned(), "css"),
            };
            let path = hashed_path(self.name, ext, &text);
            Served { path, text }
        })
    }

    /// Where the asset is served (`/assets/<name>-<hash>.<ext>`).
    pub fn path(&self) -> &str {
        &self.served().path
    }

    /// What is served.
    pub fn text(&self) -> &str {
        &self.served().text
    }

    pub fn content_type(&self) -> &'static str {
        match self.kind {
            Kind::Script => "text/javascript; charset=utf-8",
            Kind::Style => "text/css; charset=utf-8",
        }
    }
}

/// The page script of live pages (assets/live.js).
pub static LIVE: Asset = Asset::script("live", include_str!("../../assets/live.js"));
/// Kiosk mode's script (assets/kiosk.js): fits the board to the screen, in pages when it
/// must.
pub static KIOSK: Asset = Asset::script("kiosk", include_str!("../../assets/kiosk.js"));
/// The board editor's script (assets/editor.js).
pub static EDITOR: Asset = Asset::script("editor", include_str!("../../assets/editor.js"));
/// The style sheet of the web app's own controls (assets/editor.css).
pub static EDITOR_STYLE: Asset = Asset::style("editor", include_str!("../../assets/editor.css"));
/// A playlist's turn (assets/play.js).
pub static PLAY: Asset = Asset::script("play", include_str!("../../assets/play.js"));
/// The settings pages' script (assets/settings.js).
pub static SETTINGS: Asset = Asset::script("settings", include_str!("../../assets/settings.js"));
/// The API reference's script (assets/docs.js).
pub static DOCS: Asset = Asset::script("docs", include_str!("../../assets/docs.js"));

/// `/assets/<name>-<hash>.<ext>` for `text`: the first 6 bytes of its SHA-256, in hex.
pub fn hashed_path(name: &str, ext: &str, text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("/assets/{name}-{hex}.{ext}")
}

/// The asset served at `path`, if any.
pub fn find(path: &str) -> Option<&'static Asset> {
    [
        &LIVE,
        &KIOSK,
        &EDITOR,
        &EDITOR_STYLE,
        &PLAY,
        &SETTINGS,
        &DOCS,
    ]
    .into_iter()
    .find(|asset| asset.path() == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_served_smaller_under_their_hash() {
        let text = LIVE.text();
        assert!(text.len() < LIVE.source.len() * 3 / 4, "{}", text.len());
        assert!(!text.contains("// "), "comments left in {text}");
        assert!(text.contains("EventSource"));
        assert!(std::ptr::eq(find(LIVE.path()).expect("found"), &LIVE));
        assert!(find("/assets/live-000000000000.js").is_none());
        assert_eq!(EDITOR_STYLE.text(), EDITOR_STYLE.source);
        assert!(EDITOR_STYLE.path().ends_with(".css"));
    }
}
