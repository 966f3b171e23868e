//! Appends to a pin's growing collection (CONTRACT.md 14, "Append"): the transformation of a
//! stored configuration by an append body, and the body's schema. The caller reads and writes
//! the pin inside its write transaction; this module only computes the new configuration.
//!
//! What each type takes and where it goes:
//! - line, area and bar charts: `{"points": [{label, values}], "max_points"?}`; each point adds
//!   its label to `labels` and its value of each series to that series' `data`. `values`
//!   names exactly the chart's series (series sharing a name each get the value of that name).
//! - flexible-table: `{"rows": [{id, cells}], "max_rows"?}`; a row whose id is already in
//!   the table (or earlier in the body) replaces that row where it stands, others go last.
//! - timeline: `{"events": [...], "max_events"?}`; list: `{"items": [...], "max_items"?}`.
//! - scatter-chart: `{"points": {<series name>: [{x, y}]}, "max_points"?}`; each named series
//!   must exist (an append adds points, never series), and `max_points` bounds each series the
//!   body names, as the type's cap bounds every series.
//!
//! An append never fails for size: beyond `max_*` (1 to the type's cap) or the type's cap,
//! the oldest entries (the first ones) are dropped, including rows just replaced in place
//! there and the body's own first entries when the body alone holds more than fit. A body
//! with nothing to append (`"points": []`, a scatter series with no point) is refused, so a
//! mistaken empty batch is seen, not counted as a change.
//!
//! The result is checked as any update ([`pin_types::validate`]); an error in an entry that
//! came from the body names the body's path (`events[2].title`, `points[0].values.p95`), so a
//! caller sees where in its request the problem is. Entries the append itself drops are never
//! stored, so they are not checked beyond the shape of the body.

use std::collections::{hash_map::Entry, BTreeMap, HashMap};

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::{
    error::{Error, Result},
    pin_types::{
        self, charts, flexible_table, list, scatter_chart, timeline, ConfigError, PinType,
    },
    wire::body::{parse_body, present},
};

/// What an append made: the new configuration and how many entries the collection holds.
#[derive(Debug)]
pub struct Appended {
    /// The pin's configuration after the append, valid for its type.
    pub config: Value,
    /// Labels of a line, area or bar chart, rows, events, items; a scatter chart's points
    /// over all its series.
    pub size: usize,
}

/// The types that take appends, for the error naming them.
const APPENDABLE: [PinType; 7] = [
    PinType::LineChart,
    PinType::AreaChart,
    PinType::BarChart,
    PinType::ScatterChart,
    PinType::FlexibleTable,
    PinType::Timeline,
    PinType::List,
];

/// Adds `body` to `config` (a valid configuration of `pin_type`), dropping the oldest entries
/// beyond the body's `max_*` or the type's cap. Errors carry the body's paths
/// (`VALIDATION_FAILED`); a pin of another type is refused at `pin_type`, and a stored
/// configuration that no longer validates is `PIN_CONFIG_INVALID` at `pin_config.<path>`.
/// The caller still applies the limit on a configuration's serialised size.
pub fn append(pin_type: PinType, mut config: Value, body: &Value) -> Result<Appended> {
    let origins = match pin_type {
        PinType::LineChart | PinType::AreaChart | PinType::BarChart => {
            append_points(&mut config, parse_body(body, "")?)?
        }
        PinType::FlexibleTable => append_rows(&mut config, parse_body(body, "")?)?,
        PinType::Timeline => {
            let body: TimelineAppend = parse_body(body, "")?;
            let max = (body.max_events.as_ref(), "max_events", timeline::MAX_EVENTS);
            append_entries(&mut config, "events", body.events, max)?
        }
        PinType::List => {
            let body: ListAppend = parse_body(body, "")?;
            let max = (body.max_items.as_ref(), "max_items", list::MAX_ITEMS);
            append_entries(&mut config, "items", body.items, max)?
        }
        PinType::ScatterChart => append_scatter(&mut config, parse_body(body, "")?)?,
        other => {
            let names: Vec<&str> = APPENDABLE.iter().map(|t| t.as_str()).collect();
            return Err(Error::validation(
                "pin_type",
                format!(
                    "a pin type that takes appends: one of {} (this pin's type is {})",
                    names.join(", "),
                    other.as_str()
                ),
            ));
        }
    };
    pin_types::validate(pin_type, &config).map_err(|e| match origins.body_path(&e.path) {
        Some(field) => Error::validation(field, e.expected),
        None => stored(e),
    })?;
    Ok(Appended {
        size: origins.size(),
        config,
    })
}

/// The body of an append, kept as sent: its shape depends on the pin's type, known only once
/// the pin is read, when [`append`] parses it.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
pub struct AppendBody(pub Value);

impl JsonSchema for AppendBody {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AppendBody".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "What to add to the pin's collection, in the shape of its type: line, area and bar charts take `points` with a value for each series, scatter charts `points` by series name, flexible tables `rows`, timelines `events`, lists `items`. Beyond `max_*` or the type's cap the oldest entries are dropped.",
            "oneOf": [
                generator.subschema_for::<ChartAppend>(),
                generator.subschema_for::<ScatterAppend>(),
                generator.subschema_for::<TableAppend>(),
                generator.subschema_for::<TimelineAppend>(),
                generator.subschema_for::<ListAppend>(),
            ],
            "example": {"points": [{"label": "Thu", "values": {"p50": 118, "p95": 301}}],
                        "max_points": 30},
        })
    }
}

