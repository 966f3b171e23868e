//! A [`Deserializer`] over a [`Value`] that only accepts JSON objects for structs.
//!
//! serde's derived structs also accept a JSON array of their fields in order,
//! so `{"x": 1, "y": 2}` could be sent as `[1, 2]`. Configurations are stored
//! and rendered as sent, so such an array would pass validation yet break every
//! reader following the schema. [`Strict`] refuses it; everything else behaves
//! exactly like deserializing from `&Value` (or from `Value`, for an owned body).

use serde::de::{
    value::{BorrowedStrDeserializer, StringDeserializer},
    DeserializeOwned, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Unexpected,
    Visitor,
};
use serde_json::{map, Error, Value};

/// Deserializes `T` from `value` with [`Strict`], tracking the path of an error.
pub(super) fn deserialize<'de, T: serde::Deserialize<'de>>(
    value: &'de Value,
) -> Result<T, serde_path_to_error::Error<Error>> {
    serde_path_to_error::deserialize(Strict(value))
}

/// The same from an owned `value`, whose strings, arrays and objects move into `T` instead
/// of being copied (a request body's `Value` fields, such as a batch's items). The error
/// has no path: read the value again with [`deserialize`] to locate it.
pub(crate) fn deserialize_owned<T: DeserializeOwned>(value: Value) -> Result<T, Error> {
    T::deserialize(Strict(value))
}

/// A JSON value [`Strict`] reads: borrowed, or owned and taken apart as it is read.
trait Node<'de>: Deserializer<'de, Error = Error> {
    type Items: ExactSizeIterator<Item = Self>;
    type Key: Deserializer<'de, Error = Error>;
    type Fields: ExactSizeIterator<Item = (Self::Key, Self)>;

    fn value(&self) -> &Value;
    /// An array's items, or the node itself when it is not an array.
    fn into_items(self) -> Result<Self::Items, Self>;
    /// An object's members, or the node itself when it is not an object.
    fn into_fields(self) -> Result<Self::Fields, Self>;
}

type BorrowedFields<'de> = std::iter::Map<
    map::Iter<'de>,
    fn((&'de String, &'de Value)) -> (BorrowedStrDeserializer<'de, Error>, &'de Value),
>;

impl<'de> Node<'de> for &'de Value {
    type Items = std::slice::Iter<'de, Value>;
    type Key = BorrowedStrDeserializer<'de, Error>;
    type Fields = BorrowedFields<'de>;

    fn value(&self) -> &Value {
        self
    }

    fn into_items(self) -> Result<Self::Items, Self> {
        match self {
            Value::Array(items) => Ok(items.iter()),
            other => Err(other),
        }
    }

    fn into_fields(self) -> Result<Self::Fields, Self> {
        match self {
            Value::Object(members) => Ok(members
                .iter()
                .map(|(key, value)| (BorrowedStrDeserializer::new(key), value))),
            other => Err(other),
        }
    }
}

type OwnedFields =
    std::iter::Map<map::IntoIter, fn((String, Value)) -> (StringDeserializer<Error>, Value)>;

impl Node<'_> for Value {
    type Items = std::vec::IntoIter<Value>;
    type Key = StringDeserializer<Error>;
    type Fields = OwnedFields;

    fn value(&self) -> &Value {
        self
    }

    fn into_items(self) -> Result<Self::Items, Self> {
        match self {
            Value::Array(items) => Ok(items.into_iter()),
            other => Err(other),
        }
    }

    fn into_fields(self) -> Result<Self::Fields, Self> {
        match self {
            Value::Object(members) => Ok(members
                .into_iter()
                .map(|(key, value)| (StringDeserializer::new(key), value))),
            other => Err(other),
        }
    }
}

/// A JSON value as a deserializer, except that structs must be JSON objects.
struct Strict<N>(N);

/// How serde describes `value` in "invalid type" errors.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (_, Some(i), _) => Unexpected::Signed(i),
            (_, _, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.$method(visitor)
        }
    )*};
}

