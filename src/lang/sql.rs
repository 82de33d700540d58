//! SQL files (`.sql`): migrations, schema dumps, PL/pgSQL functions.
//!
//! Each statement is lowered as a call that runs its own text, so the SQL
//! lock analysis that reads the SQL passed to drivers (`sites::sql`) applies
//! unchanged and a site sits on the line where its statement starts. A
//! function body (`AS $$ … $$`) is read statement by statement, and the
//! PL/pgSQL block words (`BEGIN`, `THEN`, `ELSE`, `LOOP`, …) end a statement
//! too: `IF NOT pg_try_advisory_xact_lock(k) THEN` tests the lock, the
//! `SELECT … FOR UPDATE` after `THEN` is a statement of its own.

use crate::model::{
    mentions, Arg, Call, Comment, Expr, ExprKind, FileModel, Language, Span, Usage,
};

/// Words that end the statement before them and start a new one after them.
const BLOCK_WORDS: &[&str] = &[
    "BEGIN",
    "THEN",
    "ELSE",
    "ELSIF",
    "LOOP",
    "DECLARE",
    "EXCEPTION",
    "END",
];

/// First words of a statement whose value a condition tests.
const TESTS: &[&str] = &[
    "IF", "ELSIF", "WHILE", "WHEN", "RETURN", "UNTIL", "EXIT", "CONTINUE",
];

/// First words of a statement that throws its value away: PL/pgSQL `PERFORM`,
/// and a top-level `SELECT` whose rows nobody reads.
const DISCARDS: &[&str] = &["PERFORM", "SELECT"];

/// Lowers a SQL file: one call per statement, comments kept for suppressions.
pub fn lower(text: &str) -> FileModel {
    let mut model = FileModel::new(Language::Sql, Span::new(0, text.len()));
    let mut splitter = Splitter {
        src: text.as_bytes(),
        at: 0,
        start: 0,
        depth: 0,
        cases: 0,
        statements: Vec::new(),
        comments: Vec::new(),
    };
    splitter.run();
    model.comments = splitter
        .comments
        .iter()
        .map(|&span| Comment {
            text: comment_text(&text[span.start..span.end]),
            span,
        })
        .collect();
    for span in splitter.statements {
        let Some(span) = trim(text, span, &model.comments) else {
            continue;
        };
        if defined_for_code(text, span, &model.comments) {
            continue;
        }
        let body = &text[span.start..span.end];
        let first = body
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let usage = if TESTS.contains(&first.as_str()) {
            Usage::Tested
        } else if DISCARDS.contains(&first.as_str())
            && !mentions(&body.to_ascii_uppercase(), "INTO")
        {
            Usage::Discarded
        } else {
            Usage::Used
        };
        let id = model.calls.len();
        let value = Expr {
            kind: ExprKind::Str(body.to_string()),
            text: body.to_string(),
            span,
        };
        model.calls.push(Call {
            id,
            name: "execute".into(),
            callee: "execute".into(),
            receiver: None,
            args: vec![Arg { name: None, value }],
            span,
            name_span: span,
            func: None,
            block: 0,
            usage,
        });
    }
    model
}

/// The statement scanner: byte offsets of statements and comments.
struct Splitter<'s> {
    src: &'s [u8],
    at: usize,
    start: usize,
    /// Parenthesis depth: block words inside `( … )` are expressions.
    depth: usize,
    /// Open `CASE … END` expressions, whose `THEN` / `ELSE` end nothing.
    cases: usize,
    statements: Vec<Span>,
    comments: Vec<Span>,
}

impl Splitter<'_> {
    fn run(&mut self) {
        while self.at < self.src.len() {
            let b = self.src[self.at];
            let next = self.src.get(self.at + 1).copied();
            match b {
                b'-' if next == Some(b'-') => {
                    let end = self.find(b"\n").unwrap_or(self.src.len());
                    self.comments.push(Span::new(self.at, end));
                    self.at = end;
                }
                b'/' if next == Some(b'*') => {
                    let end = self.find(b"*/").map_or(self.src.len(), |e| e + 2);
                    self.comments.push(Span::new(self.at, end));
                    self.at = end;
                }
                b'\'' | b'"' => self.skip_quoted(b),
                b'$' => self.dollar(),
                b';' => {
                    self.cut(self.at, self.at + 1);
                    self.depth = 0;
                    self.cases = 0;
                }
                b'(' => {
                    self.depth += 1;
                    self.at += 1;
                }
                b')' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.at += 1;
                }
                b if b.is_ascii_alphabetic() || b == b'_' => self.word(),
                _ => self.at += 1,
            }
        }
        self.cut(self.src.len(), self.src.len());
    }

    /// Ends the statement at `end` and starts the next one at `resume`.
    fn cut(&mut self, end: usize, resume: usize) {
        if end > self.start {
            self.statements.push(Span::new(self.start, end));
        }
        self.start = resume;
        self.at = resume.max(self.at);
    }

    fn find(&self, needle: &[u8]) -> Option<usize> {
        self.src[self.at..]
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| self.at + p)
    }

    /// A string or quoted identifier; a doubled quote is an escaped one.
    fn skip_quoted(&mut self, quote: u8) {
        let mut i = self.at + 1;
        while i < self.src.len() {
            if self.src[i] == quote {
                if self.src.get(i + 1) == Some(&quote) {
                    i += 2;
                    continue;
                }
                break;
            }
            i += 1;
        }
        self.at = (i + 1).min(self.src.len());
    }

    /// `$tag$` opens or closes a function body: either way a statement
    /// boundary, and the body's statements are read like any others. `$1`
    /// (a parameter) is not a tag.
    fn dollar(&mut self) {
        let tag_end = self.src[self.at + 1..]
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .map(|p| self.at + 1 + p);
        match tag_end {
            Some(end)
                if self.src[end] == b'$'
                    && !self.src[self.at + 1..end]
                        .first()
                        .is_some_and(u8::is_ascii_digit) =>
            {
                self.cut(self.at, end + 1);
                self.depth = 0;
                self.cases = 0;
            }
            _ => self.at += 1,
        }
    }

    fn word(&mut self) {
        let start = self.at;
        let end = self.src[start..]
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
            .map_or(self.src.len(), |p| start + p);
        self.at = end;
        if self.depth > 0 {
            return;
        }
        let word = String::from_utf8_lossy(&self.src[start..end]).to_ascii_uppercase();
        match word.as_str() {
            "CASE" => self.cases += 1,
            "END" if self.cases > 0 => self.cases -= 1,
            w if self.cases == 0 && BLOCK_WORDS.contains(&w) => {
                // `ELSIF cond THEN`: the condition starts a statement.
                if w == "ELSIF" {
                    self.cut(start, start);
                    self.at = end;
                } else {
                    self.cut(start, end);
                }
            }
            _ => {}
        }
    }
}