/// Append to a line, area or bar chart.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ChartAppend {
    /// The points to add after the last label, at least one.
    #[schemars(length(min = 1))]
    points: Vec<ChartPoint>,
    /// Keep at most this many labels (and values per series), 1 to 1000; the oldest go.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "u32", range(min = 1, max = charts::MAX_LABELS))]
    max_points: Option<Number>,
}

/// One new label of a chart and the value of each series there.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ChartPoint {
    /// The x-axis label, at most 200 characters.
    label: String,
    /// One number for each series of the chart, by series name: every series, no other.
    values: BTreeMap<String, Number>,
}

/// Append to a scatter chart.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ScatterAppend {
    /// New points by the name of an existing series, at least one point each.
    #[schemars(with = "BTreeMap<String, Vec<scatter_chart::Point>>")]
    points: BTreeMap<String, Vec<Value>>,
    /// Keep at most this many points in each series named, 1 to 1000; the oldest go.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "u32", range(min = 1, max = scatter_chart::MAX_POINTS))]
    max_points: Option<Number>,
}

/// Append to, or update rows of, a flexible table.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TableAppend {
    /// The rows, at least one: a row whose id is in the table replaces it in place, a new
    /// one goes last.
    #[schemars(length(min = 1))]
    rows: Vec<flexible_table::Row>,
    /// Keep at most this many rows, 1 to 10000; the first ones go.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "u32", range(min = 1, max = flexible_table::MAX_ROWS))]
    max_rows: Option<Number>,
}

/// Append to a timeline.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TimelineAppend {
    /// The events to add last, at least one.
    #[schemars(with = "Vec<timeline::Event>", length(min = 1))]
    events: Vec<Value>,
    /// Keep at most this many events, 1 to 500; the first ones go.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "u32", range(min = 1, max = timeline::MAX_EVENTS))]
    max_events: Option<Number>,
}

/// Append to a list.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListAppend {
    /// The items to add last, at least one.
    #[schemars(with = "Vec<list::ListItem>", length(min = 1))]
    items: Vec<Value>,
    /// Keep at most this many items, 1 to 500; the first ones go.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "u32", range(min = 1, max = list::MAX_ITEMS))]
    max_items: Option<Number>,
}

/// Where the entries of an appended configuration came from: for each entry kept, the index
/// of the body's entry it is (`None`: it was there before). Turns a path of the result into
/// the body's.
enum Origins {
    /// A chart's labels (and values), and the names of its series.
    Chart {
        from: Vec<Option<usize>>,
        series: Vec<String>,
    },
    /// `rows`, `events` or `items`: the body's field of the same name.
    Entries {
        field: &'static str,
        from: Vec<Option<usize>>,
    },
    /// Each series of a scatter chart: its name and its points.
    Scatter(Vec<(String, Vec<Option<usize>>)>),
}

impl Origins {
    /// How many entries the collection holds.
    fn size(&self) -> usize {
        match self {
            Origins::Chart { from, .. } | Origins::Entries { from, .. } => from.len(),
            Origins::Scatter(series) => series.iter().map(|(_, from)| from.len()).sum(),
        }
    }

    /// The body's path of the configuration's `path` when it lies in an entry from the body:
    /// `labels[57]` to `points[2].label`, `series[1].data[57]` to `points[2].values.p95`,
    /// `events[57].title` to `events[2].title`, `series[0].points[9].x` to `points.A[2].x`.
    fn body_path(&self, path: &str) -> Option<String> {
        match self {
            Origins::Chart { from, series } => {
                if let Some((k, rest)) = index_after(path, "labels") {
                    return Some(format!("points[{}].label{rest}", origin(from, k)?));
                }
                let (s, rest) = index_after(path, "series")?;
                let (k, rest) = index_after(rest, ".data")?;
                let name = series.get(s)?;
                Some(format!("points[{}].values.{name}{rest}", origin(from, k)?))
            }
            Origins::Entries { field, from } => {
                let (k, rest) = index_after(path, field)?;
                Some(format!("{field}[{}]{rest}", origin(from, k)?))
            }
            Origins::Scatter(series) => {
                let (s, rest) = index_after(path, "series")?;
                let (k, rest) = index_after(rest, ".points")?;
                let (name, from) = series.get(s)?;
                Some(format!("points.{name}[{}]{rest}", origin(from, k)?))
            }
        }
    }
}

/// `path` as `{prefix}[index]{rest}`: `("events[57].title", "events")` gives `(57, ".title")`.
fn index_after<'a>(path: &'a str, prefix: &str) -> Option<(usize, &'a str)> {
    let (index, rest) = path
        .strip_prefix(prefix)?
        .strip_prefix('[')?
        .split_once(']')?;
    Some((index.parse().ok()?, rest))
}

/// The body's index of entry `k`, when it came from the body.
fn origin(from: &[Option<usize>], k: usize) -> Option<usize> {
    from.get(k).copied().flatten()
}

