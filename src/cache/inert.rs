//! Files the last run read and found nothing in: no catalog trigger, none of
//! the wrapper names it looked for. While a file's modification time and
//! size are unchanged and this run looks for the same names, it is not read
//! again: a warm re-check then reads only the files that matter, where a
//! search tool reads them all.
//!
//! One small record per folder (`<run>/inert/ab/cdef….json`, by the hash of
//! the folder), read the first time a file of that folder is asked about,
//! so a run reads records in proportion to the folders it visits.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::write_atomically;
use crate::digest::hash;

/// A file as last seen: modification time (nanoseconds) and size.
type Stamp = (u128, u64);

/// A file modified this recently is not recorded: a change within the
/// file system's timestamp granularity could keep its time and size (git's
/// "racily clean" entries).
const RACY: Duration = Duration::from_secs(2);

/// One folder's inert files, for the names fingerprint they were judged under.
#[derive(Default, Serialize, Deserialize)]
struct Folder {
    folder: String,
    names: String,
    files: HashMap<String, Stamp>,
}

/// The inert-file records of one run, by folder.
pub(super) struct Inert {
    dir: PathBuf,
    /// The hash of the wrapper names this run looks for while reading.
    names: String,
    folders: Mutex<HashMap<PathBuf, (Folder, bool)>>,
    /// Files this run did not read.
    pub(super) skipped: AtomicUsize,
}

fn stamp(meta: &Metadata) -> Option<Stamp> {
    let modified = meta.modified().ok()?;
    let age = SystemTime::now()
        .duration_since(modified)
        .unwrap_or_default();
    let since_epoch = modified.duration_since(UNIX_EPOCH).ok()?;
    (age >= RACY).then_some((since_epoch.as_nanos(), meta.len()))
}

impl Inert {
    pub(super) fn new(run: &Path, known_names: &[String]) -> Self {
        let joined: Vec<&[u8]> = known_names.iter().map(|n| n.as_bytes()).collect();
        Inert {
            dir: run.join("inert"),
            names: hash(&joined),
            folders: Mutex::new(HashMap::new()),
            skipped: AtomicUsize::new(0),
        }
    }

    fn record_file(&self, folder: &Path) -> PathBuf {
        let h = hash(&[folder.as_os_str().as_encoded_bytes()]);
        self.dir.join(&h[..2]).join(format!("{}.json", &h[2..32]))
    }

    /// Runs `f` on `path`'s folder record, read on first use; a record of
    /// another folder (a hash collision), of other names, or damaged is empty.
    fn with_folder<T>(
        &self,
        path: &Path,
        f: impl FnOnce(&mut Folder, &mut bool) -> T,
    ) -> Option<T> {
        let folder = path.parent()?;
        let known = self.folders.lock().ok()?.contains_key(folder);
        let read = (!known).then(|| {
            let display = folder.display().to_string();
            std::fs::read(self.record_file(folder))
                .ok()
                .and_then(|b| serde_json::from_slice::<Folder>(&b).ok())
                .filter(|r| r.folder == display && r.names == self.names)
                .unwrap_or(Folder {
                    folder: display,
                    names: self.names.clone(),
                    files: HashMap::new(),
                })
        });
        let mut folders = self.folders.lock().ok()?;
        let (record, dirty) = folders
            .entry(folder.to_path_buf())
            .or_insert_with(|| (read.unwrap_or_default(), false));
        Some(f(record, dirty))
    }

    /// Was `path`, as `meta` describes it now, inert when last read?
    pub(super) fn is_inert(&self, path: &Path, meta: &Metadata) -> bool {
        let (Some(now), Some(name)) = (stamp(meta), path.file_name()) else {
            return false;
        };
        let name = name.to_string_lossy();
        let inert = self
            .with_folder(path, |r, _| r.files.get(name.as_ref()) == Some(&now))
            .unwrap_or(false);
        if inert {
            self.skipped.fetch_add(1, Ordering::Relaxed);
        }
        inert
    }

    /// Records what reading `path` (as `meta` describes it) found.
    pub(super) fn set(&self, path: &Path, meta: &Metadata, inert: bool) {
        let Some(name) = path.file_name() else {
            return;
        };
        let name = name.to_string_lossy().into_owned();
        // A file modified too recently to be trusted later is not inert.
        let record = stamp(meta).filter(|_| inert);
        self.with_folder(path, |r, dirty| {
            *dirty |= match record {
                Some(now) => r.files.insert(name, now) != Some(now),
                None => r.files.remove(&name).is_some(),
            };
        });
    }

    /// Did this run change any record?
    pub(super) fn changed(&self) -> bool {
        self.folders
            .lock()
            .is_ok_and(|f| f.values().any(|(_, dirty)| *dirty))
    }

    /// Writes the records this run changed.
    pub(super) fn save(&self) -> Result<(), String> {
        let folders = self.folders.lock().map_err(|e| e.to_string())?;
        for (folder, (record, dirty)) in folders.iter() {
            if *dirty {
                let bytes = serde_json::to_vec(record).map_err(|e| e.to_string())?;
                write_atomically(&self.record_file(folder), &bytes)?;
            }
        }
        Ok(())
    }
}
