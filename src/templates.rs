//! The one template resolver: `{{name.path}}` inside strings of pin configurations and
//! blocks refers to a value of the workspace's dataset `name` (CONTRACT.md section 7).
//!
//! Everything here is pure: callers load the datasets a value refers to ([`referenced`]),
//! then resolve with a [`Renderer`], which collects a [`Warning`] for every variable it
//! could not fill. Resolution is text substitution in one left-to-right pass over the text
//! as written, so a dataset value that itself contains `{{...}}` is inserted literally and
//! never resolved again: templates cannot recurse, loop or run code.
//!
//! Syntax: `{{` optional spaces, a dataset name `[a-z0-9_]{1,64}`, then any number of
//! `.key` (`[A-Za-z0-9_-]+`) and `[n]` (a decimal index), optional spaces, `}}`. Anything
//! else between braces (`{{}}`, `{{Bad-Name}}`, an unclosed `{{`) is ordinary text: it is
//! kept as written and gives no warning, so prose that happens to hold braces survives.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::io;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

/// Datasets by name: a json dataset's data, or a markdown dataset's text as Value::String.
pub type Datasets = HashMap<String, Value>;

/// A variable that resolved to the empty string, and why; listed beside a rendered
/// record (`render.warnings`) so an author can see which template to fix.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Warning {
    /// Where the variable was written, e.g. `pin_config.cards[0].value`.
    pub field: String,
    /// The text between the braces, trimmed, e.g. `sales.regions[0].total`.
    pub variable: String,
    /// `dataset_not_found`, `path_not_found` or `size_limit`.
    pub reason: String,
}

/// Max bytes a rendered pin may grow by substitutions (1 MiB).
///
/// Without a cap, a 64 KiB text naming a 1 MiB dataset thousands of times would
/// render to gigabytes.
pub const MAX_RENDERED_BYTES: usize = 1 << 20;

const DATASET_NOT_FOUND: &str = "dataset_not_found";
const PATH_NOT_FOUND: &str = "path_not_found";
const SIZE_LIMIT: &str = "size_limit";

/// Longest dataset name, as for dataset records.
const MAX_NAME_LEN: usize = 64;

/// Adds to `names` every dataset name referenced by any string inside `value` (walks objects, arrays).
///
/// Callers load exactly these datasets before rendering, instead of the whole workspace.
/// Object keys are not templated, so they are not looked at.
pub fn referenced(value: &Value, names: &mut BTreeSet<String>) {
    match value {
        Value::String(text) => {
            for found in Variables::new(text) {
                names.insert(found.path.name.to_owned());
            }
        }
        Value::Array(items) => items.iter().for_each(|item| referenced(item, names)),
        Value::Object(fields) => fields.values().for_each(|item| referenced(item, names)),
        _ => {}
    }
}

/// Whether any string inside `value` names a dataset: a write of it is a read of datasets
/// when it renders, so it needs `datasets:read`.
pub fn names_any(value: &Value) -> bool {
    let mut names = BTreeSet::new();
    referenced(value, &mut names);
    !names.is_empty()
}

/// [`names_any`] of stored JSON text; text without `{{` is answered without parsing it.
pub fn json_names_any(json: &str) -> bool {
    json.contains("{{") && serde_json::from_str::<Value>(json).is_ok_and(|v| names_any(&v))
}

/// The dataset name of a bare path such as `sales.regions[0].total` (for conditionals' `var`), None if invalid.
///
/// A bare path is what goes between the braces, without the braces and without spaces.
pub fn dataset_of(path: &str) -> Option<&str> {
    Path::parse(path).map(|p| p.name)
}

/// One step of a path after its first name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step<'p> {
    Key(&'p str),
    Index(usize),
}

/// A parsed bare path: a first name (a dataset's; a status rule's `pin_config`) and steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Path<'p> {
    pub(crate) name: &'p str,
    pub(crate) steps: Vec<Step<'p>>,
}

