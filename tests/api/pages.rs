//! What the tests of web pages share: a response read whole, a browser-like client that
//! follows no redirects, and the check every page of ours passes (no inline code, which the
//! CSP would refuse).

use reqwest::{header, redirect::Policy, StatusCode};
use serde_json::Value;

/// A whole response: status, headers and body text.
pub struct Page {
    pub status: StatusCode,
    pub headers: header::HeaderMap,
    pub body: String,
}

impl Page {
    pub async fn read(res: reqwest::Response) -> Page {
        Page {
            status: res.status(),
            headers: res.headers().clone(),
            body: res.text().await.unwrap(),
        }
    }

    pub fn location(&self) -> &str {
        self.headers[header::LOCATION].to_str().unwrap()
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON: {}", self.body))
    }

    pub fn is_html(&self) -> bool {
        self.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    }

    /// The `Set-Cookie` of the session this response opened, whole (value and attributes).
    pub fn session_set(&self) -> String {
        self.headers
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .find(|v| v.starts_with("corkboard_session=") && !v.contains("Max-Age=0"))
            .unwrap_or_else(|| panic!("no session cookie: {:?}", self.headers))
    }

    /// The session cookie this response opened, as a `Cookie` header sends it (`name=value`).
    pub fn session(&self) -> String {
        let set = self.session_set();
        set.split(';').next().unwrap().to_owned()
    }

    /// The value of the read-only field `id` (a secret shown once).
    pub fn field(&self, id: &str) -> String {
        let at = self
            .body
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("no field {id}: {}", self.body));
        let rest = &self.body[at..];
        let value = rest.find("value=\"").unwrap() + 7;
        let end = rest[value..].find('"').unwrap();
        rest[value..value + end].to_owned()
    }
}

/// A client as a browser is to our pages, except that it follows no redirect (the tests
/// read where each one goes).
pub fn browser_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// Whether `html` has an inline event handler (` onclick=`, ...), an inline script or a
/// `javascript:` URL.
pub fn inline_code(html: &str) -> bool {
    let handler = html.split(" on").skip(1).any(|rest| {
        let name: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
        !name.is_empty() && rest[name.len()..].starts_with('=')
    });
    handler || html.contains("<script>") || html.contains("javascript:")
}
