//! The content-hash cache (`.lock-audit-cache/`): a file's analysis is reused
//! while its text and everything the analysis depends on are unchanged.
//!
//! One folder per *run key* (the lock-audit version and binary, the config
//! file, the catalog's YAML, the rule selection), and in it one entry per
//! analysed source file, sharded by the hash of its path
//! (`<run>/ab/cdef….json`). A run reads the entries of the files it analyses
//! and nothing else, so checking one file costs one small read however large
//! the project. An entry holds one analysis per stage (pass 1, or a pass-2
//! re-analysis), each keyed by the hash of the text and, for pass 2, of what
//! pass 1 found in other files (wrappers, constants).
//!
//! `names` beside the entries lists the wrapper names the last run found, so
//! the next run can look for them while it reads each file the first time
//! instead of reading every file again for pass 2.
//!
//! Every write is a temporary file renamed into place: concurrent runs never
//! see a torn entry, and the last writer wins. A missing, stale or damaged
//! entry is recomputed; it never changes a result.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

mod inert;
use inert::Inert;

use crate::digest::hash;
use crate::outcome::{FileResult, Notice};
use crate::sites::consts::Wanted;
use crate::sites::wrapper::Wrapper;

/// The default folder name, under the config file's folder (else the working directory).
pub const DIR_NAME: &str = ".lock-audit-cache";

/// How many run folders (configurations) are kept; older ones are removed.
const RUNS_KEPT: usize = 4;

/// What an analysis produced for one file, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stored {
    pub result: Option<FileResult>,
    pub wrappers: Vec<Wrapper>,
    pub wanted: Vec<Wanted>,
    pub notices: Vec<Notice>,
}

/// One file's entry: its analyses by stage, each with the key it was computed under.
#[derive(Default, Clone, Serialize, Deserialize)]
struct Entry {
    path: String,
    stages: BTreeMap<u8, (String, Stored)>,
}

/// An open cache: entries are read on first use and written by [`Cache::save`].
pub struct Cache {
    root: PathBuf,
    run: PathBuf,
    /// Entries read or written in this run, by file.
    entries: Mutex<HashMap<PathBuf, Entry>>,
    /// Files whose entry this run changed.
    dirty: Mutex<Vec<PathBuf>>,
    /// The content digest of every file analysed in this run.
    digests: Mutex<HashMap<PathBuf, blake3::Hash>>,
    /// The wrapper names the previous run found (sorted).
    known_names: Vec<String>,
    names: Mutex<Option<Vec<String>>>,
    /// Files read before and found with nothing to analyse.
    inert: Inert,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cache({})", self.run.display())
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
        let run = dir.join(&key[..32]);
        let known_names = std::fs::read(run.join("names"))
            .ok()
            .and_then(|b| serde_json::from_slice::<Vec<String>>(&b).ok())
            .unwrap_or_default();
        Cache {
            root: dir.to_path_buf(),
            inert: Inert::new(&run, &known_names),
            run,
            entries: Mutex::new(HashMap::new()),
            dirty: Mutex::new(Vec::new()),
            digests: Mutex::new(HashMap::new()),
            known_names,
            names: Mutex::new(None),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    /// Where `path`'s entry lives: sharded by the hash of the path.
    fn entry_file(&self, path: &Path) -> PathBuf {
        let h = hash(&[path.as_os_str().as_encoded_bytes()]);
        self.run.join(&h[..2]).join(format!("{}.json", &h[2..32]))
    }

    /// `path`'s entry as stored (read once per run), or an empty one.
    fn with_entry<T>(&self, path: &Path, f: impl FnOnce(&mut Entry) -> T) -> Option<T> {
        // Read outside the lock: other threads go on with their own entries.
        let known = self.entries.lock().ok()?.contains_key(path);
        let stored = (!known).then(|| self.read_entry(path));
        let mut entries = self.entries.lock().ok()?;
        let entry = entries
            .entry(path.to_path_buf())
            .or_insert_with(|| stored.unwrap_or_default());
        Some(f(entry))
    }

    fn read_entry(&self, path: &Path) -> Entry {
        let display = path.display().to_string();
        std::fs::read(self.entry_file(path))
            .ok()
            .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
            // A hash collision or a foreign file is no entry.
            .filter(|e| e.path == display)
            .unwrap_or(Entry {
                path: display,
                stages: BTreeMap::new(),
            })
    }

    /// The stored analysis of `path` at `stage`, if `key` still matches.
    pub fn get(&self, path: &Path, stage: u8, key: &str) -> Option<Stored> {
        let found = self
            .with_entry(path, |e| {
                e.stages
                    .get(&stage)
                    .filter(|(k, _)| k == key)
                    .map(|(_, s)| s.clone())
            })
            .flatten();
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
        let changed = self.with_entry(path, |e| {
            e.stages.insert(stage, (key, stored));
        });
        if let (Some(()), Ok(mut dirty)) = (changed, self.dirty.lock()) {
            dirty.push(path.to_path_buf());
        }
    }

    /// Records the content of a file analysed in this run: every key of the
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

    /// Was `path` (as `meta` describes it now) inert when a run looking for
    /// the same wrapper names last read it? Then it need not be read.
    pub fn is_inert(&self, path: &Path, meta: &std::fs::Metadata) -> bool {
        self.inert.is_inert(path, meta)
    }

    /// Records whether `path` (as `meta` describes it) held nothing to analyse.
    pub fn set_inert(&self, path: &Path, meta: &std::fs::Metadata, inert: bool) {
        self.inert.set(path, meta, inert);
    }

    /// The wrapper names the previous run of this configuration found.
    pub fn known_names(&self) -> &[String] {
        &self.known_names
    }

    /// Records the wrapper names this run found, for the next run.
    pub fn set_names(&self, mut names: Vec<String>) {
        names.sort();
        names.dedup();
        if let Ok(mut slot) = self.names.lock() {
            *slot = Some(names);
        }
    }

    /// (hits, misses, unchanged inert files not read) so far.
    pub fn counts(&self) -> (usize, usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
            self.inert.skipped.load(Ordering::Relaxed),
        )
    }

