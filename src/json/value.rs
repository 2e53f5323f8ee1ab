//! A small JSON value for the pure modules.
//!
//! The wasm build does not link serde_json: it costs tens of kilobytes, and the
//! loop only needs JSON in three cold places (tool arguments during validation,
//! schemas, and streamed partial arguments). Objects keep insertion order because
//! JavaScript objects do, and error messages print arguments in that order.

use crate::prelude::*;
/// A JSON value with insertion-ordered objects.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// An insertion-ordered map of string keys, as a JavaScript object keeps them.
///
/// Lookups are linear: tool arguments and schemas have few keys per object, and a
/// `Vec` keeps the code small. A one-word filter of the keys ever inserted lets
/// most lookups of an absent key skip the scan: schema validation asks each
/// schema object for some forty keywords, of which it holds two or three.
#[derive(Clone, Debug, Default)]
pub struct Map {
    entries: Vec<(String, Value)>,
    /// The [`key_bit`] of every key inserted (removals leave theirs set). One
    /// `u32`, so that a `Value` stays four words.
    keys_seen: u32,
}

/// A key's bit in [`Map::keys_seen`]: from its second and last bytes and its
/// length, which tell most schema keywords apart (`minItems`/`maxItems`).
#[inline(always)]
fn key_bit(key: &str) -> u32 {
    let b = key.as_bytes();
    let second = b.get(1).or(b.first()).map_or(0, |&c| u32::from(c));
    let last = b.last().map_or(0, |&c| u32::from(c));
    let len = b.len() as u32;
    1 << (second
        .wrapping_add(last << 3)
        .wrapping_add(len.wrapping_mul(6))
        & 31)
}

impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl Map {
    pub fn new() -> Self {
        Map {
            entries: Vec::new(),
            keys_seen: 0,
        }
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// Where `key` is, if anywhere.
    fn position(&self, key: &str) -> Option<usize> {
        if self.keys_seen & key_bit(key) == 0 {
            return None;
        }
        self.entries
            .iter()
            .position(|(k, _)| k.len() == key.len() && k == key)
    }
    pub fn get(&self, key: &str) -> Option<&Value> {
        let i = self.position(key)?;
        self.entries.get(i).map(|(_, v)| v)
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        let i = self.position(key)?;
        self.entries.get_mut(i).map(|(_, v)| v)
    }
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    /// Sets `key`, keeping its position when it already exists (as JS assignment does).
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        let key = key.into();
        match self.get_mut(&key) {
            Some(slot) => *slot = value,
            None => {
                self.keys_seen |= key_bit(&key);
                self.entries.push((key, value));
            }
        }
    }
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.position(key)?;
        Some(self.entries.remove(pos).1)
    }
    pub fn clear(&mut self) {
        self.entries.clear();
        self.keys_seen = 0;
    }
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&String, &mut Value)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.entries.iter().map(|(k, _)| k)
    }
}

impl FromIterator<(String, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        let mut map = Map::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }
    /// Member lookup that is `None` for non-objects, like optional chaining.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|o| o.get(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_filter_never_hides_a_key() {
        let keys = [
            "",
            "a",
            "ab",
            "minItems",
            "maxItems",
            "type",
            "\u{e9}t\u{e9}",
            "~kind",
        ];
        let mut m = Map::new();
        for (i, k) in keys.iter().enumerate() {
            m.insert(*k, Value::Number(i as f64));
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(m.get(k), Some(&Value::Number(i as f64)), "{k:?}");
        }
        assert_eq!(m.get("minimum"), None);
        assert_eq!(m.remove("maxItems"), Some(Value::Number(4.0)));
        assert_eq!(m.get("maxItems"), None);
        assert_eq!(m.get("minItems"), Some(&Value::Number(3.0)));
        m.insert("maxItems", Value::Null);
        assert_eq!(m.get("maxItems"), Some(&Value::Null));
        m.clear();
        assert_eq!(m.get("type"), None);
        m.insert("type", Value::Bool(true));
        assert_eq!(m.get_mut("type"), Some(&mut Value::Bool(true)));
    }

    #[test]
    fn equality_ignores_the_filter() {
        let mut a = Map::new();
        a.insert("x", Value::Null);
        a.insert("y", Value::Null);
        a.remove("y");
        let mut b = Map::new();
        b.insert("x", Value::Null);
        assert_eq!(a, b);
    }
}
