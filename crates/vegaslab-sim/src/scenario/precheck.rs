//! The limits a scenario text can be held to before it is parsed: its size, and how many
//! `[[flows]]`, `[[links]]` and `[[udp]]` tables it writes. Parsing builds a tree of the whole
//! text, tens of times its size in memory and seconds per ten megabytes, so a text past a count
//! limit is refused here, in one pass over its bytes, before any of that is spent. The reader
//! checks the same limits again after parsing, exactly (entries written as inline tables,
//! `range` and `pairs` groups), so this pass only answers early.

use super::limits::{MAX_FLOWS, MAX_LINKS, MAX_SCENARIO_BYTES, MAX_UDP_SOURCES};
use super::{ErrorKind, ScenarioError};

/// The array-of-tables headers counted, with the limit on their entries.
const COUNTED: [(&str, usize, &str); 3] =
    [("flows", MAX_FLOWS, "flows"), ("links", MAX_LINKS, "links"), ("udp", MAX_UDP_SOURCES, "UDP sources")];

/// Refuse `text` when it is larger than [`MAX_SCENARIO_BYTES`] or has more `[[flows]]`,
/// `[[links]]` or `[[udp]]` headers than their limits allow; the error names the table.
pub fn precheck(text: &str, source: &str) -> Result<(), ScenarioError> {
    if text.len() > MAX_SCENARIO_BYTES {
        let message = format!(
            "the scenario text has {} bytes; at most {} MiB are read (write many flows with a range or pairs group, docs/scenario-format.md)",
            text.len(),
            MAX_SCENARIO_BYTES >> 20
        );
        return Err(ScenarioError::new(source, "", ErrorKind::TooLarge, message));
    }
    let counts = header_counts(text);
    for ((table, limit, what), n) in COUNTED.iter().zip(counts) {
        if n > *limit {
            let message = format!("the file has {n} [[{table}]] tables; at most {limit} {what} are allowed");
            return Err(ScenarioError::new(source, table, ErrorKind::TooLarge, message));
        }
    }
    Ok(())
}

/// How many lines of `text` are the header `[[flows]]`, `[[links]]` and `[[udp]]` (spaces
/// allowed inside the brackets, a comment after), counting only lines outside multi-line
/// strings: a line that looks like a header inside `"""..."""` is text.
fn header_counts(text: &str) -> [usize; 3] {
    let mut counts = [0usize; 3];
    let mut in_multiline: Option<&str> = None;
    for line in text.lines() {
        if in_multiline.is_none() {
            if let Some(name) = header_name(line) {
                if let Some(i) = COUNTED.iter().position(|(table, ..)| *table == name) {
                    counts[i] += 1;
                }
                continue;
            }
        }
        in_multiline = multiline_state_after(line, in_multiline);
    }
    counts
}

/// The table name of an array-of-tables header line (`[[ flows ]]  # comment`, the name
/// quoted or not: `[["flows"]]`), if it is one.
fn header_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("[[")?;
    let close = rest.find("]]")?;
    let after = rest[close + 2..].trim_start();
    let name = rest[..close].trim();
    let unquoted = ['"', '\''].iter().find_map(|&q| name.strip_prefix(q).and_then(|n| n.strip_suffix(q)));
    (after.is_empty() || after.starts_with('#')).then(|| unquoted.unwrap_or(name))
}

/// Whether a multi-line string (`"""` or `'''`) is still open after `line`, given whether
/// one was open at its start: a small scan of TOML's strings and comments on one line.
fn multiline_state_after<'a>(line: &str, mut open: Option<&'a str>) -> Option<&'a str> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let Some(delim) = open {
            if delim == "\"\"\"" && bytes[i] == b'\\' {
                i += 2; // an escape inside a basic string, the escaped byte included
                continue;
            }
            if line[i..].starts_with(delim) {
                open = None;
                i += 3;
                continue;
            }
            i += 1;
            continue;
        }
        match bytes[i] {
            b'#' => break,
            b'"' if line[i..].starts_with("\"\"\"") => {
                open = Some("\"\"\"");
                i += 3;
            }
            b'\'' if line[i..].starts_with("'''") => {
                open = Some("'''");
                i += 3;
            }
            b'"' | b'\'' => {
                // A one-line string: skip to its closing quote (escapes in basic strings).
                let quote = bytes[i];
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if quote == b'"' && bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_counted_outside_multiline_strings_only() {
        let text = "[[flows]]\nname = \"a\"\n  [[ flows ]] # second\nnotes = \"\"\"\n[[flows]]\n\"\"\"\n[[links]]\n[[udp]]\nx = '[[flows]]'\n[[\"flows\"]]\n[[ 'flows' ]]\n";
        assert_eq!(header_counts(text), [4, 1, 1]);
        let literal = "s = '''\n[[flows]]\n'''\n[[flows]]\n";
        assert_eq!(header_counts(literal), [1, 0, 0]);
        let escaped = "s = \"\"\"a \\\"\"\" still open\n[[flows]]\n\"\"\"\n";
        assert_eq!(header_counts(escaped), [0, 0, 0]);
        let comment = "# \"\"\" not a string\n[[flows]]\n";
        assert_eq!(header_counts(comment), [1, 0, 0]);
    }

    #[test]
    fn a_text_past_a_count_limit_is_refused_naming_the_table() {
        let one = "[[udp]]\n";
        let e = precheck(&one.repeat(MAX_UDP_SOURCES + 1), "s.toml").unwrap_err();
        assert_eq!(e.path, "udp");
        assert!(e.to_string().contains(&format!("{} [[udp]] tables", MAX_UDP_SOURCES + 1)), "{e}");
        assert!(precheck(&one.repeat(MAX_UDP_SOURCES), "s.toml").is_ok());
    }
}
