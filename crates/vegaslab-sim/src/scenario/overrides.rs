//! `key=value` overrides applied to the parsed TOML before validation, so the CLI's
//! `--set`, Python's `overrides=` and the catalog's variants all go through one path.
//!
//! Keys are dotted paths with list indices (`flows[0].params.alpha`); values are TOML
//! scalars, arrays or inline tables when they parse as such, else strings.
//!
//! A flow can also be picked by its name, `flows[vegas7].params.alpha=4`: the name a run reports,
//! so one flow of a `range`/`pairs` group can be changed without rewriting the group. A single
//! flow's entry is set directly (`flows[j]...`); a group member's settings go to the group's
//! `members.<name>` table (`flows[j].members.vegas7.params.alpha`), which the scenario reader
//! merges into that flow alone. Names are resolved when the override is applied, against the
//! scenario as the earlier overrides left it.

use super::flows::{entry_names, some_names};
use super::ErrorKind;
use toml::{value::Table, Value};

/// A failed override: the path as given, what is wrong, and its kind.
pub type OverrideError = (String, String, ErrorKind);

/// Most steps (keys and indices) in one override path: far more than the schema's deepest
/// field (about 6), and small enough that following a path can never exhaust the stack.
pub const MAX_PATH_STEPS: usize = 32;

/// Deepest nesting of arrays and inline tables in an override's value: the schema's deepest
/// value nests 3 levels; a scenario file's own parser stops near 80.
pub const MAX_VALUE_NESTING: usize = 64;

/// Apply each override in order. Errors are `(path, message, kind)`.
pub fn apply_overrides(root: &mut Value, overrides: &[String]) -> Result<(), OverrideError> {
    for item in overrides {
        let (key, raw) = item
            .split_once('=')
            .ok_or_else(|| (item.clone(), "override must look like key=value".to_string(), ErrorKind::Syntax))?;
        let key = key.trim();
        let steps = parse_path(key).map_err(|m| (key.to_string(), m, ErrorKind::Syntax))?;
        let steps = resolve_names(root, steps).map_err(|(m, kind)| (key.to_string(), m, kind))?;
        let value = parse_value(raw.trim()).map_err(|m| (key.to_string(), m, ErrorKind::TooLarge))?;
        set(root, &steps, value).map_err(|(m, kind)| (key.to_string(), m, kind))?;
    }
    Ok(())
}

#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
    /// `[name]`: a flow by name (`flows[NAME]` only).
    Name(String),
}

/// `flows[NAME]` -> `flows[j]` (a single flow) or `flows[j].members.NAME` (a flow of group j).
fn resolve_names(root: &Value, steps: Vec<Step>) -> Result<Vec<Step>, (String, ErrorKind)> {
    let name_at = steps.iter().position(|s| matches!(s, Step::Name(_)));
    let Some(at) = name_at else { return Ok(steps) };
    if at != 1 || steps[0] != Step::Key("flows".into()) {
        return Err(("a name in brackets picks a flow, as in flows[vegas7]; other lists take a number".into(), ErrorKind::Syntax));
    }
    let Step::Name(name) = &steps[1] else { unreachable!() };
    let entries = root.get("flows").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut all = Vec::new();
    for (j, entry) in entries.iter().enumerate() {
        let names = entry_names(entry, j);
        if names.iter().any(|n| n == name) {
            let grouped = entry.get("range").or_else(|| entry.get("pairs")).is_some();
            let mut out = vec![Step::Key("flows".into()), Step::Index(j)];
            if grouped {
                out.extend([Step::Key("members".into()), Step::Key(name.clone())]);
            }
            out.extend(steps.into_iter().skip(2));
            return Ok(out);
        }
        all.extend(names);
    }
    let known = if all.is_empty() { "the scenario has no flows".to_string() } else { format!("the scenario's flows: {}", some_names(&all)) };
    Err((format!("no flow named \"{name}\" ({known})"), ErrorKind::Reference))
}

/// The dotted parts of an override key, a `.` inside brackets kept in its part (so that
/// `flows[a.b]` is one part whose bracket is judged as a whole).
fn split_parts(key: &str) -> Vec<&str> {
    let (mut parts, mut start, mut depth) = (Vec::new(), 0, 0usize);
    for (i, c) in key.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '.' if depth == 0 => {
                parts.push(&key[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&key[start..]);
    parts
}

fn parse_path(key: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for part in split_parts(key) {
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
            let inside = stripped[..close].trim();
            match inside.parse::<usize>() {
                Ok(idx) => steps.push(Step::Index(idx)),
                Err(_) if super::limits::valid_name(inside) => steps.push(Step::Name(inside.to_string())),
                Err(_) => {
                    return Err(format!(
                        "a list index must be a whole number, or a flow's name (flows[NAME]: {}), got '{}'",
                        super::limits::NAME_CHARS,
                        super::limits::printable(inside)
                    ))
                }
            }
            rest = &stripped[close + 1..];
        }
        if !rest.is_empty() {
            return Err(format!("unexpected '{}' in override path", super::limits::printable(rest)));
        }
        if steps.len() > MAX_PATH_STEPS {
            return Err(format!("an override path may have at most {MAX_PATH_STEPS} parts"));
        }
    }
    Ok(steps)
}

/// How deeply arrays and inline tables nest in an override's value (brackets and braces
/// outside quoted strings).
fn nesting_depth(raw: &str) -> usize {
    let (mut depth, mut deepest, mut quote, mut escaped) = (0usize, 0usize, None, false);
    for c in raw.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
}

/// An override's value: TOML when it parses as a TOML value (numbers, booleans, arrays,
/// inline tables), else the text itself as a string. A value nested deeper than
/// [`MAX_VALUE_NESTING`] is an error, as it is in a scenario file (the TOML parser's own
/// limit), not a string.
fn parse_value(raw: &str) -> Result<Value, String> {
    let depth = nesting_depth(raw);
    if depth > MAX_VALUE_NESTING {
        return Err(format!("the value nests arrays or tables {depth} levels deep; at most {MAX_VALUE_NESTING} are allowed"));
    }
    let doc = format!("v = {raw}");
    Ok(match toml::from_str::<Table>(&doc) {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| Value::String(raw.to_string())),
        Err(_) => Value::String(raw.to_string()),
    })
}