impl<'p> Path<'p> {
    /// Parses `name(.key|[n])*`; None for anything else (spaces included, and an index
    /// past `usize`: a template's variable is then left as written).
    pub(crate) fn parse(path: &'p str) -> Option<Self> {
        Self::parse_indexing(path, |digits| digits.parse().ok())
    }

    /// [`Path::parse`], but an index past `usize` is a step that reads nothing (a status
    /// rule's path: its schema allows any digits, so such a path must be accepted).
    pub(crate) fn parse_any_index(path: &'p str) -> Option<Self> {
        Self::parse_indexing(path, |digits| Some(digits.parse().unwrap_or(usize::MAX)))
    }

    fn parse_indexing(path: &'p str, index: fn(&str) -> Option<usize>) -> Option<Self> {
        let name_end = path.find(['.', '[']).unwrap_or(path.len());
        let name = &path[..name_end];
        let name_ok = (1..=MAX_NAME_LEN).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !name_ok {
            return None;
        }
        let mut steps = Vec::new();
        let mut rest = &path[name_end..];
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                let end = after.find(['.', '[']).unwrap_or(after.len());
                let key = &after[..end];
                let key_ok = !key.is_empty()
                    && key
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if !key_ok {
                    return None;
                }
                steps.push(Step::Key(key));
                rest = &after[end..];
            } else if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']')?;
                let digits = &after[..end];
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                steps.push(Step::Index(index(digits)?));
                rest = &after[end + 1..];
            } else {
                return None;
            }
        }
        Some(Path { name, steps })
    }
}

/// A variable found in a text: the byte range of `{{...}}` and its parsed path.
struct Found<'t> {
    start: usize,
    end: usize,
    /// The text between the braces, trimmed.
    variable: &'t str,
    path: Path<'t>,
}

/// The variables of a text, left to right, never overlapping.
///
/// Linear in the text: a candidate `{{` is scanned only over bytes a variable may hold
/// (no `{`), so a run of braces cannot make the scan quadratic.
struct Variables<'t> {
    text: &'t str,
    search: usize,
}

impl<'t> Variables<'t> {
    fn new(text: &'t str) -> Self {
        Variables { text, search: 0 }
    }
}

/// Bytes that may appear between the braces of a variable.
fn in_variable(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'[' | b']' | b' ')
}

impl<'t> Iterator for Variables<'t> {
    type Item = Found<'t>;

    fn next(&mut self) -> Option<Found<'t>> {
        loop {
            let start = self.search + self.text.get(self.search..)?.find("{{")?;
            let inner_start = start + 2;
            let after = &self.text.as_bytes()[inner_start..];
            let inner_end = inner_start
                + after
                    .iter()
                    .position(|&b| !in_variable(b))
                    .unwrap_or(after.len());
            if self.text[inner_end..].starts_with("}}") {
                let variable = self.text[inner_start..inner_end].trim_matches(' ');
                if let Some(path) = Path::parse(variable) {
                    self.search = inner_end + 2;
                    return Some(Found {
                        start,
                        end: inner_end + 2,
                        variable,
                        path,
                    });
                }
            }
            // `{{{a}}}` holds the variable `{{a}}` one byte further on.
            self.search = start + 1;
        }
    }
}

/// What is known of a non-string value's compact JSON length.
#[derive(Debug, Clone, Copy)]
enum Size {
    Exact(usize),
    /// Longer than this many bytes (measuring stopped there).
    Over(usize),
}

