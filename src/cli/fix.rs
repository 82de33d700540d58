//! `check --fix` and `check --diff`: the safe fixes of a report's findings,
//! written back or shown as a unified diff. A file is only touched when its
//! bytes are still the text that was analysed.

use std::path::Path;

use crate::checks::Fix;
use crate::outcome::Report;

/// What applying (or previewing) the fixes did.
#[derive(Debug, Default)]
pub struct Fixed {
    /// Fixes applied (or, for a preview, that would be).
    pub applied: usize,
    pub files: usize,
    /// The unified diff of every changed file.
    pub diff: String,
    /// Files that could not be fixed, and why.
    pub problems: Vec<String>,
}

impl Fixed {
    pub fn summary(&self, written: bool) -> String {
        let verb = if written { "applied" } else { "would apply" };
        let s = |n: usize| if n == 1 { "" } else { "s" };
        format!(
            "{verb} {} fix{} in {} file{}",
            self.applied,
            if self.applied == 1 { "" } else { "es" },
            self.files,
            s(self.files)
        )
    }
}

/// Applies the safe fixes of `report`'s findings; writes the files when `write`.
pub fn apply(report: &Report, write: bool) -> Fixed {
    let mut out = Fixed::default();
    for file in &report.files {
        let fixes: Vec<&Fix> = file
            .findings
            .iter()
            .filter_map(|f| f.fix.as_ref())
            .filter(|f| f.safe)
            .collect();
        if fixes.is_empty() {
            continue;
        }
        let path = Path::new(&file.path);
        let bom = match current_text(path, &file.text) {
            Ok(bom) => bom,
            Err(why) => {
                out.problems
                    .push(format!("{}: not fixed: {why}", file.path));
                continue;
            }
        };
        let (fixed, n) = crate::checks::fix::apply(&file.text, &fixes);
        if n == 0 || fixed == *file.text {
            continue;
        }
        let header = (format!("a/{}", file.rel), format!("b/{}", file.rel));
        out.diff.push_str(
            &similar::TextDiff::from_lines(&*file.text, &fixed)
                .unified_diff()
                .context_radius(3)
                .header(&header.0, &header.1)
                .to_string(),
        );
        if write {
            let bytes = [if bom { "\u{feff}" } else { "" }, &fixed].concat();
            if let Err(e) = std::fs::write(path, bytes) {
                out.problems
                    .push(format!("{}: not fixed: cannot write: {e}", file.path));
                continue;
            }
        }
        out.applied += n;
        out.files += 1;
    }
    out
}

/// Is the file on disk still `analysed` (a BOM aside)? `Ok(true)` when it
/// starts with a BOM, which the analysis dropped and the write keeps.
fn current_text(path: &Path, analysed: &str) -> Result<bool, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_string())?;
    match text.strip_prefix('\u{feff}') {
        Some(rest) if rest == analysed => Ok(true),
        None if text == analysed => Ok(false),
        _ => Err("changed since it was analysed".into()),
    }
}
