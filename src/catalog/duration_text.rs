//! Durations written as text (`"PT10M"`, `"15s"`, `"500ms"`): in the
//! catalog's defaults and in string arguments of lock calls.

/// `"PT10M"`, `"15s"`, `"500ms"`, `"10m"`, `"1h30m"` → ms.
pub fn parse(s: &str) -> Option<f64> {
    let s = s.trim();
    if let Some(iso) = s.strip_prefix("PT").or_else(|| s.strip_prefix("pt")) {
        return parse_units(iso, true);
    }
    parse_units(s, false)
}

fn parse_units(s: &str, iso: bool) -> Option<f64> {
    let mut total = 0.0;
    let mut num = String::new();
    let mut chars = s.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let mut unit = c.to_ascii_lowercase().to_string();
        if unit == "m" && chars.peek() == Some(&'s') {
            chars.next();
            unit = "ms".into();
        }
        let n: f64 = num.parse().ok()?;
        num.clear();
        total += n * match unit.as_str() {
            "h" => 3_600_000.0,
            "m" => 60_000.0,
            "s" => 1000.0,
            "ms" if !iso => 1.0,
            "d" if !iso => 86_400_000.0,
            _ => return None,
        };
        any = true;
    }
    if !num.is_empty() {
        return None;
    }
    any.then_some(total)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn duration_strings() {
        assert_eq!(parse("PT10M"), Some(600_000.0));
        assert_eq!(parse("15s"), Some(15_000.0));
        assert_eq!(parse("500ms"), Some(500.0));
        assert_eq!(parse("1h30m"), Some(5_400_000.0));
        assert_eq!(parse("soon"), None);
    }
}
