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

/// `allow(LA201, unchecked-release, reason="...")` → (ids, has reason).
fn parse_args(inner: &str) -> (Vec<String>, bool) {
    let mut ids = Vec::new();
    let mut reason = false;
    for part in inner.split(',') {
        let part = part.trim();
        if let Some(r) = part.strip_prefix("reason") {
            let value = r
                .trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches(['"', '\'']);
            reason |= !value.trim().is_empty();
        } else if !part.is_empty() {
            ids.push(part.to_string());
        }
    }
    (ids, reason)
}

fn parse(comment: &Comment, text: &str, index: &LineIndex) -> Option<Allow> {
    let rest = comment.text.split("lock-audit:").nth(1)?.trim_start();
    let (file_wide, rest) = match rest.strip_prefix("allow-file(") {
        Some(r) => (true, r),
        None => (false, rest.strip_prefix("allow(")?),
    };
    let inner = rest.rsplit_once(')').map_or(rest, |(i, _)| i);
    let (ids, reason) = parse_args(inner);
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
    Some(Allow {
        span: comment.span,
        lines,
        rules,
        unknown,
        reason,
        used: false,
    })
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
    let mut allows: Vec<Allow> = comments
        .iter()
        .filter_map(|c| parse(c, text, &index))
        .collect();
    if allows.is_empty() {
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
