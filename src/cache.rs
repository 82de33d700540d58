//! The content-hash cache (`.lock-audit-cache/`): a file's analysis is reused
//! while its text and everything the analysis depends on are unchanged.
//!
//! One cache file per *run key*: the lock-audit version and binary, the
//! config file, the catalog's YAML and the rule selection. Inside it, one entry
//! per file and stage (pass 1, or a pass-2 re-analysis), keyed by the hash of
//! the text and, for pass 2, of what pass 1 found in other files (wrappers,
//! constants). Only files that passed the prefilter have analyses; for the
//! others the cache keeps pass 2's decision whether they may call a wrapper
//! defined elsewhere (keyed by their content and the wrappers), which spares
//! re-reading the whole tree. A missing, stale or damaged cache is rebuilt;
//! it never changes a result.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::digest::hash;
use crate::outcome::{FileResult, Notice};
use crate::sites::consts::Wanted;
use crate::sites::wrapper::Wrapper;

/// The default folder name, under the config file's folder (else the working directory).
pub const DIR_NAME: &str = ".lock-audit-cache";

/// What an analysis produced for one file, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stored {
    pub result: Option<FileResult>,
    pub wrappers: Vec<Wrapper>,
    pub wanted: Vec<Wanted>,
    pub notices: Vec<Notice>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    stored: Stored,
}

/// A yes/no answer about one file (does it name a foreign wrapper?).
#[derive(Serialize, Deserialize)]
struct Decision {
    key: String,
    answer: bool,
}

#[derive(Default, Deserialize)]
struct Contents {
    entries: HashMap<String, Entry>,
    #[serde(default)]
    decisions: HashMap<String, Decision>,
}

/// [`Contents`] as written: the old entries with this run's over them.
#[derive(Serialize)]
struct Merged<'a> {
    entries: HashMap<&'a str, &'a Entry>,
    decisions: HashMap<&'a str, &'a Decision>,
}

/// An open cache: read once at the start, written once at the end.
pub struct Cache {
    dir: PathBuf,
    file: PathBuf,
    old: Contents,
    new: Mutex<HashMap<String, Entry>>,
    /// The content digest of every file read in this run.
    digests: Mutex<HashMap<PathBuf, blake3::Hash>>,
    decisions: Mutex<HashMap<String, Decision>>,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cache({})", self.file.display())
    }
}

/// The binary's identity: a rebuilt lock-audit of the same version must not
/// read results its predecessor computed.
fn binary_identity() -> Vec<u8> {
    let meta = std::env::current_exe().and_then(std::fs::metadata);
    match meta {
        Ok(m) => {
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{modified}", m.len()).into_bytes()
        }
        Err(_) => Vec::new(),
    }
}

impl Cache {
    /// Opens the cache in `dir` for a run whose settings are described by
    /// `inputs` (config text, catalog YAML, rule selection...).
    pub fn open(dir: &Path, inputs: &[&[u8]]) -> Cache {
        let exe = binary_identity();
        let mut parts: Vec<&[u8]> = vec![env!("CARGO_PKG_VERSION").as_bytes(), &exe];
        parts.extend_from_slice(inputs);
        let key = hash(&parts);
        let file = dir.join(format!("{}.json", &key[..32]));
        // A damaged or foreign file is as good as none: it is rebuilt.
        let old = std::fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Cache {
            dir: dir.to_path_buf(),
            file,
            old,
            new: Mutex::new(HashMap::new()),
            digests: Mutex::new(HashMap::new()),
            decisions: Mutex::new(HashMap::new()),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    fn slot(path: &Path, stage: u8) -> String {
        format!("{}#{stage}", path.display())
    }

    /// The stored analysis of `path` at `stage`, if `key` still matches.
    pub fn get(&self, path: &Path, stage: u8, key: &str) -> Option<Stored> {
        let slot = Self::slot(path, stage);
        let found = self
            .old
            .entries
            .get(&slot)
            .filter(|e| e.key == key)
            .map(|e| e.stored.clone());
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Remembers an analysis (written by [`Cache::save`]).
    pub fn put(&self, path: &Path, stage: u8, key: String, stored: Stored) {
        if let Ok(mut new) = self.new.lock() {
            new.insert(Self::slot(path, stage), Entry { key, stored });
        }
    }

    /// Records the content of a file read in this run: every key of the
    /// file ([`Cache::key`]) is derived from this one digest.
    pub fn note(&self, path: &Path, bytes: &[u8]) {
        let digest = blake3::hash(bytes);
        if let Ok(mut digests) = self.digests.lock() {
            digests.insert(path.to_path_buf(), digest);
        }
    }

    /// The key of what was computed from `path` (as noted in this run) and
    /// `context`; `None` for a file this run did not read.
    pub fn key(&self, path: &Path, context: &str) -> Option<String> {
        let digest = self.digests.lock().ok()?.get(path).copied()?;
        Some(hash(&[digest.as_bytes(), context.as_bytes()]))
    }

    /// `decide()`'s answer for `path`, reused while the file's content and
    /// `context` are unchanged.
    pub fn decide(&self, path: &Path, context: &str, decide: impl FnOnce() -> bool) -> bool {
        let Some(key) = self.key(path, context) else {
            return decide();
        };
        let slot = format!("{}#calls", path.display());
        if let Some(old) = self.old.decisions.get(&slot).filter(|d| d.key == key) {
            return old.answer;
        }
        let answer = decide();
        if let Ok(mut new) = self.decisions.lock() {
            new.insert(slot, Decision { key, answer });
        }
        answer
    }

    /// (hits, misses) so far.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// Writes the entries of this run over the old ones, dropping entries
    /// of files that no longer exist. Atomic: a temporary file, then a rename.
    /// Nothing is written when every file was a hit.
    pub fn save(&self) -> Result<(), String> {
        let new = self.new.lock().map_err(|e| e.to_string())?;
        let decided = self.decisions.lock().map_err(|e| e.to_string())?;
        if new.is_empty() && decided.is_empty() {
            return Ok(());
        }
        let merged = Merged {
            entries: merge(&self.old.entries, &new),
            decisions: merge(&self.old.decisions, &decided),
        };
        let bytes = serde_json::to_vec(&merged).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        // Keep the cache out of version control, and out of backups.
        let ignore = self.dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "# Created by lock-audit\n*\n").map_err(|e| e.to_string())?;
            std::fs::write(
                self.dir.join("CACHEDIR.TAG"),
                "Signature: 8a477f597d28d172789f06886806bc55\n# lock-audit's cache: https://bford.info/cachedir/\n",
            )
            .map_err(|e| e.to_string())?;
        }
        let tmp = self
            .file
            .with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, &self.file).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            e.to_string()
        })
    }

    pub fn path(&self) -> &Path {
        &self.file
    }
}

/// The old values of files that still exist, with this run's over them.
fn merge<'a, T>(
    old: &'a HashMap<String, T>,
    new: &'a HashMap<String, T>,
) -> HashMap<&'a str, &'a T> {
    let exists = |slot: &str| {
        let path = slot.rsplit_once('#').map_or(slot, |(p, _)| p);
        Path::new(path).exists()
    };
    old.iter()
        .filter(|(slot, _)| exists(slot))
        .chain(new)
        .map(|(slot, v)| (slot.as_str(), v))
        .collect()
}