    /// Writes the entries this run changed, the inert-file records and the
    /// wrapper names, each atomically (a temporary file, then a rename).
    pub fn save(&self) -> Result<(), String> {
        let dirty = std::mem::take(&mut *self.dirty.lock().map_err(|e| e.to_string())?);
        let names = self.names.lock().map_err(|e| e.to_string())?.take();
        let names = names.filter(|n| *n != self.known_names);
        if dirty.is_empty() && names.is_none() && !self.inert.changed() {
            return Ok(());
        }
        self.prepare()?;
        self.inert.save()?;
        let entries = self.entries.lock().map_err(|e| e.to_string())?;
        for path in dirty {
            let Some(entry) = entries.get(&path) else {
                continue;
            };
            let bytes = serde_json::to_vec(entry).map_err(|e| e.to_string())?;
            write_atomically(&self.entry_file(&path), &bytes)?;
        }
        if let Some(names) = names {
            let bytes = serde_json::to_vec(&names).map_err(|e| e.to_string())?;
            write_atomically(&self.run.join("names"), &bytes)?;
        }
        Ok(())
    }

    /// Creates the folder (kept out of version control and backups) and
    /// removes the run folders of all but the most recent configurations.
    fn prepare(&self) -> Result<(), String> {
        std::fs::create_dir_all(&self.run).map_err(|e| e.to_string())?;
        let ignore = self.root.join(".gitignore");
        if !ignore.exists() {
            write_atomically(&ignore, b"# Created by lock-audit\n*\n")?;
            write_atomically(
                &self.root.join("CACHEDIR.TAG"),
                b"Signature: 8a477f597d28d172789f06886806bc55\n# lock-audit's cache: https://bford.info/cachedir/\n",
            )?;
        }
        // This run's folder counts as the newest.
        let _ = std::fs::File::open(&self.run)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()));
        let mut runs: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&self.root)
            .map_err(|e| e.to_string())?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.0));
        for (_, old) in runs.into_iter().skip(RUNS_KEPT) {
            if old != self.run {
                let _ = std::fs::remove_dir_all(old);
            }
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.run
    }
}

/// Writes `bytes` to `file` through a temporary file in the same folder.
fn write_atomically(file: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let tmp = file.with_extension(format!(
        "tmp{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&tmp, bytes).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, file).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        e.to_string()
    })
}
