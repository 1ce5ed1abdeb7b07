//! `key=value` overrides applied to the parsed TOML before validation, so the CLI's
//! `--set`, Python's `overrides=` and the catalog's variants all go through one path.
//!
//! Keys are dotted paths with list indices (`flows[0].params.alpha`); values are TOML
//! scalars, arrays or inline tables when they parse as such, else strings.

use toml::{value::Table, Value};

/// Most steps (keys and indices) in one override path: far more than the schema's deepest
/// field (about 6), and small enough that following a path can never exhaust the stack.
pub const MAX_PATH_STEPS: usize = 32;

/// Apply each override in order. Errors are `(path, message)`.
pub fn apply_overrides(root: &mut Value, overrides: &[String]) -> Result<(), (String, String)> {
    for item in overrides {
        let (key, raw) = item
            .split_once('=')
            .ok_or_else(|| (item.clone(), "override must look like key=value".to_string()))?;
        let key = key.trim();
        let steps = parse_path(key).map_err(|m| (key.to_string(), m))?;
        let value = parse_value(raw.trim());
        set(root, &steps, value).map_err(|m| (key.to_string(), m))?;
    }
    Ok(())
}

#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn parse_path(key: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() {
            return Err("empty name in override path".into());
        }
        steps.push(Step::Key(name.to_string()));
        while let Some(stripped) = rest.strip_prefix('[') {
            let close = stripped.find(']').ok_or("missing ']' in override path")?;
            let idx: usize = stripped[..close]
                .parse()
                .map_err(|_| format!("list index must be a whole number, got '{}'", &stripped[..close]))?;
            steps.push(Step::Index(idx));
            rest = &stripped[close + 1..];
        }
        if !rest.is_empty() {
            return Err(format!("unexpected '{rest}' in override path"));
        }
        if steps.len() > MAX_PATH_STEPS {
            return Err(format!("an override path may have at most {MAX_PATH_STEPS} parts"));
        }
    }
    Ok(steps)
}

fn parse_value(raw: &str) -> Value {
    let doc = format!("v = {raw}");
    match toml::from_str::<Table>(&doc) {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(raw.to_string())),
        Err(_) => Value::String(raw.to_string()),
    }
}

fn set(node: &mut Value, steps: &[Step], value: Value) -> Result<(), String> {
    let (first, rest) = steps.split_first().expect("non-empty path");
    match first {
        Step::Key(k) => {
            let table = node.as_table_mut().ok_or_else(|| format!("'{k}' is inside something that is not a table"))?;
            if rest.is_empty() {
                table.insert(k.clone(), value);
                return Ok(());
            }
            let child = table.entry(k.clone()).or_insert_with(|| match rest[0] {
                Step::Key(_) => Value::Table(Table::new()),
                Step::Index(_) => Value::Array(Vec::new()),
            });
            set(child, rest, value)
        }
        Step::Index(i) => {
            let arr = node.as_array_mut().ok_or_else(|| format!("[{i}] is applied to something that is not a list"))?;
            let len = arr.len();
            let child = arr
                .get_mut(*i)
                .ok_or_else(|| format!("no entry [{i}]: the list has {len} entries"))?;
            if rest.is_empty() {
                *child = value;
                return Ok(());
            }
            set(child, rest, value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        toml::from_str("[run]\nduration = \"10s\"\n[[flows]]\ncc = \"reno\"\n").unwrap()
    }

    #[test]
    fn overrides_set_nested_fields_and_parse_scalars() {
        let mut v = doc();
        apply_overrides(
            &mut v,
            &["run.duration=100s".into(), "flows[0].cc=vegas".into(), "flows[0].params.alpha=2".into()],
        )
        .unwrap();
        assert_eq!(v["run"]["duration"].as_str(), Some("100s"));
        assert_eq!(v["flows"][0]["cc"].as_str(), Some("vegas"));
        assert_eq!(v["flows"][0]["params"]["alpha"].as_integer(), Some(2));
    }

    #[test]
    fn override_of_a_missing_list_entry_says_how_many_there_are() {
        let mut v = doc();
        let (path, msg) = apply_overrides(&mut v, &["flows[3].cc=reno".into()]).unwrap_err();
        assert_eq!(path, "flows[3].cc");
        assert!(msg.contains("1 entries"), "{msg}");
    }

    #[test]
    fn a_very_deep_override_path_is_an_error_not_a_stack_overflow() {
        let mut v = doc();
        let key = vec!["a"; 50_000].join(".");
        let (_, msg) = apply_overrides(&mut v, &[format!("{key}=1")]).unwrap_err();
        assert!(msg.contains("at most 32 parts"), "{msg}");
    }

    #[test]
    fn override_without_equals_is_rejected() {
        let mut v = doc();
        assert!(apply_overrides(&mut v, &["run.duration".into()]).is_err());
    }
}
