//! `tafl-lab-torch`: every tafl-lab command, LibTorch linked. Users run `tafl-lab`, which
//! runs the rules-only commands itself and hands the rest to this binary beside it.

mod cli;

fn main() {
    if let Err(e) = cli::run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
