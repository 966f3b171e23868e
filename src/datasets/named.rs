//! Writes of a dataset's data addressed by its name, as automations send them: no id to
//! keep, and the dataset (format `json`) is made by the first write when the workspace has
//! none of that name. Inbound hooks write this way ([`super::ops::write_named`]).

use serde_json::Value;

use super::{data_text, Format, MAX_DATA_BYTES};
use crate::{
    error::{Error, Result},
    store::Dataset,
};

/// What a write by name does to the data.
#[derive(Debug, Clone, PartialEq)]
pub enum DataWrite {
    /// The data becomes this value.
    Replace(Value),
    /// This value is a JSON Merge Patch (RFC 7396) of the data (of a markdown dataset, a
    /// string replaces the text, as `PATCH /datasets/{id}` does).
    Merge(Value),
    /// These items go last in the data's array (`null` data counts as an empty one); the
    /// oldest are dropped beyond `max_items`, and beyond what fits in [`MAX_DATA_BYTES`].
    Append { items: Vec<Value>, max_items: usize },
}

impl DataWrite {
    /// The dataset named `name` after this write at `now`: `stored` with its data changed
    /// and its version moved on, or, when there is none, a new json dataset at version 1.
    pub(crate) fn apply(&self, name: &str, stored: Option<Dataset>, now: i64) -> Result<Dataset> {
        match stored {
            Some(mut dataset) => {
                let format = Format::parse(&dataset.format)?;
                dataset.data = self.data_after(format, Some(&dataset))?;
                dataset.version += 1;
                dataset.updated_at = now.max(dataset.updated_at);
                Ok(dataset)
            }
            None => Ok(Dataset {
                id: crate::ids::new_id("ds-"),
                name: name.to_owned(),
                format: Format::Json.as_str().to_owned(),
                data: self.data_after(Format::Json, None)?,
                description: None,
                version: 1,
                created_at: now,
                updated_at: now,
            }),
        }
    }

    /// The stored text of the data after the write.
    fn data_after(&self, format: Format, stored: Option<&Dataset>) -> Result<String> {
        let current = || -> Result<Value> {
            stored.map_or(Ok(Value::Null), |d| {
                serde_json::from_str(&d.data)
                    .map_err(|e| Error::internal_in("stored dataset data", e))
            })
        };
        match self {
            DataWrite::Replace(value) => data_text(format, value),
            DataWrite::Merge(patch) if format == Format::Json => {
                let mut data = current()?;
                json_patch::merge(&mut data, patch);
                data_text(format, &data)
            }
            DataWrite::Merge(text) => data_text(format, text),
            DataWrite::Append { items, max_items } => {
                let mut list = match current()? {
                    Value::Array(list) => list,
                    Value::Null => Vec::new(),
                    _ => {
                        return Err(Error::Conflict(format!(
                            "the dataset `{}` holds no array to append to",
                            stored.map_or("", |d| d.name.as_str())
                        )))
                    }
                };
                list.extend(items.iter().cloned());
                let over = list.len().saturating_sub(*max_items);
                list.drain(..over);
                let fit = fitting_tail(&list)?;
                list.drain(..fit);
                data_text(format, &Value::Array(list))
            }
        }
    }
}

