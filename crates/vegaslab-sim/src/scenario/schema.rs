//! The JSON Schema of the normalised scenario ([`super::normalize`]), generated from the very
//! types that serialise it, so that it cannot drift from them: what the ns-2 bridge, the
//! testbed, the kernel helpers and the docs read the layout from, and what a user's tool can
//! validate a stored scenario against. Versioned by [`super::normalize::FORMAT`], the document's
//! `format`.
//!
//! The schema is strict: every object lists its keys and allows no others, so a document of
//! another layout fails validation instead of being half-read.

use schemars::generate::SchemaSettings;
use serde_json::{json, Value};

use super::normalize::FORMAT;
use super::Scenario;

/// The schema's `$id`: a URN naming the layout version (no network location is implied).
pub fn schema_id() -> String {
    format!("urn:vegaslab:normalised-scenario:{FORMAT}")
}

/// The JSON Schema (draft 2020-12) of the normalised scenario of layout [`FORMAT`].
pub fn schema() -> Value {
    // The serialising contract: a key left out when it holds its default is optional.
    let generator = SchemaSettings::draft2020_12().for_serialize().into_generator();
    let root = generator.into_root_schema_for::<Scenario>();
    let mut value = serde_json::to_value(root).expect("a schema serialises");
    let object = value.as_object_mut().expect("a root schema is an object");
    object.insert("$id".into(), schema_id().into());
    object.insert("title".into(), format!("vegaslab normalised scenario, format {FORMAT}").into());
    object.insert(
        "description".into(),
        "A scenario as vegaslab's core resolves it before a run: every default filled in, times in integer \
         nanoseconds (keys ending in _ns) except the TCP timers and traffic means in seconds, bandwidths in \
         bit/s, sizes in bytes, nodes by index, referenced files by content hash, no file paths."
            .into(),
    );
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.insert("format".into(), json!({ "const": FORMAT, "description": "The layout version." }));
    }
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required.push("format".into());
    }
    close_objects(&mut value);
    value
}

/// Every object schema with listed properties allows no other key. An object that adds keys
/// to a referenced one (a tagged enum variant: `kind` beside a `$ref` to the variant's struct)
/// is closed with `unevaluatedProperties`, which sees the referenced keys, and the referenced
/// struct is left open, as its own `additionalProperties` would refuse the sibling's `kind`.
fn close_objects(value: &mut Value) {
    let mut extended = Vec::new();
    collect_extended(value, &mut extended);
    close(value, &extended, None);
}

/// The `$defs` names that an object with properties of its own references.
fn collect_extended(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if map.contains_key("properties") {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r.trim_start_matches("#/$defs/").to_string());
                }
            }
            map.values().for_each(|v| collect_extended(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_extended(v, out)),
        _ => {}
    }
}

fn close(value: &mut Value, extended: &[String], def_name: Option<&str>) {
    match value {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                if map.contains_key("$ref") {
                    map.insert("unevaluatedProperties".into(), false.into());
                } else if !def_name.is_some_and(|n| extended.iter().any(|e| e == n)) {
                    map.insert("additionalProperties".into(), false.into());
                }
            }
            for (key, v) in map.iter_mut() {
                if key == "$defs" {
                    if let Value::Object(defs) = v {
                        for (name, d) in defs.iter_mut() {
                            close(d, extended, Some(name));
                        }
                    }
                } else {
                    close(v, extended, None);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| close(v, extended, None)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_its_layout_version_and_requires_it() {
        let s = schema();
        assert_eq!(s["$id"], schema_id());
        assert_eq!(s["properties"]["format"]["const"], FORMAT);
        assert!(s["required"].as_array().unwrap().contains(&"format".into()));
        assert_eq!(s["additionalProperties"], false);
    }

    #[test]
    fn every_algorithm_form_is_in_the_schema() {
        let text = schema().to_string();
        for entry in vegaslab_cc::ALGORITHMS {
            assert!(text.contains(&format!("\"{}\"", entry.tag)), "{} missing", entry.tag);
        }
    }
}
