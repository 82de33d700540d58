//! How a SQL text reads: the quoted parts of source code, its spacing and
//! comments, and whether it starts like a statement rather than prose.

/// The quoted parts of source text, uppercased: what a statement may say,
/// never the code around it (`etcd.get_lock('attribute/%s' % kind)` calls no
/// SQL `GET_LOCK`).
pub(super) fn literals(code: &str) -> String {
    let mut out = String::new();
    let mut quote = None;
    let mut escaped = false;
    for c in code.chars() {
        match quote {
            None if matches!(c, '"' | '\'' | '`') => quote = Some(c),
            None => {}
            Some(_) if escaped => {
                escaped = false;
                out.push(c.to_ascii_uppercase());
            }
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => {
                quote = None;
                out.push(' ');
            }
            Some(_) => out.push(c.to_ascii_uppercase()),
        }
    }
    out
}

/// `FOR  UPDATE` → `FOR UPDATE`: SQL spacing does not matter, and neither
/// do block comments (`lock /* gh-ost */ tables`, optimizer hints).
pub(super) fn squeeze(s: &str) -> String {
    let mut text = String::with_capacity(s.len());
    let mut rest = s;
    while let Some((before, after)) = rest.split_once("/*") {
        text.push_str(before);
        text.push(' ');
        rest = after.split_once("*/").map_or("", |(_, r)| r);
    }
    text.push_str(rest);
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" (", "(")
}

/// Words a SQL text starts with (after quotes, comments and parentheses).
const STATEMENT_WORDS: &[&str] = &[
    "SELECT", "WITH", "UPDATE", "DELETE", "INSERT", "FOR", "LOCK", "DO", "BEGIN", "DECLARE",
    "PERFORM", "EXPLAIN", "CREATE", "VALUES", "FROM", "WHERE", "AND", "OR", "LIMIT", "ORDER",
    "SET", "CALL", "EXEC", "MERGE", "UNION", "JOIN", "INNER", "LEFT",
];

/// Does the (uppercase) text read as SQL rather than prose: is its first word
/// a statement or clause word, or is its start not in sight (a fragment joined
/// to a base query, an interpolation)? `"failed to convert select for update
/// query to SQL: %w"` is an error message.
pub(super) fn reads_as_sql(sql: &str) -> bool {
    let mut rest = sql.trim_start();
    loop {
        let before = rest;
        // A template's prefix and quotes (`F"`, a backtick), parentheses, comments.
        rest = rest
            .trim_start_matches(|c: char| "FRB\"'`(".contains(c) && rest.len() > 1)
            .trim_start();
        if let Some(comment) = rest.strip_prefix("--") {
            rest = comment.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else if let Some(comment) = rest.strip_prefix("/*") {
            rest = comment.split_once("*/").map_or("", |(_, r)| r).trim_start();
        }
        if rest == before {
            break;
        }
    }
    let first: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '_')
        .collect();
    first.is_empty() || STATEMENT_WORDS.contains(&first.as_str())
}

#[cfg(test)]
mod tests {
    use super::literals;

    #[test]
    fn literals_keep_only_quoted_text() {
        assert_eq!(literals("etcd.get_lock('a/%s' % kind)").trim(), "A/%S");
        assert_eq!(
            literals("`SELECT pg_try_advisory_lock(${k})` + \"x\\\"y\"").trim(),
            "SELECT PG_TRY_ADVISORY_LOCK(${K}) X\"Y"
        );
        assert_eq!(literals("lockClause"), "");
    }
}