fn set(node: &mut Value, steps: &[Step], value: Value) -> Result<(), (String, ErrorKind)> {
    let (first, rest) = steps.split_first().expect("non-empty path");
    let syntax = |m: String| (m, ErrorKind::Syntax);
    match first {
        Step::Key(k) => {
            let table = node.as_table_mut().ok_or_else(|| syntax(format!("'{k}' is inside something that is not a table")))?;
            if rest.is_empty() {
                table.insert(k.clone(), value);
                return Ok(());
            }
            // A new table may be made on the way (`flows[0].params.alpha` on a flow without
            // params), a new list not: its entries could not be indexed. So a missing key
            // followed by an index is a key the scenario does not have (`flow[0]`).
            if matches!(rest[0], Step::Index(_) | Step::Name(_)) && !table.contains_key(k) {
                let near = table
                    .keys()
                    .filter(|key| table[key.as_str()].is_array())
                    .min_by_key(|key| super::spelling::edit_distance(key, k))
                    .filter(|key| super::spelling::edit_distance(key, k) <= 3)
                    .map(|key| format!(" (did you mean '{key}'?)"))
                    .unwrap_or_default();
                return Err((format!("unknown key '{k}': the scenario has no list '{k}' to index{near}"), ErrorKind::UnknownField));
            }
            let child = table.entry(k.clone()).or_insert_with(|| Value::Table(Table::new()));
            set(child, rest, value)
        }
        Step::Index(i) => {
            let arr = node.as_array_mut().ok_or_else(|| syntax(format!("[{i}] is applied to something that is not a list")))?;
            let len = arr.len();
            let child = arr
                .get_mut(*i)
                .ok_or_else(|| syntax(format!("no entry [{i}]: the list has {len} entries")))?;
            if rest.is_empty() {
                *child = value;
                return Ok(());
            }
            set(child, rest, value)
        }
        Step::Name(n) => Err(syntax(format!("[{n}]: a name in brackets picks a flow, as in flows[vegas7]"))),
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
        let (path, msg, _) = apply_overrides(&mut v, &["flows[3].cc=reno".into()]).unwrap_err();
        assert_eq!(path, "flows[3].cc");
        assert!(msg.contains("1 entries"), "{msg}");
    }

    #[test]
    fn a_very_deep_override_path_is_an_error_not_a_stack_overflow() {
        let mut v = doc();
        let key = vec!["a"; 50_000].join(".");
        let (_, msg, _) = apply_overrides(&mut v, &[format!("{key}=1")]).unwrap_err();
        assert!(msg.contains("at most 32 parts"), "{msg}");
    }

    #[test]
    fn a_bracket_holding_a_dot_is_judged_whole_and_named_in_the_error() {
        let mut v = doc();
        let (path, msg, kind) = apply_overrides(&mut v, &["flows[../x].cc=reno".into()]).unwrap_err();
        assert_eq!(path, "flows[../x].cc");
        assert!(msg.contains("got '../x'") && msg.contains("flow's name"), "{msg}");
        assert_eq!(kind, ErrorKind::Syntax);
        let (_, msg, _) = apply_overrides(&mut v, &["flows[0.5].cc=reno".into()]).unwrap_err();
        assert!(msg.contains("got '0.5'"), "{msg}");
    }

    #[test]
    fn an_override_value_nested_too_deep_is_an_error_not_a_string() {
        let mut v = doc();
        for depth in [MAX_VALUE_NESTING + 1, 60_000] {
            let value = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            let (path, msg, kind) = apply_overrides(&mut v, &[format!("run.x={value}")]).unwrap_err();
            assert_eq!((path.as_str(), kind), ("run.x", ErrorKind::TooLarge));
            assert!(msg.contains(&format!("{depth} levels deep")) && msg.contains("at most 64"), "{msg}");
        }
        let ok = format!("{}{}", "[".repeat(MAX_VALUE_NESTING), "]".repeat(MAX_VALUE_NESTING));
        assert!(apply_overrides(&mut v, &[format!("run.x={ok}")]).is_ok());
        // Brackets inside a quoted string are text.
        assert!(apply_overrides(&mut v, &[format!("run.x=\"{}\"", "[".repeat(1000))]).is_ok());
    }

    #[test]
    fn override_without_equals_is_rejected() {
        let mut v = doc();
        assert!(apply_overrides(&mut v, &["run.duration".into()]).is_err());
    }
}
