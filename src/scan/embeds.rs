//! Text a source file takes from another file: Rust's `include_str!("q.sql")`,
//! Go's `//go:embed lock.lua` above `var lockScript string`, and a script or
//! SQL file read by name where it runs (`File.read(File.join(__dir__, "lua",
//! "lock.lua"))`, `fs.readFileSync(..)`, Spring's `new ClassPathResource(..)`),
//! or by its bare name through a script registry (`call_script(:lock, keys,
//! argv)` runs `lua/lock.lua`). SQL and Lua kept in files of their own are
//! read where they run. Each named file is read once, beside the file that
//! names it; its digest joins that file's cache key, so an edit to the `.lua`
//! file alone re-analyses the file that runs it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use crate::lang::profile::profile;
use crate::model::{Expr, ExprKind, FileModel, Language};
use crate::prefilter::Prefilter;
use crate::sites::resolve::words;

/// Embedded files larger than this are not read (a data file, not a statement).
const MAX_EMBED: u64 = 256 * 1024;

/// Extensions of the files a program reads by name whose text is analysed.
const SCRIPT_EXTENSIONS: &[&str] = &[".lua", ".sql"];

/// How many folders up from the reading file a named script is looked for: a
/// classpath resource sits under the module's `src/main/resources`.
const MAX_UP: usize = 8;

/// Folders a project keeps its scripts in, looked in beside each folder a
/// named script is looked for in (`lib/gem/lua/lock.lua` for `lib/gem/x.rb`).
const SCRIPT_FOLDERS: &[&str] = &["lua", "scripts"];

/// The extension of a script named without one by a script registry.
const REGISTRY_EXTENSION: &str = ".lua";

/// The embedded texts of one file: (the path as written, its text).
#[derive(Debug, Default)]
pub struct Embeds {
    texts: Vec<(String, String)>,
    /// Embedding directives: where each ends, and the file it names.
    directives: Vec<(usize, String)>,
    /// The file names an embedded file (read or not): the prefilter's "no
    /// lock here" is then not final, as the embedded file may change alone.
    declared: bool,
    /// Why a named file was not read (too large, missing, not UTF-8).
    unread: Vec<String>,
}

impl Embeds {
    /// Finds the embedding macros and directives in `bytes` (the file at
    /// `path`) and the scripts it reads by name, and reads the files they
    /// name. A file that cannot be read embeds nothing.
    pub fn read(path: &Path, language: Language, bytes: &[u8]) -> Embeds {
        let dir = path.parent().unwrap_or(Path::new(""));
        let p = profile(language);
        let mut out = Embeds::default();
        if let Some(mac) = p.embed_macro {
            for start in occurrences(bytes, mac) {
                let rest = String::from_utf8_lossy(&bytes[start..bytes.len().min(start + 512)]);
                if let Some(name) = literal_arg(&rest) {
                    out.embed(dir, name, &format!("{mac}(\"{name}\")"));
                }
            }
        }
        if let Some(directive) = p.embed_directive {
            for start in occurrences(bytes, directive) {
                let end = bytes[start..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |n| start + n);
                let line = String::from_utf8_lossy(&bytes[start..end]);
                // One plain file name; a pattern or a list embeds a file system.
                let mut names = line.split_whitespace();
                if let (Some(name), None) = (names.next(), names.next()) {
                    if !name.contains(['*', '?', '[']) {
                        out.directives.push((end, name.to_string()));
                        out.embed(dir, name, &format!("{directive} {name}"));
                    }
                }
            }
        }
        let registered = registry_names(bytes)
            .into_iter()
            .map(|n| (format!("{n}{REGISTRY_EXTENSION}"), Vec::new()));
        for (name, folders) in named_scripts(bytes).into_iter().chain(registered) {
            if out.texts.iter().any(|(n, _)| *n == name) {
                continue;
            }
            if let Some(text) = find_script(dir, &name, &folders) {
                out.declared = true;
                out.texts.push((name, text));
            }
        }
        out
    }

    /// Reads `name` beside the file, or says why not.
    fn embed(&mut self, dir: &Path, name: &str, how: &str) {
        self.declared = true;
        if self.texts.iter().any(|(n, _)| n == name) {
            return;
        }
        match read_text(&dir.join(name)) {
            Ok(content) => self.texts.push((name.to_string(), content)),
            Err(why) => self
                .unread
                .push(format!("{how} not read ({why}): its text is not analysed")),
        }
    }

    /// Why named files were not read, one reason each.
    pub fn unread(&self) -> &[String] {
        &self.unread
    }

    /// Does the file name an embedded file?
    pub fn declared(&self) -> bool {
        self.declared
    }

    /// Does an embedded text pass the prefilter for the embedding file's language?
    pub fn matches(&self, prefilter: &Prefilter, language: Language) -> bool {
        self.texts
            .iter()
            .any(|(_, text)| prefilter.matches(text.as_bytes(), language))
    }

