//! `lock-audit`: see `lock_audit::cli`.

fn main() -> std::process::ExitCode {
    lock_audit::cli::main_with(std::env::args())
}
