//! JSON text kept as it is: stored columns shown in records (a pin's configuration, a
//! dataset's data) and answers serialised once for speed (rendered records kept for lists,
//! the answer an idempotent retry replays). The text is checked once, when it is wrapped;
//! writing it out copies it. No module outside the store and the API handles the raw text.

use std::{fmt, marker::PhantomData, sync::Arc};

use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::{Error, Result};

/// The JSON of a `T`, serialised once and written out as it is. `T` says what it holds:
/// [`Serialized::new`] makes it from a `T`; [`Serialized::stored`] trusts text this
/// service serialised from a `T` and stored.
pub struct Serialized<T: ?Sized> {
    text: Arc<RawValue>,
    of: PhantomData<fn() -> T>,
}

/// A stored JSON value shown in a record as it is (a pin's `pin_config`, a dataset's
/// `data`): any JSON, checked when it is read.
pub type JsonText = Serialized<serde_json::Value>;

/// Stored JSON text checked to be JSON, as it is (without building its value: copying a
/// store out, as an archive does, costs mostly this).
pub fn checked_json(text: &str) -> Result<&str> {
    let raw: &RawValue =
        serde_json::from_str(text).map_err(|e| Error::internal_in("stored JSON", e))?;
    Ok(raw.get())
}

impl<T: ?Sized> Clone for Serialized<T> {
    fn clone(&self) -> Self {
        Serialized {
            text: self.text.clone(),
            of: PhantomData,
        }
    }
}

impl<T: ?Sized> fmt::Debug for Serialized<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text.get())
    }
}

impl<T: Serialize + ?Sized> Serialized<T> {
    /// `value` serialised.
    pub fn new(value: &T) -> Result<Self> {
        let text = serde_json::value::to_raw_value(value).map_err(Error::internal)?;
        Ok(Serialized {
            text: Arc::from(text),
            of: PhantomData,
        })
    }
}

impl<T: ?Sized> Serialized<T> {
    /// Text this service stored as the JSON of a `T` (checked to be JSON).
    pub fn stored(text: impl Into<String>) -> Result<Self> {
        let text = RawValue::from_string(text.into()).map_err(Error::internal)?;
        Ok(Serialized {
            text: Arc::from(text),
            of: PhantomData,
        })
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        self.text.get()
    }

    /// The same text as the JSON of a `U` made from a `T` (a `T`'s JSON is a `U`'s, as for
    /// an untagged enum with a `T` variant).
    pub fn widen<U: From<T>>(self) -> Serialized<U>
    where
        T: Sized,
    {
        Serialized {
            text: self.text,
            of: PhantomData,
        }
    }
}

impl<T: ?Sized> Serialize for Serialized<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        self.text.serialize(serializer)
    }
}