/// How many of `list`'s first items to drop so that the array serialises to at most
/// [`MAX_DATA_BYTES`]: the newest items are kept. The last item is always kept (alone too
/// large, it is refused as any data is).
fn fitting_tail(list: &[Value]) -> Result<usize> {
    // `[` and `]`, and a comma before every item but the first.
    let mut size = 2usize;
    let mut kept = 0usize;
    for item in list.iter().rev() {
        let item_size =
            serde_json::to_vec(item).map_err(Error::internal)?.len() + usize::from(kept > 0);
        if kept > 0 && size + item_size > MAX_DATA_BYTES {
            break;
        }
        size += item_size;
        kept += 1;
    }
    Ok(list.len() - kept)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn stored(format: &str, data: Value) -> Dataset {
        Dataset {
            id: "ds-x".into(),
            name: "feed".into(),
            format: format.into(),
            data: data.to_string(),
            description: Some("kept".into()),
            version: 4,
            created_at: 10,
            updated_at: 20,
        }
    }

    fn data_of(dataset: &Dataset) -> Value {
        serde_json::from_str(&dataset.data).unwrap()
    }

    #[test]
    fn a_missing_dataset_is_made_json_at_version_one() {
        let made = DataWrite::Merge(json!({"a": 1, "b": null}))
            .apply("feed", None, 99)
            .unwrap();
        assert_eq!(
            (made.name.as_str(), made.format.as_str(), made.version),
            ("feed", "json", 1)
        );
        assert_eq!(
            data_of(&made),
            json!({"a": 1}),
            "a merge into nothing: RFC 7396"
        );
        assert!(made.id.starts_with("ds-"));
        let made = DataWrite::Append {
            items: vec![json!(1), json!(2)],
            max_items: 5,
        }
        .apply("feed", None, 99)
        .unwrap();
        assert_eq!(data_of(&made), json!([1, 2]));
    }

    #[test]
    fn each_mode_changes_the_data_and_moves_the_version() {
        let before = stored("json", json!({"a": {"x": 1, "y": 2}, "b": 3}));
        let merged = DataWrite::Merge(json!({"a": {"y": null, "z": 4}}))
            .apply("feed", Some(before.clone()), 30)
            .unwrap();
        assert_eq!(data_of(&merged), json!({"a": {"x": 1, "z": 4}, "b": 3}));
        assert_eq!((merged.version, merged.updated_at), (5, 30));
        assert_eq!(merged.description.as_deref(), Some("kept"));
        let replaced = DataWrite::Replace(json!([1]))
            .apply("feed", Some(before), 5)
            .unwrap();
        assert_eq!(data_of(&replaced), json!([1]));
        assert_eq!(replaced.updated_at, 20, "time never goes back");
    }

    #[test]
    fn appends_drop_the_oldest_beyond_max_items() {
        let before = stored("json", json!([1, 2, 3]));
        let write = DataWrite::Append {
            items: vec![json!(4), json!(5)],
            max_items: 3,
        };
        let after = write.apply("feed", Some(before), 30).unwrap();
        assert_eq!(data_of(&after), json!([3, 4, 5]));
        let refused = write.apply("feed", Some(stored("json", json!({"a": 1}))), 30);
        assert!(matches!(refused, Err(Error::Conflict(_))), "{refused:?}");
        let markdown = write.apply("feed", Some(stored("markdown", json!("# x"))), 30);
        assert!(matches!(markdown, Err(Error::Conflict(_))), "{markdown:?}");
    }

    #[test]
    fn appends_keep_the_newest_items_that_fit_in_the_data_limit() {
        let big = json!("x".repeat(400_000));
        let write = DataWrite::Append {
            items: vec![big.clone(), big.clone(), big.clone(), json!("newest")],
            max_items: 10,
        };
        let after = write.apply("feed", None, 1).unwrap();
        assert_eq!(data_of(&after), json!([big.clone(), big, "newest"]));
        assert!(after.data.len() <= MAX_DATA_BYTES);
    }

    #[test]
    fn markdown_takes_a_string_whichever_the_mode() {
        let before = stored("markdown", json!("# old"));
        let merged = DataWrite::Merge(json!("# new"))
            .apply("feed", Some(before.clone()), 30)
            .unwrap();
        assert_eq!(data_of(&merged), json!("# new"));
        let refused = DataWrite::Replace(json!({"a": 1})).apply("feed", Some(before), 30);
        assert!(
            matches!(&refused, Err(Error::Validation { field, .. }) if field == "data"),
            "{refused:?}"
        );
    }
}
