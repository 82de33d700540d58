//! Source text as the model spells it, and the nesting guard.

/// The deepest bracket nesting `lower` accepts.
pub(super) const MAX_NESTING: usize = 2_000;

/// The deepest `(`/`[`/`{` nesting of a text (strings and comments included:
/// an over-estimate is fine for a guard).
pub(super) fn max_nesting(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Source text with comments dropped and whitespace kept only between two
/// word characters (strings untouched), so formatting does not matter:
/// `redis :: cmd ("SET")` → `redis::cmd("SET")`. Stops once the result is
/// longer than `limit` bytes: texts are abbreviated anyway, and nested
/// expressions would otherwise normalise the same bytes again and again.
pub(super) fn normalize(src: &str, limit: usize) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(src.len().min(limit + 4));
    let mut chars = src.chars().peekable();
    let mut in_str = false;
    let mut space = false;
    while let Some(c) = chars.next() {
        if out.len() > limit {
            break;
        }
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            while chars.next_if(|n| *n != '\n').is_some() {}
            space = true;
            continue;
        }
        if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut prev = ' ';
            for n in chars.by_ref() {
                if prev == '*' && n == '/' {
                    break;
                }
                prev = n;
            }
            space = true;
            continue;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && word(c) && out.chars().next_back().is_some_and(word) {
            out.push(' ');
        }
        space = false;
        in_str = c == '"';
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn normalized_text_ignores_layout_and_comments_but_not_strings() {
        let src =
            "redis :: cmd (\"SET  //x\")\n    // take it\n    .arg(&key) /* ttl */ .arg(\"PX\")";
        assert_eq!(
            normalize(src, 240),
            "redis::cmd(\"SET  //x\").arg(&key).arg(\"PX\")"
        );
        assert_eq!(normalize("&mut  conn", 240), "&mut conn");
        assert_eq!(normalize("f( \"a \\\" b\" ,x)", 240), "f(\"a \\\" b\",x)");
        assert!(normalize(&"x + ".repeat(1000), 240).len() <= 244);
    }
}
