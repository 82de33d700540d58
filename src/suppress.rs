//! Inline suppressions: `lock-audit: allow(LA201, reason="...")` on the line
//! of a finding or in the comment block directly above it, and
//! `lock-audit: allow-file(LA105, reason="...")` anywhere in a file. Codes or
//! names. A suppression without a reason still suppresses but is LA001
//! (when reasons are required); one that suppresses nothing is LA002.

use crate::checks::Finding;
use crate::checks::{self, Rule};
use crate::lines::LineIndex;
use crate::model::{Comment, Span};

/// One parsed suppression comment.
struct Allow {
    span: Span,
    /// The lines it covers; `None` for the whole file.
    lines: Option<(usize, usize)>,
    rules: Vec<&'static Rule>,
    unknown: Vec<String>,
    reason: bool,
    used: bool,
}

/// A `lock-audit:` comment that is not one of the directives, and what was
/// expected instead.
struct Malformed {
    span: Span,
    problem: String,
}

/// The forms a `lock-audit:` comment may take.
const EXPECTED: &str = "expected `allow(CODE, reason=\"...\")`, `allow-file(CODE, reason=\"...\")`, `correctness` or `efficiency`";

/// `LA201, unchecked-release, reason="a, b (c)"` split at the commas outside
/// quotes, and the text after the closing parenthesis outside quotes; `None`
/// when the parenthesis or a quote is never closed.
fn split_args(after_open: &str) -> Option<(Vec<&str>, &str)> {
    let mut parts = Vec::new();
    let (mut start, mut quote) = (0, None);
    for (i, c) in after_open.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, ',') => {
                parts.push(&after_open[start..i]);
                start = i + 1;
            }
            (None, ')') => {
                parts.push(&after_open[start..i]);
                return Some((parts, &after_open[i + 1..]));
            }
            _ => {}
        }
    }
    None
}

/// `allow(LA201, unchecked-release, reason="...")` → (ids, has reason).
fn parse_args(parts: &[&str]) -> Result<(Vec<String>, bool), String> {
    let mut ids = Vec::new();
    let mut reason = false;
    for part in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        if let Some(r) = part.strip_prefix("reason") {
            let value = r.trim_start().strip_prefix('=').map(str::trim);
            let unquoted = value.and_then(|v| {
                let q = v.chars().next().filter(|c| matches!(c, '"' | '\''))?;
                v.strip_prefix(q)?.strip_suffix(q)
            });
            match unquoted {
                Some(v) => reason |= !v.trim().is_empty(),
                None => return Err(format!("`{part}`: write the reason as reason=\"...\"")),
            }
        } else if part
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            ids.push(part.to_string());
        } else {
            return Err(format!("`{part}` is not a rule code or name"));
        }
    }
    if ids.is_empty() {
        return Err("no rule named: allow(CODE, reason=\"...\")".into());
    }
    Ok((ids, reason))
}

/// A `lock-audit:` comment: a suppression, a class annotation (read by
/// `sites`), or a malformed directive.
fn parse(comment: &Comment, text: &str, index: &LineIndex) -> Option<Result<Allow, Malformed>> {
    let rest = comment.text.split("lock-audit:").nth(1)?.trim_start();
    let malformed = |problem: String| {
        Some(Err(Malformed {
            span: comment.span,
            problem,
        }))
    };
    if ["correctness", "efficiency"].iter().any(|w| {
        rest.strip_prefix(w)
            .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric()))
    }) {
        return None;
    }
    let (file_wide, after) = if let Some(r) = rest.strip_prefix("allow-file") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix("allow") {
        (false, r)
    } else {
        let word: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        return malformed(format!("unknown directive `{word}`: {EXPECTED}"));
    };
    let Some(after_open) = after.trim_start().strip_prefix('(') else {
        return malformed(format!("no parentheses: {EXPECTED}"));
    };
    let Some((parts, _)) = split_args(after_open) else {
        return malformed(format!("unclosed parenthesis or quote: {EXPECTED}"));
    };
    let (ids, reason) = match parse_args(&parts) {
        Ok(parsed) => parsed,
        Err(problem) => return malformed(problem),
    };
    let mut rules = Vec::new();
    let mut unknown = Vec::new();
    for id in ids {
        match checks::lookup(&id) {
            Some(r) => rules.push(r),
            None => unknown.push(id),
        }
    }
    let line = index.line_col(comment.span.start).0;
    // On a line of its own, it covers the next line that is not a comment.
    let own_line = text.lines().nth(line - 1).is_some_and(|l| {
        let t = l.trim_start();
        ["#", "//", "/*", "*", "--"]
            .iter()
            .any(|p| t.starts_with(p))
    });
    let lines = if file_wide {
        None
    } else if own_line {
        let next = text
            .lines()
            .enumerate()
            .skip(line)
            .find(|(_, l)| {
                let t = l.trim_start();
                !t.is_empty() && !["#", "//", "/*", "*"].iter().any(|p| t.starts_with(p))
            })
            .map_or(line, |(i, _)| i + 1);
        Some((line, next))
    } else {
        Some((line, line))
    };
    Some(Ok(Allow {
        span: comment.span,
        lines,
        rules,
        unknown,
        reason,
        used: false,
    }))
}

/// Removes suppressed findings from `findings` and adds LA001/LA002 for the
/// suppressions themselves, when those rules are selected.
pub fn apply(
    comments: &[Comment],
    text: &str,
    findings: &mut Vec<Finding>,
    selected: &[&'static Rule],
    require_reason: bool,
) {
    let index = LineIndex::new(text);
    let (mut allows, mut malformed) = (Vec::new(), Vec::new());
    for parsed in comments.iter().filter_map(|c| parse(c, text, &index)) {
        match parsed {
            Ok(a) => allows.push(a),
            Err(m) => malformed.push(m),
        }
    }
    if allows.is_empty() && malformed.is_empty() {
        return;
    }
    findings.retain(|f| {
        let line = index.line_col(f.span.start).0;
        let hit = allows.iter_mut().find(|a| {
            a.rules.iter().any(|r| r.code == f.rule.code)
                && a.lines.is_none_or(|(from, to)| (from..=to).contains(&line))
        });
        match hit {
            Some(a) => {
                a.used = true;
                false
            }
            None => true,
        }
    });
    let on = |code: &str| selected.iter().any(|r| r.code == code);
    if on("LA001") {
        for m in malformed {
            let msg = format!("malformed lock-audit comment: {}", m.problem);
            findings.push(Finding::new(&checks::BAD_SUPPRESSION, m.span, msg));
        }
    }
    for a in &allows {
        if on("LA001") && !a.unknown.is_empty() {
            let msg = format!("unknown rule {} in a suppression", a.unknown.join(", "));
            findings.push(Finding::new(&checks::BAD_SUPPRESSION, a.span, msg));
        } else if on("LA001") && require_reason && !a.reason {
            let msg =
                "this suppression gives no reason: say why the finding does not apply".to_string();
            findings.push(Finding::new(&checks::BAD_SUPPRESSION, a.span, msg));
        }
        if on("LA002") && !a.used && a.unknown.is_empty() {
            let codes: Vec<&str> = a.rules.iter().map(|r| r.code).collect();
            let msg = format!(
                "this suppression of {} suppresses nothing",
                codes.join(", ")
            );
            findings.push(Finding::new(&checks::UNUSED_SUPPRESSION, a.span, msg));
        }
    }
    findings.sort_by_key(|f| (f.span.start, f.rule.code));
}
