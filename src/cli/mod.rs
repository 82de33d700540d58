//! The command line: arguments in `args`, one file per command. Returns the
//! exit code.

mod args;
mod audit;
mod check;
mod explain;
mod fix;
mod init;
mod rules;
mod settings_view;
mod statistics;
mod stdin;

pub use args::{AnalysisArgs, AuditArgs, CheckArgs, Color};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::catalog::Catalog;
use crate::config::{self, Config};

#[derive(Parser, Debug)]
#[command(
    name = "lock-audit",
    version,
    about = "Find distributed-lock bugs: missing TTLs, unchecked releases, unfenced writes"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Scan files and directories for lock findings (default: the current directory).
    Check(Box<CheckArgs>),
    /// Inventory every lock site: backend, library, key, TTL, wait, releases, findings.
    Audit(AuditArgs),
    /// Print a rule's documentation (what it flags, why it breaks, what to do
    /// instead), or every key of the config file or of the catalog.
    Explain {
        /// A rule code (`LA201`) or name (`unchecked-release`), `config`, `catalog` or `kinds`.
        rule: String,
    },
    /// List every rule with its code, name, default severity and summary.
    Rules,
    /// Write a commented starter `lock-audit.yaml` in the current directory.
    Init,
    /// Run the language server on stdin/stdout (diagnostics, hover, code actions).
    Lsp,
    /// List every library the catalog recognises (markdown table).
    Libraries {
        /// Extra catalog folders to include (repeatable).
        #[arg(long = "rules", value_name = "DIR")]
        rules_dirs: Vec<PathBuf>,
        /// Print the libraries' names the prefilter looks for, one per line (a
        /// file without any of them is never parsed).
        #[arg(long, conflicts_with = "prefilter")]
        triggers: bool,
        /// Print the prefilter's table: per library, its names and the
        /// operations (whole words) one of which a file must also hold.
        #[arg(long)]
        prefilter: bool,
    },
}

/// Parses `args` (without the program name handling cargo's extra word) and runs.
pub fn main_with(args: impl IntoIterator<Item = String>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Check(args) => check::run(*args),
        Command::Audit(args) => audit::run(args),
        Command::Explain { rule } => explain::run(&rule),
        Command::Rules => rules::run(),
        Command::Init => init::run(),
        Command::Lsp => match crate::lsp::run() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => usage_error(&format!("lsp: {e}")),
        },
        Command::Libraries {
            rules_dirs,
            triggers,
            prefilter,
        } => rules::libraries(&rules_dirs, triggers, prefilter),
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn load_catalog(dirs: &[PathBuf]) -> Option<Catalog> {
    match Catalog::load(dirs) {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("{:?}", miette::Report::new(*e));
            None
        }
    }
}

/// The project's `lock-audit.yaml` (`--config`, else the nearest one above
/// the first path); `Err` is already reported.
fn load_config(explicit: Option<&PathBuf>, paths: &[PathBuf]) -> Result<Config, ()> {
    let found = explicit
        .cloned()
        .or_else(|| config::find(paths.first().map_or(Path::new("."), PathBuf::as_path)));
    match found {
        None => Ok(Config::default()),
        Some(path) => config::load(&path).map_err(|e| eprintln!("{:?}", miette::Report::new(*e))),
    }
}

/// The catalog: built-in, the config's folders, then `--rules`.
fn catalog_for(config: &Config, extra: &[PathBuf]) -> Option<Catalog> {
    let dirs: Vec<PathBuf> = config.rules.iter().chain(extra).cloned().collect();
    load_catalog(&dirs)
}

/// The options of `lock-audit check` as a markdown table, from the argument
/// definitions themselves (README's table; a test keeps them equal).
pub fn options_markdown() -> String {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    cli.build();
    let Some(check) = cli.find_subcommand("check") else {
        return String::new();
    };
    let mut out = String::from("| option | meaning |\n|---|---|\n");
    for arg in check.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if long == "help" {
            continue;
        }
        let mut name = format!("--{long}");
        if let Some(short) = arg.get_short() {
            name = format!("{name}, -{short}");
        }
        let takes_value = arg.get_action().takes_values();
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| takes_value && !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() {
            name = format!("{name} {}", values.join("\\|"));
        } else if takes_value {
            let shown = arg
                .get_value_names()
                .and_then(|v| v.first())
                .map_or_else(|| long.to_uppercase(), |v| v.to_string());
            name = format!("{name} {shown}");
        }
        let help = arg
            .get_long_help()
            .or_else(|| arg.get_help())
            .map(|h| h.to_string().replace('\n', " ").replace('|', "\\|"))
            .unwrap_or_default();
        let default: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        let default = match default.as_slice() {
            [] => String::new(),
            [d] if d == "false" => String::new(),
            d => format!(" (default `{}`)", d.join(" ")),
        };
        out.push_str(&format!("| `{name}` | {help}{default} |\n"));
    }
    out
}