/// An `io::Write` that only counts, and gives up once past `cap` bytes, so measuring a
/// value costs at most the budget left, not the value's size.
struct Counter {
    written: usize,
    cap: usize,
}

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.written += buf.len();
        if self.written > self.cap {
            return Err(io::Error::other("over the rendering budget"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Resolves templates against a set of datasets under a byte budget, collecting warnings.
///
/// One renderer serves one record (a pin with its blocks), so the budget and the warnings
/// cover everything the reader receives together.
pub struct Renderer<'a> {
    datasets: &'a Datasets,
    budget: usize,
    remaining: usize,
    warnings: Vec<Warning>,
    /// Compact JSON lengths of non-string values already measured, by address (the
    /// values are borrowed for `'a`, so addresses are stable), so a value named many
    /// times is serialised to measure it once.
    sizes: HashMap<usize, Size>,
}

impl<'a> Renderer<'a> {
    /// A renderer with the budget [`MAX_RENDERED_BYTES`].
    pub fn new(datasets: &'a Datasets) -> Self {
        Self::with_budget(datasets, MAX_RENDERED_BYTES)
    }

    /// A renderer that lets substitutions add at most `bytes` bytes in total (tests use
    /// small budgets).
    pub fn with_budget(datasets: &'a Datasets, bytes: usize) -> Self {
        Renderer {
            datasets,
            budget: bytes,
            remaining: bytes,
            warnings: Vec::new(),
            sizes: HashMap::new(),
        }
    }

    /// Resolves every string inside `value` (object keys are NOT templated, only string values); `field` is the path of `value` itself, e.g. "pin_config"; nested fields are named like `pin_config.cards[0].value` (object keys joined by '.', array items as `[i]`).
    pub fn value(&mut self, value: &Value, field: &str) -> Value {
        let mut path = field.to_owned();
        self.walk(value, &mut path)
    }

    /// [`Renderer::value`] with one path buffer for the whole walk.
    fn walk(&mut self, value: &Value, path: &mut String) -> Value {
        match value {
            Value::String(text) => Value::String(self.text(text, path)),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    out.push(self.walk(item, path));
                    path.truncate(len);
                }
                Value::Array(out)
            }
            Value::Object(fields) => {
                let mut out = serde_json::Map::new();
                for (key, item) in fields {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                    out.insert(key.clone(), self.walk(item, path));
                    path.truncate(len);
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }

    /// Resolves the variables of one text; `field` names it in warnings.
    ///
    /// The result is always a string, even when `text` is exactly one variable naming a
    /// number: a configuration keeps the shape it was validated with.
    pub fn text(&mut self, text: &str, field: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for found in Variables::new(text) {
            out.push_str(&text[copied..found.start]);
            copied = found.end;
            let reason = match self.resolve(&found.path) {
                Ok(value) if self.substitute(value, &mut out) => continue,
                Ok(_) => SIZE_LIMIT,
                Err(reason) => reason,
            };
            self.warnings.push(Warning {
                field: field.to_owned(),
                variable: found.variable.to_owned(),
                reason: reason.to_owned(),
            });
        }
        out.push_str(&text[copied..]);
        out
    }

    /// Looks a bare path (no braces) up in the datasets: None when the dataset or path is missing.
    ///
    /// Conditional blocks test their `var` with it.
    pub fn lookup(&self, path: &str) -> Option<&'a Value> {
        self.resolve(&Path::parse(path)?).ok()
    }

    /// The bytes substitutions have added so far.
    pub fn spent(&self) -> usize {
        self.budget - self.remaining
    }

    /// Whether a value was left out for the budget (a `size_limit` warning).
    pub fn ran_out(&self) -> bool {
        self.warnings.iter().any(|w| w.reason == SIZE_LIMIT)
    }

    /// The warnings collected so far, in the order the variables were met.
    pub fn into_warnings(self) -> Vec<Warning> {
        self.warnings
    }

    /// The value at `path`, or the warning reason why there is none.
    fn resolve(&self, path: &Path<'_>) -> Result<&'a Value, &'static str> {
        let mut value = self.datasets.get(path.name).ok_or(DATASET_NOT_FOUND)?;
        for step in &path.steps {
            let next = match (step, value) {
                (Step::Key(key), Value::Object(fields)) => fields.get(*key),
                (Step::Index(i), Value::Array(items)) => items.get(*i),
                _ => None,
            };
            value = next.ok_or(PATH_NOT_FOUND)?;
        }
        Ok(value)
    }

    /// Appends `value` in its text form to `out` and charges it to the budget; false
    /// (nothing appended) when it does not fit what is left.
    fn substitute(&mut self, value: &'a Value, out: &mut String) -> bool {
        if let Value::String(text) = value {
            if text.len() > self.remaining {
                return false;
            }
            self.remaining -= text.len();
            out.push_str(text);
            return true;
        }
        match self.measure(value) {
            Some(len) => {
                self.remaining -= len;
                out.push_str(&value.to_string());
                true
            }
            None => false,
        }
    }

    /// The compact JSON length of `value` when it fits the budget left.
    fn measure(&mut self, value: &'a Value) -> Option<usize> {
        let key = std::ptr::from_ref(value) as usize;
        let size = match self.sizes.get(&key) {
            Some(Size::Exact(len)) => Size::Exact(*len),
            // The budget only shrinks: what did not fit then does not fit now.
            Some(Size::Over(cap)) if self.remaining <= *cap => return None,
            _ => {
                let mut counter = Counter {
                    written: 0,
                    cap: self.remaining,
                };
                let size = match serde_json::to_writer(&mut counter, value) {
                    Ok(()) => Size::Exact(counter.written),
                    Err(_) => Size::Over(self.remaining),
                };
                self.sizes.insert(key, size);
                size
            }
        };
        match size {
            Size::Exact(len) if len <= self.remaining => Some(len),
            _ => None,
        }
    }
}

/// A conditional block's comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    Contains,
    Exists,
}

impl Op {
    /// Every operator, in the order error messages list them.
    pub const ALL: [Op; 8] = [
        Op::Eq,
        Op::Ne,
        Op::Gt,
        Op::Gte,
        Op::Lt,
        Op::Lte,
        Op::Contains,
        Op::Exists,
    ];

    /// The wire name (`"gte"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Ne => "ne",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::Contains => "contains",
            Op::Exists => "exists",
        }
    }

    /// The operator of a wire name; None for anything else.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.as_str() == name)
    }
}

