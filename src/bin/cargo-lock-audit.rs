//! `cargo lock-audit [check|audit|...] [--manifest-path P] [-p PKG]... [PATHS]`:
//! cargo runs `cargo-lock-audit lock-audit ...`; drop that word, then behave
//! like `lock-audit`, scoped by default to the members of the current cargo
//! workspace (found with `cargo metadata`). Config comes from
//! `lock-audit.yaml` or `[workspace|package.metadata.lock-audit]`.

use std::path::PathBuf;
use std::process::ExitCode;

const SUBCOMMANDS: &[&str] = &[
    "check",
    "audit",
    "explain",
    "rules",
    "libraries",
    "init",
    "help",
];

/// Takes `--manifest-path P` and `-p/--package NAME` out of `args`.
fn cargo_flags(args: &mut Vec<String>) -> (Option<PathBuf>, Vec<String>) {
    let mut manifest = None;
    let mut packages = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].clone();
        let value =
            |args: &mut Vec<String>, i: usize| (i + 1 < args.len()).then(|| args.remove(i + 1));
        if a == "--manifest-path" {
            manifest = value(args, i).map(PathBuf::from);
            args.remove(i);
        } else if let Some(v) = a.strip_prefix("--manifest-path=") {
            manifest = Some(PathBuf::from(v));
            args.remove(i);
        } else if a == "-p" || a == "--package" {
            packages.extend(value(args, i));
            args.remove(i);
        } else if let Some(v) = a.strip_prefix("--package=") {
            packages.push(v.to_string());
            args.remove(i);
        } else {
            i += 1;
        }
    }
    (manifest, packages)
}

/// The folders of the workspace members (or of the named packages).
fn workspace_dirs(manifest: Option<&PathBuf>, packages: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut cmd = cargo_metadata::MetadataCommand::new();
    cmd.no_deps();
    if let Some(m) = manifest {
        cmd.manifest_path(m);
    }
    let meta = cmd
        .exec()
        .map_err(|e| format!("cargo metadata failed: {e}"))?;
    let members = meta.workspace_packages();
    for p in packages {
        if !members.iter().any(|m| &m.name == p) {
            return Err(format!("package `{p}` is not a member of the workspace"));
        }
    }
    Ok(members
        .iter()
        .filter(|m| packages.is_empty() || packages.contains(&m.name))
        .filter_map(|m| {
            m.manifest_path
                .parent()
                .map(|d| d.as_std_path().to_path_buf())
        })
        .collect())
}

/// What `cargo lock-audit` adds to `lock-audit`'s options (its `--help`
/// starts with this).
const CARGO_HELP: &str =
    "cargo lock-audit: lock-audit on the members of the current cargo workspace.

Cargo options (anywhere on the command line):
  -p, --package <NAME>      Only this workspace member (repeatable)
      --manifest-path <P>   The workspace's Cargo.toml (default: found from the current directory)

Without a command, `check`; without paths, every member's folder.

";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("lock-audit") {
        args.remove(1);
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{CARGO_HELP}");
    }
    // `cargo lock-audit` alone means `check`.
    if !args.get(1).is_some_and(|a| {
        SUBCOMMANDS.contains(&a.as_str())
            || a.starts_with("--help")
            || a == "-h"
            || a == "-V"
            || a == "--version"
    }) {
        args.insert(1, "check".to_string());
    }
    let scans = matches!(args[1].as_str(), "check" | "audit");
    let (manifest, packages) = cargo_flags(&mut args);
    // With no path given, scan the workspace members.
    let has_paths = args[2..]
        .iter()
        .any(|a| !a.starts_with('-') && std::path::Path::new(a).exists())
        || args.iter().any(|a| a == "--help" || a == "-h");
    if scans && (!has_paths || manifest.is_some() || !packages.is_empty()) {
        match workspace_dirs(manifest.as_ref(), &packages) {
            Ok(dirs) => args.extend(dirs.into_iter().map(|d| d.display().to_string())),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    lock_audit::cli::main_with(args)
}