impl<'de, N: Node<'de>> Deserializer<'de> for Strict<N> {
    type Error = Error;

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_unit deserialize_identifier deserialize_ignored_any deserialize_map
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0.value() {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.0.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let items = match self.0.into_items() {
            Ok(items) => items,
            Err(node) => return Err(Error::invalid_type(unexpected(node.value()), &visitor)),
        };
        let len = items.len();
        let mut seq = Seq(items);
        let value = visitor.visit_seq(&mut seq)?;
        match seq.0.len() {
            0 => Ok(value),
            _ => Err(Error::invalid_length(len, &"fewer elements in array")),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0.into_fields() {
            Ok(fields) => visitor.visit_map(Fields(fields, None)),
            Err(node) => Err(Error::invalid_type(unexpected(node.value()), &visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }
}

/// The elements of an array, each deserialized with [`Strict`].
struct Seq<I>(I);

impl<'de, I: ExactSizeIterator<Item: Node<'de>>> SeqAccess<'de> for Seq<I> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Strict(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

/// The members of an object read as struct fields, values with [`Strict`].
struct Fields<I, N>(I, Option<N>);

impl<'de, N: Node<'de>, I: ExactSizeIterator<Item = (N::Key, N)>> MapAccess<'de> for Fields<I, N> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.0.next() else {
            return Ok(None);
        };
        self.1 = Some(value);
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.1.take() {
            Some(value) => seed.deserialize(Strict(value)),
            None => Err(Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::{json, Map};

    #[derive(Debug, Deserialize, PartialEq)]
    struct Point {
        x: f64,
        y: Option<Vec<Point>>,
    }

    #[test]
    fn structs_must_be_objects() {
        let ok: Point = deserialize(&json!({"x": 1, "y": [{"x": 2, "y": null}]})).unwrap();
        assert_eq!(ok.y.map(|y| y.len()), Some(1));
        for (value, path) in [
            (json!([1, null]), "."),
            (json!({"x": 1, "y": [[2, null]]}), "y[0]"),
        ] {
            let err = deserialize::<Point>(&value).unwrap_err();
            assert_eq!(err.path().to_string(), path);
            assert!(err.inner().to_string().contains("invalid type: sequence"));
        }
    }

    #[test]
    fn an_owned_value_reads_as_a_borrowed_one() {
        let value = json!({"x": 1.5, "y": [{"x": 2, "y": null}]});
        let owned: Point = deserialize_owned(value.clone()).unwrap();
        assert_eq!(owned, deserialize::<Point>(&value).unwrap());
        for value in [json!([1, null]), json!({"x": 1, "y": [[2, null]]})] {
            let err = deserialize_owned::<Point>(value).unwrap_err();
            assert!(err.to_string().contains("invalid type: sequence"));
        }
        let map: Map<String, Value> = deserialize_owned(json!({"a": [1], "b": "x"})).unwrap();
        assert_eq!(Value::Object(map), json!({"a": [1], "b": "x"}));
        let err = deserialize_owned::<(u8,)>(json!([1, 2])).unwrap_err();
        assert!(err.to_string().contains("fewer elements"));
    }

    #[test]
    fn other_types_behave_as_from_value() {
        let value = json!({"a": [1, 2], "b": "x"});
        let map: Map<String, Value> = deserialize(&value).unwrap();
        assert_eq!(Value::Object(map), value);
        let tuple: (u8, String) = deserialize(&json!([1, "x"])).unwrap();
        assert_eq!(tuple, (1, "x".to_owned()));
        let err = deserialize::<(u8,)>(&json!([1, 2])).unwrap_err();
        assert!(err.inner().to_string().contains("fewer elements"));
        let err = deserialize::<Vec<u8>>(&json!({})).unwrap_err();
        assert!(err.inner().to_string().contains("invalid type: map"));
    }
}
