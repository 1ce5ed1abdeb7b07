//! Override paths as sequences of steps, compared by meaning rather than spelling
//! (`flows[00].cc` is `flows[0].cc`): to find two axes on the same field or one inside the
//! other (docs/sweep-format.md, "Axes", **Distinct points**), and to tell which axis a field
//! the core rejected belongs to.

/// One step of an override path, as `overrides.rs` reads it (compared here to find axes on
/// the same field; an unreadable path is reported by the override code itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum PathStep {
    Key(String),
    Index(usize),
}

/// The steps of `path`, or `None` when it does not read as a path.
pub(super) fn parse_steps(path: &str) -> Option<Vec<PathStep>> {
    let mut steps = Vec::new();
    for part in path.trim().split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() {
            return None;
        }
        steps.push(PathStep::Key(name.to_string()));
        while let Some(stripped) = rest.strip_prefix('[') {
            let close = stripped.find(']')?;
            steps.push(PathStep::Index(stripped[..close].parse().ok()?));
            rest = &stripped[close + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(steps)
}

/// Whether `a` is `b` or a field that contains it.
pub(super) fn is_prefix(a: &[PathStep], b: &[PathStep]) -> bool {
    a.len() <= b.len() && a == &b[..a.len()]
}

/// Whether `a` and `b` are one field, or one is inside the other.
pub(super) fn overlap(a: &[PathStep], b: &[PathStep]) -> bool {
    is_prefix(a, b) || is_prefix(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_steps_compare_by_meaning_not_spelling() {
        assert_eq!(parse_steps("flows[00].cc"), parse_steps("flows[0].cc"));
        assert!(is_prefix(&parse_steps("links[1].queue").unwrap(), &parse_steps("links[1].queue.limit").unwrap()));
        assert!(!is_prefix(&parse_steps("links[1].queue.limit").unwrap(), &parse_steps("links[1].queue").unwrap()));
        assert_eq!(parse_steps("a..b"), None);
    }
}