fn append_points(config: &mut Value, body: ChartAppend) -> Result<Origins> {
    at_least_one(body.points.len(), "points", "point")?;
    let keep = keep(body.max_points.as_ref(), "max_points", charts::MAX_LABELS)?;
    let names = series_names(array_at(config, "series", || "series".to_owned())?)?;
    for (i, point) in body.points.iter().enumerate() {
        if let Some(unknown) = point.values.keys().find(|k| !names.contains(k)) {
            return Err(Error::validation(
                format!("points[{i}].values.{unknown}"),
                no_such_series(&names),
            ));
        }
        if let Some(missing) = names.iter().find(|n| !point.values.contains_key(*n)) {
            return Err(Error::validation(
                format!("points[{i}].values.{missing}"),
                "a number (required: one value for every series of the chart)",
            ));
        }
    }
    let labels = array_at(config, "labels", || "labels".to_owned())?;
    let old = labels.len();
    let new = body.points.iter().map(|p| Value::String(p.label.clone()));
    let dropped = push_bounded(labels, new, keep);
    let from = origins(old, dropped, labels.len());
    let series = array_at(config, "series", || "series".to_owned())?;
    for (s, (one, name)) in series.iter_mut().zip(&names).enumerate() {
        let data = array_at(one, "data", || format!("series[{s}].data"))?;
        let values = body.points.iter().map(|p| {
            // Every point has every name (checked above).
            p.values
                .get(name)
                .cloned()
                .map_or(Value::Null, Value::Number)
        });
        push_bounded(data, values, keep);
    }
    Ok(Origins::Chart {
        from,
        series: names,
    })
}

fn append_rows(config: &mut Value, body: TableAppend) -> Result<Origins> {
    at_least_one(body.rows.len(), "rows", "row")?;
    let keep = keep(body.max_rows.as_ref(), "max_rows", flexible_table::MAX_ROWS)?;
    let rows = array_at(config, "rows", || "rows".to_owned())?;
    let mut at: HashMap<String, usize> = HashMap::with_capacity(rows.len() + body.rows.len());
    for (k, row) in rows.iter().enumerate() {
        if let Some(id) = row.get("id").and_then(Value::as_str) {
            at.insert(id.to_owned(), k);
        }
    }
    let mut from = vec![None; rows.len()];
    for (j, row) in body.rows.into_iter().enumerate() {
        let value = Value::Object(Map::from_iter([
            ("id".to_owned(), Value::String(row.id.clone())),
            ("cells".to_owned(), Value::Object(row.cells)),
        ]));
        match at.entry(row.id) {
            Entry::Occupied(k) => {
                rows[*k.get()] = value;
                from[*k.get()] = Some(j);
            }
            Entry::Vacant(slot) => {
                slot.insert(rows.len());
                rows.push(value);
                from.push(Some(j));
            }
        }
    }
    let dropped = rows.len().saturating_sub(keep);
    rows.drain(..dropped);
    from.drain(..dropped);
    Ok(Origins::Entries {
        field: "rows",
        from,
    })
}

/// Appends `new` to the list at `field` (`events`, `items`); `max` is the body's `max_*`,
/// its name and the type's cap.
fn append_entries(
    config: &mut Value,
    field: &'static str,
    new: Vec<Value>,
    (max, max_field, cap): (Option<&Number>, &str, usize),
) -> Result<Origins> {
    at_least_one(new.len(), field, field.trim_end_matches('s'))?;
    let keep = keep(max, max_field, cap)?;
    let entries = array_at(config, field, || field.to_owned())?;
    let old = entries.len();
    let dropped = push_bounded(entries, new, keep);
    Ok(Origins::Entries {
        field,
        from: origins(old, dropped, entries.len()),
    })
}

fn append_scatter(config: &mut Value, body: ScatterAppend) -> Result<Origins> {
    if body.points.is_empty() {
        return Err(Error::validation(
            "points",
            "at least one series with points to append",
        ));
    }
    let keep = keep(
        body.max_points.as_ref(),
        "max_points",
        scatter_chart::MAX_POINTS,
    )?;
    let series = array_at(config, "series", || "series".to_owned())?;
    let names = series_names(series)?;
    for (name, points) in &body.points {
        if !names.contains(name) {
            return Err(Error::validation(
                format!("points.{name}"),
                no_such_series(&names),
            ));
        }
        at_least_one(points.len(), &format!("points.{name}"), "point")?;
    }
    let mut origins_by_series = Vec::with_capacity(series.len());
    for (s, (one, name)) in series.iter_mut().zip(names).enumerate() {
        let points = array_at(one, "points", || format!("series[{s}].points"))?;
        let from = match body.points.get(&name) {
            Some(new) => {
                let old = points.len();
                let dropped = push_bounded(points, new.iter().cloned(), keep);
                origins(old, dropped, points.len())
            }
            None => vec![None; points.len()],
        };
        origins_by_series.push((name, from));
    }
    Ok(Origins::Scatter(origins_by_series))
}

/// Adds `new` after `entries` and drops the oldest beyond `keep`; returns how many went.
fn push_bounded(
    entries: &mut Vec<Value>,
    new: impl IntoIterator<Item = Value>,
    keep: usize,
) -> usize {
    entries.extend(new);
    let dropped = entries.len().saturating_sub(keep);
    entries.drain(..dropped);
    dropped
}

/// The origins of a list that had `old` entries, got the body's appended and lost its first
/// `dropped`, and now holds `len`.
fn origins(old: usize, dropped: usize, len: usize) -> Vec<Option<usize>> {
    (dropped..dropped + len)
        .map(|c| c.checked_sub(old))
        .collect()
}

