//! Object-only reading of request parameters.
//!
//! serde's derived structs also accept a JSON *array* of their fields in declaration order, so
//! `"configuration": []` would read as a default configuration. ProtoJSON has no such form: a
//! message is always a JSON object. [`from_str`] and [`from_value`] read a value through a
//! deserializer adapter that refuses an array wherever a struct is expected, at any depth,
//! and otherwise changes nothing (the adapter only wraps; it allocates nothing).

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use std::fmt;

/// Reads `T` from JSON text, refusing arrays in place of objects.
pub fn from_str<'a, T: de::Deserialize<'a>>(text: &'a str) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Strict(&mut de))?;
    de.end()?;
    Ok(value)
}

/// Reads `T` from a JSON value, refusing arrays in place of objects.
pub fn from_value<'a, T: de::Deserialize<'a>>(
    value: &'a serde_json::Value,
) -> Result<T, serde_json::Error> {
    T::deserialize(Strict(value))
}

/// A deserializer (or access, or seed) whose nested values are read strictly too.
struct Strict<D>(D);

/// A visitor that refuses a sequence when `object` (it stands for a struct).
struct StrictVisitor<V> {
    inner: V,
    object: bool,
}

impl<V> StrictVisitor<V> {
    fn any(inner: V) -> Self {
        Self {
            inner,
            object: false,
        }
    }
}

macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.0.$method(StrictVisitor::any(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_unit_struct(name, StrictVisitor::any(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_newtype_struct(name, StrictVisitor::any(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_tuple(len, StrictVisitor::any(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_tuple_struct(name, len, StrictVisitor::any(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = StrictVisitor {
            inner: visitor,
            object: true,
        };
        self.0.deserialize_struct(name, fields, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0
            .deserialize_enum(name, variants, StrictVisitor::any(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

macro_rules! forward_visit {
    ($($method:ident: $ty:ty)*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for StrictVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visit! {
        visit_bool: bool visit_i8: i8 visit_i16: i16 visit_i32: i32 visit_i64: i64
        visit_i128: i128 visit_u8: u8 visit_u16: u16 visit_u32: u32 visit_u64: u64
        visit_u128: u128 visit_f32: f32 visit_f64: f64 visit_char: char visit_str: &str
        visit_borrowed_str: &'de str visit_string: String visit_bytes: &[u8]
        visit_borrowed_bytes: &'de [u8] visit_byte_buf: Vec<u8>
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_some(Strict(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_newtype_struct(Strict(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        if self.object {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        }
        self.inner.visit_seq(Strict(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_map(Strict(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_enum(Strict(data))
    }
}

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for Strict<T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(Strict(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.0.next_element_seed(Strict(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        self.0.next_key_seed(Strict(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        self.0.next_value_seed(Strict(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Strict<A> {
    type Error = A::Error;
    type Variant = Strict<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), Self::Error> {
        let (value, variant) = self.0.variant_seed(Strict(seed))?;
        Ok((value, Strict(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Strict<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        self.0.newtype_variant_seed(Strict(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.tuple_variant(len, StrictVisitor::any(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let visitor = StrictVisitor {
            inner: visitor,
            object: true,
        };
        self.0.struct_variant(fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use crate::{SendMessageRequest, TaskPushNotificationConfig};

    const MESSAGE: &str = r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}"#;

    #[test]
    fn an_array_where_an_object_belongs_is_refused_at_any_depth() {
        let top = format!(r#"{{"message":{MESSAGE},"configuration":[]}}"#);
        let err = super::from_str::<SendMessageRequest>(&top).unwrap_err();
        assert!(err.to_string().contains("invalid type: sequence"), "{err}");
        let nested = format!(
            r#"{{"message":{MESSAGE},"configuration":{{"taskPushNotificationConfig":["u"]}}}}"#
        );
        assert!(super::from_str::<SendMessageRequest>(&nested).is_err());
        let value: serde_json::Value = serde_json::from_str(&top).unwrap();
        assert!(super::from_value::<SendMessageRequest>(&value).is_err());
        // What the plain derive accepts, the adapter refuses: the bug this module exists for.
        assert!(serde_json::from_str::<SendMessageRequest>(&top).is_ok());
    }

    #[test]
    fn objects_arrays_options_and_enums_read_as_before() {
        let text = format!(
            r#"{{"message":{MESSAGE},"configuration":{{"acceptedOutputModes":["text/plain"],"historyLength":"3","taskPushNotificationConfig":null}},"metadata":{{"k":[1,{{"a":null}}]}}}}"#
        );
        let strict: SendMessageRequest = super::from_str(&text).unwrap();
        let plain: SendMessageRequest = serde_json::from_str(&text).unwrap();
        assert_eq!(strict, plain);
        let config = r#"{"taskId":"t","id":"c","url":"https://example.com/h","authentication":{"scheme":"Bearer"}}"#;
        let strict: TaskPushNotificationConfig = super::from_str(config).unwrap();
        assert_eq!(strict, serde_json::from_str(config).unwrap());
        assert!(super::from_str::<SendMessageRequest>(&format!("{text} x")).is_err());
    }
}