/// Whether `actual` (the looked-up var, None when missing) satisfies `op` against `expected`.
///
/// A missing `expected` compares as JSON `null` (except for `exists`, which ignores it).
/// - `exists`: `actual` is present and not `null`.
/// - `eq` / `ne`: JSON equality, deep, where numbers compare by value (`5` equals `5.0`);
///   a missing `actual` is never equal (`eq` false, `ne` true).
/// - `gt`, `gte`, `lt`, `lte`: two numbers compare by value, two strings
///   lexicographically (by Unicode scalar values); any other pair, or a missing `actual`,
///   is false (so `lt` is not the negation of `gte`).
/// - `contains`: a string `actual` holds the string `expected`; an array `actual` has an
///   element equal (as for `eq`) to `expected`; an object `actual` has the key `expected`
///   (a string); anything else is false.
pub fn holds(actual: Option<&Value>, op: Op, expected: Option<&Value>) -> bool {
    let expected = expected.unwrap_or(&Value::Null);
    let Some(actual) = actual else {
        return op == Op::Ne;
    };
    match op {
        Op::Exists => !actual.is_null(),
        Op::Eq => same(actual, expected),
        Op::Ne => !same(actual, expected),
        Op::Gt | Op::Gte | Op::Lt | Op::Lte => {
            let ordering = match (actual, expected) {
                (Value::Number(a), Value::Number(b)) => compare_numbers(a, b),
                (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
                _ => None,
            };
            ordering.is_some_and(|o| match op {
                Op::Gt => o == Ordering::Greater,
                Op::Gte => o != Ordering::Less,
                Op::Lt => o == Ordering::Less,
                _ => o != Ordering::Greater,
            })
        }
        Op::Contains => match (actual, expected) {
            (Value::String(a), Value::String(b)) => a.contains(b.as_str()),
            (Value::Array(items), _) => items.iter().any(|item| same(item, expected)),
            (Value::Object(fields), Value::String(key)) => fields.contains_key(key),
            _ => false,
        },
    }
}

/// JSON equality where numbers compare by value, at any depth.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| same(x, y)))
        }
        _ => a == b,
    }
}

