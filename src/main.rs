//! The `tafl-lab` binary: parses the command line and reports errors as one line.

mod cli;

fn main() {
    if let Err(e) = cli::run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
