//! `lock-audit init`: a commented starter config.

use std::path::Path;
use std::process::ExitCode;

use super::{emit, usage_error};
use crate::config;

const STARTER: &str = include_str!("../../docs/lock-audit.example.yaml");

pub(super) fn run() -> ExitCode {
    let path = Path::new(config::FILE_NAMES[0]);
    if path.exists() {
        return usage_error("lock-audit.yaml already exists here; not overwriting it");
    }
    match std::fs::write(path, STARTER) {
        Ok(()) => {
            emit("wrote lock-audit.yaml\n");
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&format!("cannot write lock-audit.yaml: {e}")),
    }
}
