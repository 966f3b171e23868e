//! Status rules (CONTRACT.md 15): a pin may carry rules that read a number of its rendered
//! configuration and give it a `status` (`ok`, `warning`, `critical`). The first rule whose
//! path holds a number satisfying it decides; no rule matching is `ok`; no rules at all is
//! no status (`null`).
//!
//! A pin whose configuration names no dataset gets its status as it is written
//! ([`restate`]); a templated one is marked for the status sweep ([`sweep`]), which reads it
//! again against its datasets, as it does for every templated pin with rules when a dataset
//! of its workspace changes (the mark is set in the dataset write's transaction, so no
//! change is lost to a crash). A status the sweep changes is a new version of the pin with a
//! `pin.status` event, so every write decided from an older read is decided again.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    error::{Error, Result},
    store::{Logged, Pin, StatusMark, Store},
    templates::{self, Path, Renderer, Step},
};

/// Most rules on one pin.
pub const MAX_RULES: usize = 20;
/// Longest rule path, in characters.
const PATH_CHARS: usize = 256;
/// A rule's path: `pin_config`, then `.key` and `[n]` steps.
pub const PATH_PATTERN: &str = r"^pin_config(\.[A-Za-z0-9_-]+|\[[0-9]+\])*$";

/// What a pin's status says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warning,
    Critical,
}

impl Status {
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warning => "warning",
            Status::Critical => "critical",
        }
    }
}

/// How a rule compares the number it reads with its `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Gt,
    Gte,
    Lt,
    Lte,
    Eq,
    Ne,
}

impl Op {
    fn holds(self, actual: f64, expected: f64) -> bool {
        match self {
            Op::Gt => actual > expected,
            Op::Gte => actual >= expected,
            Op::Lt => actual < expected,
            Op::Lte => actual <= expected,
            Op::Eq => actual == expected,
            Op::Ne => actual != expected,
        }
    }
}

/// One rule: when the number at `path` compares with `value` by `op`, the pin is `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(example = serde_json::json!({"path": "pin_config.cards[0].value", "op": "gt", "value": 90, "status": "critical"}))]
pub struct StatusRule {
    /// Where the number is read, in the rendered configuration: `pin_config`, then `.key`
    /// and `[n]` steps, e.g. `pin_config.cards[0].value`. A string there gives its first
    /// number (`"$1,234.5"` reads 1234.5).
    #[schemars(length(max = PATH_CHARS), regex(pattern = PATH_PATTERN))]
    pub path: String,
    pub op: Op,
    /// Kept as sent (`90` stays `90`), compared as a double.
    pub value: serde_json::Number,
    pub status: Status,
}

/// The steps of `path` after `pin_config`, or `None` when it is not a rule path (the
/// templates' path syntax, whose first name must be `pin_config`).
fn steps(path: &str) -> Option<Vec<Step<'_>>> {
    Path::parse_any_index(path)
        .filter(|path| path.name == "pin_config")
        .map(|path| path.steps)
}

/// Checks the rules of a create or update (`field` is where they were sent) and gives
/// what is stored: their JSON, or `None` for no rules (`null` or `[]`).
pub fn check(rules: Option<Vec<StatusRule>>, field: &str) -> Result<Option<String>> {
    let Some(rules) = rules.filter(|rules| !rules.is_empty()) else {
        return Ok(None);
    };
    if rules.len() > MAX_RULES {
        return Err(Error::validation(
            field,
            format!("at most {MAX_RULES} rules"),
        ));
    }
    for (i, rule) in rules.iter().enumerate() {
        if rule.path.chars().count() > PATH_CHARS || steps(&rule.path).is_none() {
            return Err(Error::validation(
                format!("{field}[{i}].path"),
                "a path into the configuration: pin_config, then .key and [n] steps (e.g. pin_config.cards[0].value), at most 256 characters",
            ));
        }
    }
    serde_json::to_string(&rules)
        .map(Some)
        .map_err(Error::internal)
}

/// The value at `path` of `config` (the configuration itself is `pin_config`).
fn lookup<'v>(config: &'v Value, path: &str) -> Option<&'v Value> {
    steps(path)?
        .into_iter()
        .try_fold(config, |value, step| match step {
            Step::Key(key) => value.get(key),
            Step::Index(i) => value.get(i),
        })
}

/// The number a rule reads from `value`: a JSON number, or the first number written in a
/// string (thousands separators ignored: `"$1,234.5M"` is 1234.5, `"-3%"` is -3).
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(text) => first_number(text),
        _ => None,
    }
}