    /// A digest of the embedded texts, for the embedding file's cache key
    /// (empty when it embeds nothing).
    pub fn fingerprint(&self) -> String {
        if self.texts.is_empty() {
            return String::new();
        }
        let mut hasher = blake3::Hasher::new();
        for (name, text) in &self.texts {
            hasher.update(name.as_bytes());
            hasher.update(&[0]);
            hasher.update(text.as_bytes());
            hasher.update(&[0]);
        }
        hasher.finalize().to_hex().to_string()
    }

    /// Gives every embedding expression of `model` the text it embeds: a
    /// macro's, the variable declared under a directive, the outermost
    /// call of `file_reads` whose arguments name a script read, and the
    /// name a script registry's call passes first (`call_script(:lock, ..)`).
    pub fn bind(&self, model: &mut FileModel, file_reads: &[String]) {
        if self.texts.is_empty() {
            return;
        }
        for call in model.calls.iter_mut().filter(|c| registry(&c.name)) {
            let Some(first) = call.args.iter_mut().find(|a| a.name.is_none()) else {
                continue;
            };
            let script = first.value.as_str().and_then(|n| {
                let file = format!("{n}{REGISTRY_EXTENSION}");
                self.texts.iter().find(|(t, _)| *t == file)
            });
            if let Some((_, text)) = script {
                first.value.kind = ExprKind::Str(text.clone());
            }
        }
        let mac = profile(model.language).embed_macro;
        let reads: Vec<bool> = model
            .calls
            .iter()
            .map(|c| file_reads.contains(&c.name))
            .collect();
        let texts = &self.texts;
        for call in &mut model.calls {
            for arg in &mut call.args {
                fill(&mut arg.value, mac, texts, &reads);
            }
        }
        for assign in &mut model.assigns {
            fill(&mut assign.value, mac, texts, &reads);
        }
        for (end, name) in &self.directives {
            let Some((_, text)) = texts.iter().find(|(n, _)| n == name) else {
                continue;
            };
            let declared = model
                .assigns
                .iter_mut()
                .filter(|a| a.span.start >= *end)
                .min_by_key(|a| a.span.start);
            if let Some(a) = declared.filter(|a| a.value.text.is_empty()) {
                a.value.kind = ExprKind::Str(text.clone());
            }
        }
    }
}

/// Where `needle` ends in `bytes`, each time it occurs.
fn occurrences<'a>(bytes: &'a [u8], needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    bytes
        .windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| *w == needle.as_bytes())
        .map(move |(at, _)| at + needle.len())
}