/// How many entries to keep: the body's `max_*` (1 to `cap`), else the type's `cap`.
fn keep(max: Option<&Number>, field: &str, cap: usize) -> Result<usize> {
    let Some(max) = max else { return Ok(cap) };
    max.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| (1..=cap).contains(n))
        .ok_or_else(|| Error::validation(field, format!("an integer from 1 to {cap}")))
}

fn at_least_one(len: usize, field: &str, what: &str) -> Result<()> {
    if len == 0 {
        return Err(Error::validation(
            field,
            format!("at least one {what} to append"),
        ));
    }
    Ok(())
}

/// What a series name the chart lacks should have been.
fn no_such_series(names: &[String]) -> String {
    if names.is_empty() {
        "no such series (the chart has none)".to_owned()
    } else {
        format!("no such series (the chart's series: {})", names.join(", "))
    }
}

fn series_names(series: &[Value]) -> Result<Vec<String>> {
    series
        .iter()
        .enumerate()
        .map(|(s, one)| {
            let name = one.get("name").and_then(Value::as_str);
            let path = || format!("series[{s}].name");
            name.map(str::to_owned)
                .ok_or_else(|| stored(ConfigError::new(path(), "a string")))
        })
        .collect()
}

/// The array at `key` of an object of the stored configuration, whose path is `path`.
fn array_at<'a>(
    object: &'a mut Value,
    key: &str,
    path: impl FnOnce() -> String,
) -> Result<&'a mut Vec<Value>> {
    object
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .ok_or_else(|| stored(ConfigError::new(path(), "a JSON array")))
}

