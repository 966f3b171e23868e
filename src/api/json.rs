//! [`ApiJson`]: our JSON body extractor. Every way a body can be wrong becomes the error
//! envelope: 415 for a non-JSON content type, 413 over the size limit, 400 with the exact
//! field path for malformed or mistyped JSON.

use axum::{
    body::Bytes,
    extract::{FromRequest, Request},
    http::header::CONTENT_TYPE,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{app::AppState, error::Error, pin_types, wire::parse_body};

/// A parsed JSON body, with the bytes it came from (idempotency keys hash them).
pub struct ApiJson<T>(pub T, pub Bytes);

fn is_json(req: &Request) -> bool {
    let Some(ct) = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// Nesting depth of a JSON text, counted without parsing it (brackets outside strings).
fn depth(bytes: &[u8]) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    max = max.max(depth);
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    max
}

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Error> {
        if !is_json(&req) {
            return Err(Error::UnsupportedMediaType);
        }
        let limit = state.limits().body_bytes;
        let bytes = axum::body::to_bytes(req.into_body(), limit)
            .await
            .map_err(|_| Error::PayloadTooLarge { limit })?;
        // Through a JSON value, so that objects must be objects (serde would also take a
        // struct as an array) and every error names its field.
        let value = parse_value(&bytes, state.limits().json_depth)?;
        // Moved into `T`, not copied (a batch's items stay the `Value`s parsed here). Only a
        // body that fails is read again, borrowed, to name the field and what it expects.
        if let Ok(body) = pin_types::deserialize_owned::<T>(value) {
            return Ok(ApiJson(body, bytes));
        }
        parse_body::<T>(&parse_json(&bytes)?, "").map(|v| ApiJson(v, bytes))
    }
}

/// The body of `PATCH /pins/{id}`: an update (`application/json`, only the fields sent
/// change) or a merge patch (`application/merge-patch+json`, CONTRACT.md 14).
pub enum PatchBody<T> {
    Update(T),
    Merge(Value),
}

impl<T: DeserializeOwned> FromRequest<AppState> for PatchBody<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Error> {
        let merge = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|ct| ct.split(';').next())
            .is_some_and(|mime| {
                mime.trim()
                    .eq_ignore_ascii_case(crate::pins::merge::MEDIA_TYPE)
            });
        if merge {
            let ApiJson(patch, _) = ApiJson::<Value>::from_request(req, state).await?;
            return Ok(PatchBody::Merge(patch));
        }
        let ApiJson(body, _) = ApiJson::<T>::from_request(req, state).await?;
        Ok(PatchBody::Update(body))
    }
}

/// Any JSON body as a value: nested at most `max_depth` deep, without U+0000 (400
/// `VALIDATION_FAILED` naming where, `body` for the whole).
pub(crate) fn parse_value(bytes: &[u8], max_depth: usize) -> Result<Value, Error> {
    if depth(bytes) > max_depth {
        return Err(Error::validation(
            "body",
            format!("JSON nested at most {max_depth} deep"),
        ));
    }
    let value = parse_json(bytes)?;
    if let Some(field) = nul_in(bytes, &value) {
        return Err(Error::validation(
            if field.is_empty() {
                "body".into()
            } else {
                field
            },
            NO_NUL,
        ));
    }
    Ok(value)
}

fn parse_json(bytes: &[u8]) -> Result<Value, Error> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::validation("body", format!("valid JSON ({e})")))
}

/// What a string may not hold: PostgreSQL can't store U+0000 in text, so neither store
/// accepts it (one contract on both).
pub(crate) const NO_NUL: &str = "text without NUL (U+0000) characters";

/// The path of the first string or key holding U+0000, `""` for the root.
///
/// JSON can only carry U+0000 as the escape `\u0000`, so a body without that text is not
/// walked; the path is built only for the one value found.
fn nul_in(body: &[u8], value: &Value) -> Option<String> {
    let escaped = body
        .split(|&b| b == b'\\')
        .skip(1)
        .any(|after| after.starts_with(b"u0000"));
    if !escaped {
        return None;
    }
    let steps = nul_steps(value)?;
    let mut path = String::new();
    for step in steps.iter().rev() {
        match step {
            Step::Index(i) => path.push_str(&format!("[{i}]")),
            Step::Key(key) if path.is_empty() => path.push_str(key),
            Step::Key(key) => {
                path.push('.');
                path.push_str(key);
            }
        }
    }
    Some(path)
}

enum Step<'a> {
    Index(usize),
    Key(&'a str),
}

/// The steps to the first string or key holding U+0000, innermost first.
fn nul_steps(value: &Value) -> Option<Vec<Step<'_>>> {
    match value {
        Value::String(text) => text.contains('\0').then(Vec::new),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let mut steps = nul_steps(item)?;
            steps.push(Step::Index(i));
            Some(steps)
        }),
        Value::Object(map) => map.iter().find_map(|(key, item)| {
            let mut steps = if key.contains('\0') {
                Vec::new()
            } else {
                nul_steps(item)?
            };
            steps.push(Step::Key(key));
            Some(steps)
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{depth, nul_in};

    #[test]
    fn nul_is_found_with_its_path() {
        let found = |body: &str| nul_in(body.as_bytes(), &serde_json::from_str(body).unwrap());
        assert_eq!(
            found(r#"{"a": [1, {"b": "x\u0000y"}], "c": "ok"}"#),
            Some("a[1].b".into())
        );
        assert_eq!(found(r#"{"k\u0000": 1}"#), Some("k\0".into()));
        assert_eq!(found(r#""\u0000""#), Some(String::new()));
        assert_eq!(found(r#"{"ok": ["fine"]}"#), None);
        // An escaped backslash before `u0000` is no NUL.
        assert_eq!(found(r#"{"ok": ["\\u0000"]}"#), None);
    }

    #[test]
    fn depth_ignores_brackets_in_strings() {
        assert_eq!(depth(br#"{"a": [1, {"b": "[[[{{"}]}"#), 3);
        assert_eq!(depth(br#""\"[""#), 0);
        assert_eq!(depth(b"[[[[]]]]"), 4);
    }
}
