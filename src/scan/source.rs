//! Reading one file: size limit, binary and minified detection, UTF-8
//! decoding, the prefilter, the last run's wrapper names. Every reason a file is not analysed is a notice.

use std::sync::Arc;

use super::embeds::Embeds;
use crate::config::Settings;
use crate::discover::SourceFile;
use crate::lang::profile::profile;
use crate::outcome::{Notice, NoticeKind};
use crate::prefilter::Prefilter;

/// What reading one file gave.
pub(super) enum Read {
    /// The text to analyse, and the files it embeds.
    Text(Arc<str>, Embeds),
    /// Nothing to analyse: no library named, empty, or skipped with a notice.
    Nothing,
    /// Test code that names a lock library, not analysed ([`Settings::skips_test`]).
    Test,
}

/// Reads and decodes one file; notices say why anything was skipped.
/// In pass 1 (`first`), with the last run's wrapper names `known`, a file
/// the cache remembers as inert and unchanged is not read at all, and every
/// file read is remembered as inert or not.
pub(super) fn read_text(
    file: &SourceFile,
    settings: &Settings,
    prefilter: &Prefilter,
    first: bool,
    known: Option<&Prefilter>,
    named: &mut Vec<usize>,
    notices: &mut Vec<Notice>,
) -> Read {
    let path = file.rel.clone();
    let mut notice = |kind, reason: String| {
        notices.push(Notice {
            path: path.clone(),
            kind,
            reason,
        })
    };
    let meta = std::fs::metadata(&file.path).ok();
    let inert = settings
        .cache
        .as_ref()
        .filter(|_| first && !settings.parse_all)
        .zip(meta.as_ref());
    if inert.is_some_and(|(cache, meta)| cache.is_inert(&file.path, meta)) {
        return Read::Nothing;
    }
    let size = meta.as_ref().map_or(0, |m| m.len());
    if size > settings.max_file_size {
        notice(
            NoticeKind::Skipped,
            format!(
                "skipped: {size} bytes is over the {} byte limit",
                settings.max_file_size
            ),
        );
        return Read::Nothing;
    }
    let bytes = match std::fs::read(&file.path) {
        Ok(b) => b,
        Err(e) => {
            notice(NoticeKind::Failed, format!("cannot read: {e}"));
            return Read::Nothing;
        }
    };
    // An empty file (a package's `__init__.py`) has nothing to say.
    if bytes.is_empty() {
        return Read::Nothing;
    }
    // While the bytes are here: which wrappers of the last run the file names.
    if let Some(known) = known {
        *named = known.words_in(&bytes);
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        notice(
            NoticeKind::Skipped,
            "skipped: binary file (contains NUL bytes)".into(),
        );
        return Read::Nothing;
    }
    let embeds = Embeds::read(&file.path, file.language, &bytes);
    for why in embeds.unread() {
        notice(NoticeKind::Degraded, why.clone());
    }
    let rejected = !settings.parse_all
        && !prefilter.matches(&bytes, file.language)
        && !embeds.matches(prefilter, file.language);
    if let Some((cache, meta)) = inert {
        cache.set_inert(
            &file.path,
            meta,
            rejected && named.is_empty() && !embeds.declared(),
        );
    }
    if rejected {
        return Read::Nothing;
    }
    if settings.skips_test(&file.rel) {
        return Read::Test;
    }
    if let Some(cache) = &settings.cache {
        cache.note(&file.path, &bytes);
    }
    if !settings.include_minified && profile(file.language).minified_bundles {
        if let Some(avg) = minified(&bytes) {
            notice(
                NoticeKind::Skipped,
                format!(
                    "skipped: minified (average line {avg} bytes); --include-minified analyses it"
                ),
            );
            return Read::Nothing;
        }
    }
    let text: Arc<str> = match String::from_utf8(bytes) {
        Ok(s) => s.into(),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            notice(
                NoticeKind::Degraded,
                format!("not valid UTF-8 (first bad byte at offset {at}); analysed with replacement characters"),
            );
            String::from_utf8_lossy(e.as_bytes()).into_owned().into()
        }
    };
    // A BOM is not code: drop it, and render from the same text so spans agree.
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.into(),
        None => text,
    };
    Read::Text(text, embeds)
}

/// A minified bundle: at least 16 KiB with 90 % of its bytes on lines over
/// 1,000 bytes. Its findings could not be acted on (the source it was built
/// from is what to fix) and parsing it costs as much as a thousand files.
/// Returns the average line length.
fn minified(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < 16 * 1024 {
        return None;
    }
    let (mut lines, mut long) = (0usize, 0usize);
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        lines += 1;
        if line.len() > 1000 {
            long += line.len();
        }
    }
    (long * 10 >= bytes.len() * 9).then(|| bytes.len() / lines)
}