fn first_number(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let start = bytes.iter().position(u8::is_ascii_digit)?;
    let mut digits = String::new();
    if start > 0 && bytes[start - 1] == b'.' {
        digits.push_str("0.");
    }
    let negative = {
        let sign_at = if digits.is_empty() { start } else { start - 1 };
        sign_at > 0 && bytes[sign_at - 1] == b'-'
    };
    let mut seen_point = !digits.is_empty();
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b @ b'0'..=b'9' => digits.push(char::from(b)),
            // A separator between digits, as in 1,234,567.
            b',' if !seen_point && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {}
            b'.' if !seen_point && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                seen_point = true;
                digits.push('.');
            }
            _ => break,
        }
        i += 1;
    }
    let value: f64 = digits.parse().ok()?;
    Some(if negative { -value } else { value })
}

/// The status `rules` (stored JSON) give `config` (rendered).
pub fn evaluate(rules: &[StatusRule], config: &Value) -> Status {
    rules
        .iter()
        .find(|rule| {
            lookup(config, &rule.path)
                .and_then(number)
                .zip(rule.value.as_f64())
                .is_some_and(|(actual, expected)| rule.op.holds(actual, expected))
        })
        .map_or(Status::Ok, |rule| rule.status)
}

/// The rules a pin stores.
pub fn stored_rules(pin: &Pin) -> Result<Option<Vec<StatusRule>>> {
    pin.status_rules
        .as_deref()
        .map(|text| {
            serde_json::from_str(text).map_err(|e| Error::internal_in("stored status rules", e))
        })
        .transpose()
}

/// The status of `pin` with its configuration as written (`rendered` when its templates
/// have been resolved): `None` without rules.
pub fn status_of(pin: &Pin, config: &str) -> Result<Option<Status>> {
    let Some(rules) = stored_rules(pin)? else {
        return Ok(None);
    };
    let config: Value =
        serde_json::from_str(config).map_err(|e| Error::internal_in("pin configuration", e))?;
    Ok(Some(evaluate(&rules, &config)))
}

/// Sets the status of a pin being written. One whose configuration names a dataset keeps
/// its status until the sweep has read it against its datasets ([`Pin::status_due`]); any
/// other gets it now.
pub fn restate(pin: &mut Pin) -> Result<()> {
    if pin.status_rules.is_none() {
        pin.status = None;
    } else if !crate::templates::json_names_any(&pin.pin_config) {
        pin.status = status_of(pin, &pin.pin_config)?.map(|s| s.as_str().to_owned());
    }
    Ok(())
}

/// Gives each new pin of `pins` with rules and templates its status read against the
/// workspace's datasets now, as the sweep would (a create answers with its status).
pub async fn read_new(store: &Store, ws: &str, pins: &mut [Pin]) -> Result<()> {
    let mut names = BTreeSet::new();
    let mut templated = Vec::new();
    for (i, pin) in pins.iter().enumerate() {
        if pin.status_due().is_some() {
            let config: Value = serde_json::from_str(&pin.pin_config)
                .map_err(|e| Error::internal_in("pin configuration", e))?;
            templates::referenced(&config, &mut names);
            templated.push((i, config));
        }
    }
    if templated.is_empty() {
        return Ok(());
    }
    let datasets = crate::datasets::ops::named_in(store, ws, &names).await?;
    for (i, config) in templated {
        if let Some(rules) = stored_rules(&pins[i])? {
            let rendered = Renderer::new(&datasets).value(&config, "pin_config");
            pins[i].status = Some(evaluate(&rules, &rendered).as_str().to_owned());
        }
    }
    Ok(())
}

