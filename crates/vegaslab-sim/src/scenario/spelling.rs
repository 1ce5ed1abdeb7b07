//! Suggestions for misspelt names: the known name nearest to an unknown key, unit or
//! override path. A module of its own because the unit parser (`crate::units`) suggests
//! units and the scenario reader, which suggests keys, reads quantities through the unit
//! parser: kept in the reader, it made the two import each other.

/// Levenshtein distance in characters (for suggestions).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