fn read_text(file: &Path) -> Result<String, String> {
    match std::fs::metadata(file) {
        Ok(m) if m.len() > MAX_EMBED => Err(format!(
            "{} bytes is over the {MAX_EMBED} byte limit",
            m.len()
        )),
        Ok(_) => std::fs::read_to_string(file).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Is `s` a relative path a program may name (`lua`, `scripts/lock.lua`)?
fn path_like(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
}

/// The `.lua` / `.sql` file names quoted in `bytes`, each with the path-like
/// literals quoted before it on its line: the folders a path join names
/// (`File.join(__dir__, "lua", "lock.lua")` → `lock.lua`, `[lua]`).
fn named_scripts(bytes: &[u8]) -> Vec<(String, Vec<String>)> {
    let named = |ext: &str| bytes.windows(ext.len()).any(|w| w == ext.as_bytes());
    if !SCRIPT_EXTENSIONS.iter().any(|e| named(e)) {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(bytes);
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if !SCRIPT_EXTENSIONS.iter().any(|e| line.contains(e)) {
            continue;
        }
        let mut folders = Vec::new();
        for literal in quoted(line) {
            if !path_like(literal) {
                continue;
            }
            if SCRIPT_EXTENSIONS.iter().any(|e| literal.ends_with(e)) {
                out.push((literal.to_string(), folders.clone()));
            } else {
                folders.push(literal.to_string());
            }
        }
    }
    out
}

/// Is `callee` a script registry's call, named for running a script by its
/// name (`call_script`, `runScript`, `execute_script`): one of its words is
/// `script` (not `description`, `subscription`).
fn registry(callee: &str) -> bool {
    words(callee).iter().any(|w| w == "script")
}

/// The bare names script registries are called with (`call_script(:lock,
/// ..)`, `run_script("unlock", ..)`): a symbol or quoted word first in the
/// call of a function named for running a script. Each file is read here,
/// so only the places that spell `script` are looked at.
fn registry_names(bytes: &[u8]) -> Vec<String> {
    static SCRIPT: OnceLock<Option<AhoCorasick>> = OnceLock::new();
    let finder = SCRIPT.get_or_init(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(["script"])
            .ok()
    });
    let Some(finder) = finder else {
        return Vec::new();
    };
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out: Vec<String> = Vec::new();
    for hit in finder.find_iter(bytes) {
        let start = bytes[..hit.start()]
            .iter()
            .rposition(|&b| !ident(b))
            .map_or(0, |i| i + 1);
        let end = hit.end() + bytes[hit.end()..].iter().take_while(|&&b| ident(b)).count();
        let callee = String::from_utf8_lossy(&bytes[start..end]);
        if bytes.get(end) != Some(&b'(') || !registry(&callee) {
            continue;
        }
        let rest = &bytes[end + 1..bytes.len().min(end + 256)];
        let arg = String::from_utf8_lossy(rest);
        let arg = arg.trim_start();
        let (name, after) = match arg.as_bytes().first() {
            Some(b':') => {
                let body = &arg[1..];
                let n = body.bytes().take_while(|&b| ident(b)).count();
                (&body[..n], &body[n..])
            }
            Some(&q @ (b'"' | b'\'')) => {
                let body = &arg[1..];
                let Some(n) = body.find(q as char) else {
                    continue;
                };
                (&body[..n], &body[n + 1..])
            }
            _ => continue,
        };
        let closed = after.trim_start().starts_with([',', ')']);
        if closed && !name.is_empty() && name.bytes().all(ident) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// The quoted literals of one line of code, in order.
fn quoted(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find(['"', '\'', '`']) {
        let q = &rest[open..open + 1];
        let after = &rest[open + 1..];
        let Some(close) = after.find(q) else {
            break;
        };
        out.push(&after[..close]);
        rest = &after[close + 1..];
    }
    out
}

/// The text of the script `name`, looked for beside the reading file (under
/// the folders quoted with it) and then in the folders above it, directly or
/// under a resources folder (`src/main/resources/scripts/lock.lua`).
fn find_script(dir: &Path, name: &str, folders: &[String]) -> Option<String> {
    let name = name.trim_start_matches("./").trim_start_matches('/');
    let joined: PathBuf = folders.iter().collect::<PathBuf>().join(name);
    let mut at = Some(dir);
    for _ in 0..MAX_UP {
        let here = at?;
        let conventional = SCRIPT_FOLDERS.iter().map(|f| here.join(f).join(name));
        for candidate in [
            here.join(&joined),
            here.join(name),
            here.join("src/main/resources").join(name),
            here.join("resources").join(name),
        ]
        .into_iter()
        .chain(conventional)
        {
            if candidate.is_file() {
                return read_text(&candidate).ok();
            }
        }
        at = here.parent().filter(|p| !p.as_os_str().is_empty());
    }
    None
}

/// `("name.sql")` after the macro's name: the literal path.
fn literal_arg(rest: &str) -> Option<&str> {
    let rest = rest
        .trim_start()
        .strip_prefix(['(', '[', '{'])?
        .trim_start();
    let rest = rest.strip_prefix('"')?;
    let end = rest.find('"')?;
    let name = &rest[..end];
    let close = rest[end + 1..].trim_start();
    (close.starts_with([')', ']', '}']) && !name.contains('\\')).then_some(name)
}

/// Replaces `e` (or the expression it wraps) when it is `mac("name")`, or a
/// file-reading call whose arguments quote a script read.
fn fill(e: &mut Expr, mac: Option<&str>, texts: &[(String, String)], reads: &[bool]) {
    if let ExprKind::Wrapped(inner) = &mut e.kind {
        return fill(inner, mac, texts, reads);
    }
    let found = match &e.kind {
        ExprKind::Other => mac
            .and_then(|m| e.text.strip_prefix(m))
            .and_then(literal_arg)
            .and_then(|n| texts.iter().find(|(t, _)| t == n)),
        ExprKind::Call(id) if reads.get(*id).copied().unwrap_or(false) => texts
            .iter()
            .find(|(n, _)| quoted(&e.text).iter().any(|q| q == n)),
        _ => None,
    };
    if let Some((_, text)) = found {
        e.kind = ExprKind::Str(text.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::{literal_arg, named_scripts, registry_names};

    #[test]
    fn reads_the_literal_path() {
        assert_eq!(literal_arg("(\"q.sql\")"), Some("q.sql"));
        assert_eq!(literal_arg(" ( \"sql/q.sql\" ) ;"), Some("sql/q.sql"));
        assert_eq!(literal_arg("(concat!(\"a\", \"b\"))"), None);
        assert_eq!(literal_arg("(\"a\\\"b\")"), None);
    }

    #[test]
    fn names_scripts_with_their_folders() {
        let code = b"LOCK = File.read(File.join(__dir__, \"lua\", \"lock.lua\"))\n\
                     msg = \"see the docs\" + 'x.lua.bak'\n";
        assert_eq!(
            named_scripts(code),
            vec![("lock.lua".to_string(), vec!["lua".to_string()])]
        );
    }

    #[test]
    fn names_the_scripts_a_registry_runs() {
        let code = b"result = call_script(:lock, key.to_a, argv)\n\
                     call_script(\n  :ack,\n  [k], [])\n\
                     run_script(\"unlock\", keys)\n\
                     describe_script(name, 1)\n\
                     call_script(:\"a b\", k)\n\
                     lock(:other, k)\n";
        assert_eq!(registry_names(code), vec!["lock", "ack", "unlock"]);
        let prose = "setDescription(\"x\"); getSubscription(:plan); 描述(\"y\"); runScript('z')";
        assert_eq!(registry_names(prose.as_bytes()), vec!["z"]);
    }
}