/// Integers compare exactly (whole `i64` and `u64` ranges); otherwise as `f64`.
fn compare_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    fn integer(n: &Number) -> Option<i128> {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    }
    match (integer(a), integer(b)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn datasets() -> Datasets {
        let mut d = Datasets::new();
        d.insert(
            "sales".into(),
            json!({
                "total": 3.5,
                "count": 12,
                "up": true,
                "none": null,
                "label": "Q1",
                "regions": [{"name": "north", "total": 7}, {"name": "south", "total": 9}],
                "tags": ["a", "b"],
                "meta": {"k": "v"},
                "with-dash": "dashed",
                "nested": "{{sales.label}}"
            }),
        );
        d.insert("notes".into(), json!("# Notes\nhello"));
        d.insert("grid".into(), json!([[1, 2], [3, 4]]));
        d
    }

    /// Renders `text` with the standard datasets; returns the text and warnings.
    fn render(text: &str) -> (String, Vec<Warning>) {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let out = r.text(text, "f");
        (out, r.into_warnings())
    }

    fn warning(field: &str, variable: &str, reason: &str) -> Warning {
        Warning {
            field: field.into(),
            variable: variable.into(),
            reason: reason.into(),
        }
    }

    #[test]
    fn every_value_kind_substitutes_in_its_text_form() {
        let cases = [
            ("{{sales.label}}", "Q1"),
            ("{{sales.total}}", "3.5"),
            ("{{sales.count}}", "12"),
            ("{{sales.up}}", "true"),
            ("{{sales.none}}", "null"),
            ("{{sales.tags}}", r#"["a","b"]"#),
            ("{{sales.meta}}", r#"{"k":"v"}"#),
            ("{{notes}}", "# Notes\nhello"),
        ];
        for (text, expected) in cases {
            assert_eq!(render(text), (expected.to_owned(), vec![]), "{text}");
        }
    }

    #[test]
    fn paths_with_dots_and_indexes() {
        assert_eq!(render("{{sales.regions[1].total}}").0, "9");
        assert_eq!(render("{{sales.regions[0].name}}").0, "north");
        assert_eq!(render("{{grid[1][0]}}").0, "3");
        assert_eq!(render("{{sales.with-dash}}").0, "dashed");
        assert_eq!(
            render("Total: {{sales.total}} in {{sales.regions[0].name}}!").0,
            "Total: 3.5 in north!"
        );
    }

    #[test]
    fn spaces_inside_the_braces_are_allowed() {
        assert_eq!(render("{{ sales.total }}").0, "3.5");
        assert_eq!(render("{{sales.total   }}").0, "3.5");
        let (out, warnings) = render("{{  missing.x }}");
        assert_eq!(out, "");
        assert_eq!(
            warnings,
            vec![warning("f", "missing.x", "dataset_not_found")]
        );
    }

    #[test]
    fn invalid_syntax_is_left_as_written() {
        for text in [
            "{{}}",
            "{{ }}",
            "{{Bad-Name}}",
            "{{sales. total}}",
            "{{sales total}}",
            "{{sales..total}}",
            "{{sales.}}",
            "{{sales[]}}",
            "{{sales[-1]}}",
            "{{sales[x]}}",
            "{{sales[99999999999999999999999]}}",
            "{{sales.total",
            "{{sales.total}",
            "{ {sales.total}}",
            "{{sales.t\u{e9}}}",
            "{{sales\n}}",
            "plain text",
            "{{",
            "}}",
            "",
        ] {
            assert_eq!(render(text), (text.to_owned(), vec![]), "{text:?}");
        }
        let long = "a".repeat(65);
        let text = format!("{{{{{long}}}}}");
        assert_eq!(render(&text).0, text);
        let ok = "a".repeat(64);
        assert_eq!(
            render(&format!("{{{{{ok}}}}}")).1,
            vec![warning("f", &ok, "dataset_not_found")]
        );
    }

    #[test]
    fn braces_around_a_variable_stay() {
        assert_eq!(render("{{{sales.label}}}").0, "{Q1}");
        assert_eq!(render("{{ {{sales.label}} }}").0, "{{ Q1 }}");
        assert_eq!(render("{{x{{sales.label}}").0, "{{xQ1");
    }

    #[test]
    fn each_warning_reason_names_its_field() {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let config = json!({
            "title": "{{nope.x}}",
            "cards": [{"value": "{{sales.missing}}"}, {"value": "{{sales.regions[5]}}"}],
            "more": ["{{sales.label.x}}", "{{sales[0]}}", "{{sales.tags.a}}"]
        });
        let out = r.value(&config, "pin_config");
        assert_eq!(
            out,
            json!({"title": "", "cards": [{"value": ""}, {"value": ""}], "more": ["", "", ""]})
        );
        let warnings = r.into_warnings();
        assert_eq!(
            warnings,
            vec![
                warning(
                    "pin_config.cards[0].value",
                    "sales.missing",
                    "path_not_found"
                ),
                warning(
                    "pin_config.cards[1].value",
                    "sales.regions[5]",
                    "path_not_found"
                ),
                warning("pin_config.more[0]", "sales.label.x", "path_not_found"),
                warning("pin_config.more[1]", "sales[0]", "path_not_found"),
                warning("pin_config.more[2]", "sales.tags.a", "path_not_found"),
                warning("pin_config.title", "nope.x", "dataset_not_found"),
            ]
        );
    }

    #[test]
    fn value_keeps_keys_and_non_strings_and_names_root_fields() {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let config = json!({"{{sales.label}}": 1, "n": null, "b": false, "s": "{{sales.count}}"});
        assert_eq!(
            r.value(&config, ""),
            json!({"{{sales.label}}": 1, "n": null, "b": false, "s": "12"})
        );
        assert_eq!(
            r.value(&json!("{{x}}"), ""),
            json!(""),
            "a bare string is its own field"
        );
        assert_eq!(
            r.into_warnings(),
            vec![warning("", "x", "dataset_not_found")]
        );
    }

    #[test]
    fn exactly_one_variable_stays_a_string() {
        let d = datasets();
        let mut r = Renderer::new(&d);
        let out = r.value(
            &json!({"n": "{{sales.count}}", "b": "{{sales.up}}", "a": "{{sales.tags}}"}),
            "c",
        );
        assert_eq!(out, json!({"n": "12", "b": "true", "a": "[\"a\",\"b\"]"}));
    }

    #[test]
    fn resolved_values_are_never_resolved_again() {
        assert_eq!(
            render("{{sales.nested}}"),
            ("{{sales.label}}".into(), vec![])
        );
        let mut d = Datasets::new();
        d.insert("a".into(), json!("{{b}}"));
        d.insert("b".into(), json!("{{a}}"));
        let mut r = Renderer::new(&d);
        assert_eq!(r.text("{{a}}{{b}}", "f"), "{{b}}{{a}}");
        assert!(r.into_warnings().is_empty());
    }

    #[test]
    fn the_budget_caps_growth_and_warns() {
        let d = datasets();
        // "Q1" (2) + "3.5" (3) = 5 bytes fit; the next "Q1" does not.
        let mut r = Renderer::with_budget(&d, 5);
        let out = r.text("{{sales.label}}|{{sales.total}}|{{sales.label}}|x", "f");
        assert_eq!(out, "Q1|3.5||x");
        assert_eq!(
            r.into_warnings(),
            vec![warning("f", "sales.label", "size_limit")]
        );

        // A large value is refused while smaller ones still fit what is left.
        let mut r = Renderer::with_budget(&d, 10);
        let out = r.text("{{sales.regions}}{{sales.regions}}{{sales.count}}", "g");
        assert_eq!(out, "12");
        let warnings = r.into_warnings();
        assert_eq!(warnings.len(), 2);
        assert!(warnings.iter().all(|w| w.reason == "size_limit"));

        // Exact fit, measured once and reused.
        let tags = r#"["a","b"]"#.len();
        let mut r = Renderer::with_budget(&d, 2 * tags);
        let out = r.text("{{sales.tags}}{{sales.tags}}{{sales.tags}}", "h");
        assert_eq!(out, r#"["a","b"]["a","b"]"#);
        assert_eq!(r.into_warnings().len(), 1);
        assert_eq!(MAX_RENDERED_BYTES, 1_048_576);
    }

    #[test]
    fn the_budget_spans_every_call_of_one_renderer() {
        let d = datasets();
        let mut r = Renderer::with_budget(&d, 2);
        assert_eq!(r.text("{{sales.label}}", "a"), "Q1");
        assert_eq!(r.text("{{sales.label}}", "b"), "");
        assert_eq!(r.text("{{nope}}", "c"), "");
        assert_eq!(
            r.into_warnings(),
            vec![
                warning("b", "sales.label", "size_limit"),
                warning("c", "nope", "dataset_not_found")
            ]
        );
    }

    #[test]
    fn referenced_finds_every_dataset_named_in_strings() {
        let mut names = BTreeSet::new();
        referenced(
            &json!({
                "{{keys_ignored}}": "{{a.b}} and {{ c[0] }}",
                "list": ["x {{d}}", {"deep": "{{e.f.g}}{{a}}"}, 3, null],
                "bad": "{{Bad}} {{}} {{f"
            }),
            &mut names,
        );
        let names: Vec<_> = names.into_iter().collect();
        assert_eq!(names, ["a", "c", "d", "e"]);
    }

    #[test]
    fn dataset_of_accepts_bare_paths_only() {
        assert_eq!(dataset_of("sales.regions[0].total"), Some("sales"));
        assert_eq!(dataset_of("notes"), Some("notes"));
        assert_eq!(dataset_of("grid[1][0]"), Some("grid"));
        for bad in [
            "",
            " sales",
            "sales ",
            "{{sales}}",
            "Sales",
            "sales.",
            "sales[",
            "sales[a]",
            ".x",
        ] {
            assert_eq!(dataset_of(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn lookup_returns_the_value_or_none() {
        let d = datasets();
        let r = Renderer::new(&d);
        assert_eq!(r.lookup("sales.regions[0].total"), Some(&json!(7)));
        assert_eq!(r.lookup("sales.none"), Some(&Value::Null));
        assert_eq!(r.lookup("sales.missing"), None);
        assert_eq!(r.lookup("nope"), None);
        assert_eq!(r.lookup("{{sales}}"), None);
    }

    #[test]
    fn op_wire_names_round_trip() {
        for op in Op::ALL {
            assert_eq!(Op::from_name(op.as_str()), Some(op));
            assert_eq!(json!(op), json!(op.as_str()));
            assert_eq!(
                serde_json::from_value::<Op>(json!(op.as_str())).ok(),
                Some(op)
            );
        }
        assert_eq!(Op::from_name("EQ"), None);
    }

    #[test]
    fn exists_needs_a_present_non_null_value() {
        assert!(holds(Some(&json!(0)), Op::Exists, None));
        assert!(holds(Some(&json!("")), Op::Exists, None));
        assert!(!holds(Some(&Value::Null), Op::Exists, None));
        assert!(!holds(None, Op::Exists, None));
    }

    #[test]
    fn eq_and_ne_compare_json_with_numbers_by_value() {
        let yes = [
            (json!(5), json!(5.0)),
            (json!("a"), json!("a")),
            (json!([1, {"x": 2}]), json!([1.0, {"x": 2.0}])),
            (json!(null), json!(null)),
            (json!(u64::MAX), json!(u64::MAX)),
        ];
        for (a, b) in &yes {
            assert!(holds(Some(a), Op::Eq, Some(b)), "{a} eq {b}");
            assert!(!holds(Some(a), Op::Ne, Some(b)), "{a} ne {b}");
        }
        let no = [
            (json!(5), json!("5")),
            (json!(-1), json!(u64::MAX)),
            (json!([1]), json!([1, 2])),
            (json!({"x": 1}), json!({"y": 1})),
            (json!(true), json!(1)),
        ];
        for (a, b) in &no {
            assert!(!holds(Some(a), Op::Eq, Some(b)), "{a} eq {b}");
            assert!(holds(Some(a), Op::Ne, Some(b)), "{a} ne {b}");
        }
        assert!(!holds(None, Op::Eq, Some(&json!(1))));
        assert!(holds(None, Op::Ne, Some(&json!(1))));
        assert!(!holds(None, Op::Eq, None), "missing is not null");
        assert!(
            holds(Some(&Value::Null), Op::Eq, None),
            "missing expected is null"
        );
        assert!(!holds(Some(&json!(0)), Op::Eq, None));
    }

    #[test]
    fn ordering_ops_compare_numbers_or_strings_only() {
        let cases = [
            (json!(2), json!(1.5), Ordering::Greater),
            (json!(1), json!(1.0), Ordering::Equal),
            (json!(-3), json!(7), Ordering::Less),
            (json!("b"), json!("a"), Ordering::Greater),
            (json!("a"), json!("a"), Ordering::Equal),
            (json!("A"), json!("a"), Ordering::Less),
        ];
        for (a, b, o) in &cases {
            let (a, b) = (Some(a), Some(b));
            assert_eq!(
                holds(a, Op::Gt, b),
                *o == Ordering::Greater,
                "{a:?} gt {b:?}"
            );
            assert_eq!(
                holds(a, Op::Gte, b),
                *o != Ordering::Less,
                "{a:?} gte {b:?}"
            );
            assert_eq!(holds(a, Op::Lt, b), *o == Ordering::Less, "{a:?} lt {b:?}");
            assert_eq!(
                holds(a, Op::Lte, b),
                *o != Ordering::Greater,
                "{a:?} lte {b:?}"
            );
        }
        for (a, b) in [
            (Some(json!(1)), Some(json!("1"))),
            (Some(json!(true)), Some(json!(false))),
            (Some(json!([2])), Some(json!([1]))),
            (None, Some(json!(1))),
            (Some(json!(1)), None),
        ] {
            for op in [Op::Gt, Op::Gte, Op::Lt, Op::Lte] {
                assert!(!holds(a.as_ref(), op, b.as_ref()), "{a:?} {op:?} {b:?}");
            }
        }
    }

    #[test]
    fn contains_looks_in_strings_arrays_and_object_keys() {
        let yes = [
            (json!("hello world"), json!("lo w")),
            (json!("x"), json!("")),
            (json!([1, "a", 2.0]), json!(2)),
            (json!([null]), json!(null)),
            (json!({"k": 1}), json!("k")),
        ];
        for (a, b) in &yes {
            assert!(holds(Some(a), Op::Contains, Some(b)), "{a} contains {b}");
        }
        let no = [
            (json!("hello"), json!("z")),
            (json!("5"), json!(5)),
            (json!([1, 2]), json!(3)),
            (json!({"k": 1}), json!("v")),
            (json!({"k": 1}), json!(1)),
            (json!(15), json!(5)),
        ];
        for (a, b) in &no {
            assert!(!holds(Some(a), Op::Contains, Some(b)), "{a} contains {b}");
        }
        assert!(!holds(None, Op::Contains, Some(&json!("a"))));
        assert!(holds(Some(&json!([null])), Op::Contains, None));
    }
}
