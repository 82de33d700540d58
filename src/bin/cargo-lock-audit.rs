//! `cargo lock-audit ...`: cargo runs `cargo-lock-audit lock-audit ...`;
//! drop that extra word, then behave exactly like `lock-audit`.

fn main() -> std::process::ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("lock-audit") {
        args.remove(1);
    }
    // `cargo lock-audit` alone means `check` of the current directory.
    let known = [
        "check",
        "explain",
        "rules",
        "help",
        "--help",
        "-h",
        "--version",
        "-V",
    ];
    if !args.get(1).is_some_and(|a| known.contains(&a.as_str())) {
        args.insert(1, "check".to_string());
    }
    lock_audit::cli::main_with(args)
}