/// Reads the pins marked for the status sweep (at most `limit`) against their datasets,
/// stores each status that changed (a new version, logged as `pin.status`) and clears the
/// marks dealt with. A pin written meanwhile keeps its mark for the next sweep. Returns how
/// many marks were read.
pub async fn sweep(store: &Store, retention: u32, limit: i64) -> Result<usize> {
    let marks = store.status_marks(limit).await?;
    let read = marks.len();
    let mut by_workspace: BTreeMap<String, Vec<StatusMark>> = BTreeMap::new();
    for mark in marks {
        by_workspace
            .entry(mark.workspace_id.clone())
            .or_default()
            .push(mark);
    }
    for (ws, marks) in by_workspace {
        let mut names = BTreeSet::new();
        let configs = marks
            .iter()
            .map(|mark| {
                let config: Value = serde_json::from_str(&mark.pin.pin_config)
                    .map_err(|e| Error::internal_in("stored configuration", e))?;
                templates::referenced(&config, &mut names);
                Ok(config)
            })
            .collect::<Result<Vec<_>>>()?;
        let datasets = crate::datasets::ops::named_in(store, &ws, &names).await?;
        // Marks dealt with: (pin id, version now, mark).
        let mut cleared = Vec::with_capacity(marks.len());
        // The changed statuses go to the group commit together, sharing its commits.
        let mut changes = tokio::task::JoinSet::new();
        for (mark, config) in marks.into_iter().zip(configs) {
            let status = match stored_rules(&mark.pin)? {
                Some(rules) => {
                    let rendered = Renderer::new(&datasets).value(&config, "pin_config");
                    Some(evaluate(&rules, &rendered).as_str().to_owned())
                }
                None => None,
            };
            if status == mark.pin.status {
                cleared.push((mark.pin.id, mark.pin.version, mark.due));
                continue;
            }
            let mut new = mark.pin.clone();
            new.status = status;
            new.version += 1;
            new.updated_at = crate::clock::now_ms().max(new.updated_at);
            let (store, ws) = (store.clone(), ws.clone());
            changes.spawn(async move {
                let stored = store
                    .update_read(&ws, mark.pin, new, retention, Logged::Status)
                    .await?;
                Ok::<_, Error>(stored.map(|pin| (pin.id, pin.version, mark.due)))
            });
        }
        while let Some(changed) = changes.join_next().await {
            // A pin that moved on keeps its mark: the next sweep reads it again.
            if let Some(done) = changed.map_err(Error::internal)?? {
                cleared.push(done);
            }
        }
        store.clear_status_marks(&ws, &cleared).await?;
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(path: &str, op: Op, value: f64, status: Status) -> StatusRule {
        StatusRule {
            path: path.into(),
            op,
            value: serde_json::Number::from_f64(value).expect("finite"),
            status,
        }
    }

    #[test]
    fn numbers_are_read_from_strings_as_people_write_them() {
        assert_eq!(first_number("$1,234.5M"), Some(1234.5));
        assert_eq!(first_number("-3%"), Some(-3.0));
        assert_eq!(first_number("p99 = 12 ms"), Some(99.0));
        assert_eq!(first_number(".5 s"), Some(0.5));
        assert_eq!(first_number("1,2"), Some(12.0));
        assert_eq!(first_number("3."), Some(3.0));
        assert_eq!(first_number("none"), None);
        assert_eq!(number(&json!(7.25)), Some(7.25));
        assert_eq!(number(&json!(true)), None);
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let rules = [
            rule("pin_config.cards[0].value", Op::Gte, 90.0, Status::Critical),
            rule("pin_config.cards[0].value", Op::Gt, 75.0, Status::Warning),
        ];
        let config = |v: Value| json!({"cards": [{"title": "CPU", "value": v}]});
        assert_eq!(evaluate(&rules, &config(json!(95))), Status::Critical);
        assert_eq!(evaluate(&rules, &config(json!("80 %"))), Status::Warning);
        assert_eq!(evaluate(&rules, &config(json!("12"))), Status::Ok);
        assert_eq!(evaluate(&rules, &config(json!("n/a"))), Status::Ok);
        assert_eq!(evaluate(&rules, &json!({})), Status::Ok);
    }

    #[test]
    fn paths_start_at_the_configuration() {
        assert!(steps("pin_config").is_some());
        assert!(steps("pin_config.rows[2].cells.cpu").is_some());
        assert!(steps("config.value").is_none());
        assert!(steps("pin_config.").is_none());
        assert!(steps("pin_config[x]").is_none());
        assert!(steps("pin_config[1").is_none());
        assert!(steps("pin_config[99999999999999999999999]").is_some());
        let long = format!("pin_config.{}", "a".repeat(300));
        assert!(check(
            Some(vec![rule(&long, Op::Eq, 1.0, Status::Ok)]),
            "status_rules"
        )
        .is_err());
        let many = vec![rule("pin_config.v", Op::Eq, 1.0, Status::Ok); MAX_RULES + 1];
        assert!(check(Some(many), "status_rules").is_err());
        assert_eq!(check(Some(Vec::new()), "status_rules").ok(), Some(None));
    }
}