/// The stored configuration is not valid where the body didn't touch it: it was written
/// before a rule that now refuses it. The pin needs an update before it takes appends, so
/// this is the configuration's error, not the body's.
fn stored(e: ConfigError) -> Error {
    let field = e.field("pin_config");
    Error::PinConfigInvalid {
        message: format!(
            "the pin's stored configuration is invalid at `{field}`: expected {}; update it \
             before appending",
            e.expected
        ),
        field,
        expected: e.expected,
        index: None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use schemars::generate::SchemaSettings;
    use serde_json::json;

    use super::*;

    const CHARTS: [PinType; 3] = [PinType::LineChart, PinType::AreaChart, PinType::BarChart];

    fn appended(pin_type: PinType, config: &Value, body: Value) -> Appended {
        append(pin_type, config.clone(), &body).unwrap_or_else(|e| panic!("{body}: {e:?}"))
    }

    /// Asserts a `VALIDATION_FAILED` at `field` whose `expected` contains `expected`.
    fn assert_refused(pin_type: PinType, config: &Value, body: Value, field: &str, expected: &str) {
        match append(pin_type, config.clone(), &body) {
            Err(Error::Validation {
                field: got,
                expected: text,
                ..
            }) => {
                assert_eq!(got, field, "{body}: {text}");
                assert!(
                    text.contains(expected),
                    "{body}: {text:?} lacks {expected:?}"
                );
            }
            other => panic!("{body}: {other:?}"),
        }
    }

    /// A chart with `n` labels `l0..` and the series p50 (values 0..) and p95 (100..).
    fn chart(n: usize) -> Value {
        let labels: Vec<String> = (0..n).map(|i| format!("l{i}")).collect();
        let p50: Vec<usize> = (0..n).collect();
        let p95: Vec<usize> = (100..100 + n).collect();
        json!({"labels": labels, "series": [{"name": "p50", "data": p50},
                                            {"name": "p95", "data": p95}],
               "x_label": "Day"})
    }

    fn point(label: &str, p50: f64, p95: f64) -> Value {
        json!({"label": label, "values": {"p50": p50, "p95": p95}})
    }

    #[test]
    fn chart_points_add_a_label_and_a_value_to_every_series() {
        for t in CHARTS {
            let body = json!({"points": [point("x", 1.5, 2.0), point("y", 3.0, 4.0)]});
            let done = appended(t, &chart(1), body);
            assert_eq!(
                done.config,
                json!({"labels": ["l0", "x", "y"],
                       "series": [{"name": "p50", "data": [0, 1.5, 3.0]},
                                  {"name": "p95", "data": [100, 2.0, 4.0]}],
                       "x_label": "Day"})
            );
            assert_eq!(done.size, 3);
        }
    }

    #[test]
    fn the_schema_example_appends_to_the_catalogue_example() {
        let example = AppendBody::json_schema(&mut SchemaGenerator::default())
            .get("example")
            .cloned()
            .expect("an example");
        let done = appended(PinType::LineChart, &PinType::LineChart.example(), example);
        assert_eq!(done.config["labels"], json!(["Mon", "Tue", "Wed", "Thu"]));
        assert_eq!(
            done.config["series"][1]["data"],
            json!([310, 290.5, 305, 301])
        );
        assert_eq!(done.size, 4);
    }

    #[test]
    fn chart_points_beyond_max_points_or_the_cap_drop_the_oldest() {
        let body = json!({"points": [point("x", 1.0, 2.0)], "max_points": 3});
        let done = appended(PinType::LineChart, &chart(4), body);
        assert_eq!(done.config["labels"], json!(["l2", "l3", "x"]));
        assert_eq!(done.config["series"][0]["data"], json!([2, 3, 1.0]));
        assert_eq!(done.config["series"][1]["data"], json!([102, 103, 2.0]));
        assert_eq!(done.size, 3);

        let cap = charts::MAX_LABELS;
        let body = json!({"points": [point("x", 1.0, 2.0), point("y", 3.0, 4.0)]});
        let done = appended(PinType::BarChart, &chart(cap), body);
        let labels = done.config["labels"].as_array().expect("labels");
        assert_eq!((labels.len(), done.size), (cap, cap));
        assert_eq!((&labels[0], &labels[cap - 1]), (&json!("l2"), &json!("y")));
        assert_eq!(done.config["series"][1]["data"][0], json!(102));

        // A body longer than max_points keeps only its own newest points.
        let points: Vec<Value> = (0..5).map(|i| point(&format!("n{i}"), 0.0, 0.0)).collect();
        let done = appended(
            PinType::AreaChart,
            &chart(2),
            json!({"points": points, "max_points": 3}),
        );
        assert_eq!(done.config["labels"], json!(["n2", "n3", "n4"]));
    }

    #[test]
    fn chart_values_name_exactly_the_series() {
        let config = chart(2);
        let refused = |body: Value, field: &str, expected: &str| {
            assert_refused(PinType::LineChart, &config, body, field, expected)
        };
        let missing = json!({"label": "y", "values": {"p50": 1}});
        refused(
            json!({"points": [point("x", 1.0, 2.0), missing]}),
            "points[1].values.p95",
            "a number (required",
        );
        let unknown = json!({"label": "y", "values": {"p50": 1, "p95": 2, "p99": 3}});
        refused(
            json!({"points": [unknown]}),
            "points[0].values.p99",
            "no such series (the chart's series: p50, p95)",
        );
        let text = json!({"label": "y", "values": {"p50": 1, "p95": "2"}});
        refused(
            json!({"points": [text]}),
            "points[0].values.p95",
            "a JSON number",
        );
        let gap = json!({"label": "y", "values": {"p50": 1, "p95": null}});
        refused(
            json!({"points": [gap]}),
            "points[0].values.p95",
            "a JSON number",
        );
        let series_less = json!({"labels": [], "series": []});
        assert_refused(
            PinType::BarChart,
            &series_less,
            json!({"points": [{"label": "y", "values": {"p50": 1}}]}),
            "points[0].values.p50",
            "the chart has none",
        );
        let done = appended(
            PinType::BarChart,
            &series_less,
            json!({"points": [{"label": "y", "values": {}}]}),
        );
        assert_eq!(done.config, json!({"labels": ["y"], "series": []}));
    }

    #[test]
    fn series_sharing_a_name_each_take_its_value() {
        let config = json!({"labels": ["a"], "series": [{"name": "s", "data": [1]},
                                                         {"name": "s", "data": [2]}]});
        let body = json!({"points": [{"label": "b", "values": {"s": 9}}]});
        let done = appended(PinType::LineChart, &config, body);
        assert_eq!(done.config["series"][0]["data"], json!([1, 9]));
        assert_eq!(done.config["series"][1]["data"], json!([2, 9]));
    }

    #[test]
    fn chart_body_refusals() {
        let config = chart(2);
        let one = point("x", 1.0, 2.0);
        let cases = [
            (
                json!({"points": []}),
                "points",
                "at least one point to append",
            ),
            (json!({"max_points": 3}), "points", "(required)"),
            (json!({"points": {"p50": []}}), "points", "a JSON array"),
            (json!([one]), "body", "a JSON object"),
            (
                json!({"points": [one], "colour": 1}),
                "colour",
                "no such field (allowed: points, max_points)",
            ),
            (
                json!({"points": [{"values": {}}]}),
                "points[0].label",
                "a string (required)",
            ),
            (
                json!({"points": [{"label": "x", "values": {}, "at": 1}]}),
                "points[0].at",
                "no such field",
            ),
            (
                json!({"points": [one], "max_points": 0}),
                "max_points",
                "an integer from 1 to 1000",
            ),
            (
                json!({"points": [one], "max_points": 1001}),
                "max_points",
                "an integer from 1 to 1000",
            ),
            (
                json!({"points": [one], "max_points": 2.5}),
                "max_points",
                "an integer from 1 to 1000",
            ),
            (
                json!({"points": [one], "max_points": -1}),
                "max_points",
                "an integer from 1 to 1000",
            ),
            (
                json!({"points": [one], "max_points": "3"}),
                "max_points",
                "a JSON number",
            ),
            (
                json!({"points": [one], "max_points": null}),
                "max_points",
                "a JSON number",
            ),
        ];
        for (body, field, expected) in cases {
            assert_refused(PinType::LineChart, &config, body, field, expected);
        }
    }

    #[test]
    fn a_bad_label_is_reported_at_the_body_point_even_after_drops() {
        let long = "x".repeat(201);
        let body = json!({"points": [point("ok", 1.0, 2.0), point(&long, 1.0, 2.0)],
                          "max_points": 3});
        // The result holds l3, ok, <long>: the bad label is entry 2, the body's point 1.
        assert_refused(
            PinType::LineChart,
            &chart(4),
            body,
            "points[1].label",
            "at most 200 characters",
        );
    }

    /// A table of the catalogue's columns with rows `r0..` holding their number as `price`.
    fn table(n: usize) -> Value {
        let mut config = PinType::FlexibleTable.example();
        let rows: Vec<Value> = (0..n)
            .map(|i| json!({"id": format!("r{i}"), "cells": {"price": i}}))
            .collect();
        config["rows"] = rows.into();
        config
    }

    fn row_ids(config: &Value) -> Vec<&str> {
        let rows = config["rows"].as_array().expect("rows");
        rows.iter()
            .map(|r| r["id"].as_str().expect("an id"))
            .collect()
    }

    #[test]
    fn rows_with_a_known_id_are_replaced_in_place_and_new_rows_go_last() {
        let body = json!({"rows": [
            {"id": "new", "cells": {"name": "first"}},
            {"id": "r1", "cells": {"name": "Ada"}},
            {"id": "new", "cells": {"name": "second"}}
        ]});
        let done = appended(PinType::FlexibleTable, &table(3), body);
        assert_eq!(row_ids(&done.config), ["r0", "r1", "r2", "new"]);
        assert_eq!(
            done.config["rows"][1],
            json!({"id": "r1", "cells": {"name": "Ada"}})
        );
        assert_eq!(done.config["rows"][3]["cells"], json!({"name": "second"}));
        assert_eq!(
            done.config["columns"],
            PinType::FlexibleTable.example()["columns"]
        );
        assert_eq!(done.size, 4);
    }

    #[test]
    fn rows_beyond_max_rows_or_the_cap_drop_the_first() {
        let body = json!({"rows": [{"id": "r0", "cells": {}}, {"id": "a", "cells": {}},
                                   {"id": "b", "cells": {}}],
                          "max_rows": 3});
        // r0 is replaced where it stands, first, so it is among the oldest that go.
        let done = appended(PinType::FlexibleTable, &table(2), body);
        assert_eq!(row_ids(&done.config), ["r1", "a", "b"]);
        assert_eq!(done.size, 3);

        let cap = flexible_table::MAX_ROWS;
        let body = json!({"rows": [{"id": "last", "cells": {}}]});
        let done = appended(PinType::FlexibleTable, &table(cap), body);
        let ids = row_ids(&done.config);
        assert_eq!((ids.len(), ids[0], ids[cap - 1]), (cap, "r1", "last"));
    }

    #[test]
    fn bad_rows_are_reported_at_the_body_row() {
        let config = table(40);
        let refused = |body: Value, field: &str, expected: &str| {
            assert_refused(PinType::FlexibleTable, &config, body, field, expected)
        };
        let ok = json!({"id": "r5", "cells": {"price": 1}});
        refused(
            json!({"rows": [ok, {"id": "n", "cells": {"price": "12"}}]}),
            "rows[1].cells.price",
            "a JSON number (column `price` has type number)",
        );
        refused(
            json!({"rows": [{"id": "r5", "cells": {"nope": 1}}]}),
            "rows[0].cells.nope",
            "a declared column id",
        );
        refused(
            json!({"rows": [{"cells": {}}]}),
            "rows[0].id",
            "a string (required)",
        );
        refused(
            json!({"rows": [{"id": 7, "cells": {}}]}),
            "rows[0].id",
            "a string",
        );
        refused(json!({"rows": []}), "rows", "at least one row to append");
        refused(
            json!({"rows": [ok], "max_rows": 10001}),
            "max_rows",
            "an integer from 1 to 10000",
        );
        refused(
            json!({"rows": [ok], "max_items": 1}),
            "max_items",
            "(allowed: rows, max_rows)",
        );
    }

    fn timeline(n: usize) -> Value {
        let events: Vec<Value> = (0..n)
            .map(|i| json!({"time": "2024-03-01", "title": format!("e{i}")}))
            .collect();
        json!({ "events": events })
    }

    fn titles(config: &Value) -> Vec<&str> {
        let events = config["events"].as_array().expect("events");
        events
            .iter()
            .map(|e| e["title"].as_str().expect("a title"))
            .collect()
    }

    #[test]
    fn events_go_last_and_the_oldest_go_beyond_max_events_or_the_cap() {
        let new = json!({"time": "2024-03-02T10:00:00Z", "title": "new", "status": "ok"});
        let done = appended(PinType::Timeline, &timeline(2), json!({"events": [new]}));
        assert_eq!(done.config["events"][2], new);
        assert_eq!(
            (titles(&done.config), done.size),
            (vec!["e0", "e1", "new"], 3)
        );

        let body = json!({"events": [new, new], "max_events": 2});
        let done = appended(PinType::Timeline, &timeline(5), body);
        assert_eq!(titles(&done.config), ["new", "new"]);

        let cap = timeline::MAX_EVENTS;
        let done = appended(PinType::Timeline, &timeline(cap), json!({"events": [new]}));
        let titles = titles(&done.config);
        assert_eq!(
            (titles.len(), titles[0], titles[cap - 1]),
            (cap, "e1", "new")
        );
        assert_eq!(done.size, cap);
    }

    #[test]
    fn bad_events_are_reported_at_the_body_event() {
        let config = timeline(55);
        let refused = |body: Value, field: &str, expected: &str| {
            assert_refused(PinType::Timeline, &config, body, field, expected)
        };
        let ok = json!({"time": "2024-03-02", "title": "fine"});
        let long = json!({"time": "2024-03-02", "title": "x".repeat(201)});
        // Entry 57 of the result is the body's event 2.
        refused(
            json!({"events": [ok, ok, long]}),
            "events[2].title",
            "at most 200 characters",
        );
        let undated = json!({"time": "yesterday", "title": "x"});
        refused(json!({"events": [undated]}), "events[0].time", "ISO 8601");
        refused(json!({"events": [ok, "x"]}), "events[1]", "a JSON object");
        refused(
            json!({"events": [{"title": "x"}]}),
            "events[0].time",
            "(required)",
        );
        refused(
            json!({"events": []}),
            "events",
            "at least one event to append",
        );
        refused(
            json!({"events": [ok], "max_events": 501}),
            "max_events",
            "from 1 to 500",
        );
    }

    #[test]
    fn items_go_last_and_the_oldest_go_beyond_max_items() {
        let config = PinType::List.example();
        let done = appended(PinType::List, &config, json!({"items": [{"text": "new"}]}));
        assert_eq!(done.config["items"][3], json!({"text": "new"}));
        assert_eq!(done.size, 4);

        let body = json!({"items": [{"text": "a"}, {"text": "b", "checked": false}],
                          "max_items": 3});
        let done = appended(PinType::List, &config, body);
        assert_eq!(done.config["items"][0]["text"], "Plain note");
        assert_eq!(
            done.config["items"][2],
            json!({"text": "b", "checked": false})
        );
        assert_eq!(done.size, 3);

        let many: Vec<Value> = (0..list::MAX_ITEMS)
            .map(|i| json!({"text": i.to_string()}))
            .collect();
        let done = appended(
            PinType::List,
            &json!({"items": many}),
            json!({"items": [{"text": "z"}]}),
        );
        assert_eq!(done.config["items"][0]["text"], "1");
        assert_eq!(done.size, list::MAX_ITEMS);
    }

    #[test]
    fn bad_items_are_reported_at_the_body_item() {
        let config = PinType::List.example();
        let refused = |body: Value, field: &str, expected: &str| {
            assert_refused(PinType::List, &config, body, field, expected)
        };
        let link = json!({"text": "x", "url": "javascript:alert(1)"});
        refused(
            json!({"items": [{"text": "x"}, link]}),
            "items[1].url",
            "an absolute http or https URL",
        );
        refused(
            json!({"items": [{"text": "x", "href": "y"}]}),
            "items[0].href",
            "no such field",
        );
        refused(json!({"items": []}), "items", "at least one item to append");
        refused(
            json!({"items": [{"text": "x"}], "max_items": 0}),
            "max_items",
            "from 1 to 500",
        );
        refused(
            json!({"events": []}),
            "events",
            "no such field (allowed: items, max_items)",
        );
    }

    /// A scatter chart whose series A and B hold `a` and `b` points, x counting from 0.
    fn scatter(a: usize, b: usize) -> Value {
        let points = |n: usize| -> Vec<Value> { (0..n).map(|x| json!({"x": x, "y": 1})).collect() };
        json!({"series": [{"name": "A", "points": points(a)}, {"name": "B", "points": points(b)}]})
    }

    #[test]
    fn scatter_points_go_to_their_series() {
        let body = json!({"points": {"B": [{"x": 7, "y": 8.5}, {"x": 9, "y": 0}]}});
        let done = appended(PinType::ScatterChart, &scatter(1, 1), body);
        assert_eq!(
            done.config,
            json!({"series": [{"name": "A", "points": [{"x": 0, "y": 1}]},
                              {"name": "B", "points": [{"x": 0, "y": 1}, {"x": 7, "y": 8.5},
                                                       {"x": 9, "y": 0}]}]})
        );
        assert_eq!(done.size, 4);
    }

    #[test]
    fn scatter_max_points_bounds_each_series_named_and_the_cap_every_one() {
        let body = json!({"points": {"A": [{"x": 10, "y": 0}]}, "max_points": 2});
        let done = appended(PinType::ScatterChart, &scatter(3, 3), body);
        let a = &done.config["series"][0]["points"];
        assert_eq!(a, &json!([{"x": 2, "y": 1}, {"x": 10, "y": 0}]));
        assert_eq!(
            done.config["series"][1]["points"].as_array().map(Vec::len),
            Some(3)
        );
        assert_eq!(done.size, 5);

        let cap = scatter_chart::MAX_POINTS;
        let body = json!({"points": {"A": [{"x": -1, "y": 0}], "B": [{"x": -2, "y": 0}]}});
        let done = appended(PinType::ScatterChart, &scatter(cap, 1), body);
        let a = done.config["series"][0]["points"]
            .as_array()
            .expect("points");
        assert_eq!(
            (a.len(), &a[0]["x"], &a[cap - 1]["x"]),
            (cap, &json!(1), &json!(-1))
        );
        assert_eq!(done.size, cap + 2);
    }

    #[test]
    fn scatter_refusals() {
        let config = scatter(30, 1);
        let refused = |body: Value, field: &str, expected: &str| {
            assert_refused(PinType::ScatterChart, &config, body, field, expected)
        };
        let p = json!({"x": 1, "y": 2});
        refused(
            json!({"points": {"C": [p]}}),
            "points.C",
            "no such series (the chart's series: A, B)",
        );
        refused(
            json!({"points": {"A": [p], "B": []}}),
            "points.B",
            "at least one point to append",
        );
        refused(
            json!({"points": {}}),
            "points",
            "at least one series with points to append",
        );
        refused(json!({"points": [p]}), "points", "a JSON object");
        refused(
            json!({"points": {"A": [p, {"x": "1", "y": 2}]}}),
            "points.A[1].x",
            "a number",
        );
        refused(
            json!({"points": {"A": [{"x": 1}]}}),
            "points.A[0].y",
            "a number (required)",
        );
        refused(
            json!({"points": {"A": [p]}, "max_points": 1001}),
            "max_points",
            "from 1 to 1000",
        );
    }

    #[test]
    fn other_types_take_no_appends() {
        let body = json!({"items": [{"text": "x"}]});
        for &t in PinType::ALL {
            let result = append(t, t.example(), &body);
            if APPENDABLE.contains(&t) {
                assert!(
                    !matches!(&result, Err(Error::Validation { field, .. }) if field == "pin_type"),
                    "{}",
                    t.as_str()
                );
                continue;
            }
            assert_refused(
                t,
                &t.example(),
                body.clone(),
                "pin_type",
                "a pin type that takes appends: one of line-chart, area-chart, bar-chart, \
                 scatter-chart, flexible-table, timeline, list",
            );
        }
        assert_refused(
            PinType::Kpi,
            &json!({}),
            json!(null),
            "pin_type",
            "(this pin's type is kpi)",
        );
    }

    #[test]
    fn a_stored_configuration_now_invalid_is_the_pins_error() {
        let mut config = chart(2);
        config["labels"][0] = json!("x".repeat(201));
        let body = json!({"points": [point("x", 1.0, 2.0)]});
        match append(PinType::LineChart, config, &body) {
            Err(Error::PinConfigInvalid {
                field, expected, ..
            }) => {
                assert_eq!(field, "pin_config.labels[0]");
                assert_eq!(expected, "at most 200 characters");
            }
            other => panic!("{other:?}"),
        }
        let body = json!({"events": [{"time": "2024-03-01", "title": "x"}]});
        match append(PinType::Timeline, json!({}), &body) {
            Err(Error::PinConfigInvalid { field, .. }) => assert_eq!(field, "pin_config.events"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_schema_is_one_of_the_five_shapes() {
        let generator = SchemaSettings::draft2020_12().into_generator();
        let schema = generator.into_root_schema_for::<AppendBody>().to_value();
        assert_eq!(schema["oneOf"].as_array().map(Vec::len), Some(5));
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        for body in [
            json!({"points": [point("x", 1.0, 2.0)], "max_points": 10}),
            json!({"points": {"A": [{"x": 1, "y": 2}]}, "max_points": 10}),
            json!({"rows": [{"id": "r", "cells": {"a": 1}}], "max_rows": 10}),
            json!({"events": [{"time": "2024-03-01", "title": "x"}], "max_events": 10}),
            json!({"items": [{"text": "x"}], "max_items": 10}),
        ] {
            assert!(validator.is_valid(&body), "{body}");
        }
        for body in [
            json!({"points": []}),
            json!({"rows": [{"id": "r", "cells": {}}], "max_rows": 0}),
            json!({"items": [{"text": "x"}], "max_points": 10}),
            json!({"events": [{"title": "x"}]}),
            json!({}),
        ] {
            assert!(!validator.is_valid(&body), "{body}");
        }
    }

    proptest! {
        #[test]
        fn lists_keep_the_newest_entries(
            old in 0..=list::MAX_ITEMS,
            new in 1..=600usize,
            max in proptest::option::of(1..=list::MAX_ITEMS),
        ) {
            let entry = |i: usize| json!({"text": i.to_string()});
            let config = json!({"items": (0..old).map(entry).collect::<Vec<_>>()});
            let items: Vec<Value> = (old..old + new).map(entry).collect();
            let mut body = json!({ "items": items });
            if let Some(max) = max {
                body["max_items"] = max.into();
            }
            let done = appended(PinType::List, &config, body);
            let keep = (old + new).min(max.unwrap_or(list::MAX_ITEMS));
            let expected: Vec<Value> = (old + new - keep..old + new).map(entry).collect();
            prop_assert_eq!(&done.config["items"], &Value::from(expected));
            prop_assert_eq!(done.size, keep);
        }

        #[test]
        fn chart_series_stay_one_value_per_label(
            old in 0..=charts::MAX_LABELS,
            new in 1..=40usize,
            max in proptest::option::of(1..=charts::MAX_LABELS),
        ) {
            let points: Vec<Value> = (0..new).map(|i| point(&format!("n{i}"), 1.0, 2.0)).collect();
            let mut body = json!({"points": points});
            if let Some(max) = max {
                body["max_points"] = max.into();
            }
            let done = appended(PinType::LineChart, &chart(old), body);
            let keep = (old + new).min(max.unwrap_or(charts::MAX_LABELS));
            prop_assert_eq!(done.size, keep);
            for series in done.config["series"].as_array().expect("series") {
                prop_assert_eq!(series["data"].as_array().map(Vec::len), Some(keep));
            }
            let last = format!("n{}", new - 1);
            prop_assert_eq!(done.config["labels"][keep - 1].as_str(), Some(last.as_str()));
        }
    }
}