/// `span` without the blank space and comments around it; `None` when
/// nothing else is left.
fn trim(text: &str, span: Span, comments: &[Comment]) -> Option<Span> {
    let mut start = span.start;
    let mut end = span.end;
    loop {
        let before = start;
        while start < end && text.as_bytes()[start].is_ascii_whitespace() {
            start += 1;
        }
        let at = comments.partition_point(|c| c.span.start < start);
        if let Some(c) = comments.get(at).filter(|c| c.span.start == start) {
            start = c.span.end.min(end);
        }
        if start == before {
            break;
        }
    }
    while end > start
        && (text.as_bytes()[end - 1].is_ascii_whitespace() || text.as_bytes()[end - 1] == b';')
    {
        end -= 1;
    }
    (end > start).then_some(Span::new(start, end))
}

/// Is the statement at `span` a named query that a code generator compiles
/// into the application (sqlc's `-- name: ClaimJobs :many`)? Its locks are
/// taken where the generated method runs, and reported there.
fn defined_for_code(text: &str, span: Span, comments: &[Comment]) -> bool {
    let annotation = |c: &Comment| {
        c.text.strip_prefix("name:").is_some_and(|a| {
            a.split_whitespace()
                .nth(1)
                .is_some_and(|kind| kind.starts_with(':'))
        })
    };
    // The comments right above the statement, nearest first.
    let mut next = span.start;
    let before = comments.partition_point(|c| c.span.end <= span.start);
    for c in comments[..before].iter().rev() {
        if !text[c.span.end..next].trim().is_empty() {
            return false;
        }
        if annotation(c) {
            return true;
        }
        next = c.span.start;
    }
    false
}

fn comment_text(raw: &str) -> String {
    raw.trim_start_matches("--")
        .trim_start_matches("/*")
        .trim_end_matches("*/")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statements(sql: &str) -> Vec<String> {
        lower(sql)
            .calls
            .iter()
            .map(|c| c.args[0].value.text.clone())
            .collect()
    }

    #[test]
    fn splits_statements_and_function_bodies() {
        let sql = "-- claim\nLOCK TABLE jobs IN ACCESS EXCLUSIVE MODE;\n\
                   CREATE FUNCTION f() RETURNS void AS $$\nBEGIN\n  \
                   IF NOT pg_try_advisory_xact_lock(42) THEN\n    RETURN;\n  END IF;\n  \
                   SELECT id FROM t WHERE x = ';' FOR UPDATE;\nEND;\n$$ LANGUAGE plpgsql;";
        let got = statements(sql);
        assert!(got.contains(&"LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE".to_string()));
        assert!(got.contains(&"IF NOT pg_try_advisory_xact_lock(42)".to_string()));
        assert!(got.contains(&"SELECT id FROM t WHERE x = ';' FOR UPDATE".to_string()));
        assert!(!got.iter().any(|s| s.starts_with("-- claim")));
    }

    #[test]
    fn case_expressions_and_parameters_end_nothing() {
        let got = statements(
            "SELECT CASE WHEN a THEN 1 ELSE 2 END FROM t WHERE id = $1 FOR UPDATE SKIP LOCKED;",
        );
        assert_eq!(
            got,
            vec![
                "SELECT CASE WHEN a THEN 1 ELSE 2 END FROM t WHERE id = $1 FOR UPDATE SKIP LOCKED"
            ]
        );
    }

    #[test]
    fn sqlc_named_queries_are_definitions() {
        let got = statements(
            "-- name: ClaimJobs :many\nSELECT id FROM jobs FOR UPDATE SKIP LOCKED;\n\
             -- name: LockJob :one\n-- Locks one job.\nSELECT id FROM jobs WHERE id = $1 FOR UPDATE;\n\
             -- a comment\nSELECT id FROM jobs FOR UPDATE;",
        );
        assert_eq!(got, vec!["SELECT id FROM jobs FOR UPDATE"]);
    }

    #[test]
    fn usage_follows_the_first_word() {
        let model = lower("PERFORM pg_try_advisory_lock(1);\nIF pg_try_advisory_lock(2) THEN NULL; END IF;\nSELECT pg_try_advisory_lock(3) INTO got;");
        let usages: Vec<&Usage> = model.calls.iter().map(|c| &c.usage).collect();
        assert_eq!(usages[0], &Usage::Discarded);
        assert_eq!(usages[1], &Usage::Tested);
        assert!(usages.iter().any(|u| **u == Usage::Used));
    }
}
