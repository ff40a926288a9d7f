//! `tafl-lab`: the command users run. It depends on the rules crates alone (`tafl-rules-cli` on
//! `tafl-rules`), so the rules-only commands (`variants`, `show`, `moves`, `perft`, `replay`,
//! `demo`) start in milliseconds without loading LibTorch (about 500 MiB). Every other command
//! line, `--help` included, is handed unchanged to `tafl-lab-torch` in the same directory, which
//! has every command.

use clap::Parser;
use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::process::Command;
use tafl_rules_cli as rules;

/// The rules-only part of the command line (the full list is `tafl-lab-torch`'s).
#[derive(Parser)]
#[command(name = "tafl-lab", version)]
struct RulesCli {
    #[command(subcommand)]
    command: rules::RulesCommand,
}

fn main() {
    let args: Vec<OsString> = std::env::args_os().collect();
    let rules_only = args.get(1).and_then(|a| a.to_str()).is_some_and(rules::is_rules_command);
    let result = if rules_only { run_rules() } else { hand_over(&args[1..]) };
    if let Err(e) = result {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run_rules() -> anyhow::Result<()> {
    let cli: RulesCli = rules::parse_args()?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    rules::run(&cli.command, &mut out)?;
    out.flush()?;
    Ok(())
}

/// Runs `tafl-lab-torch` with `args`: in place of this process on Unix, as a child elsewhere.
fn hand_over(args: &[OsString]) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?.with_file_name(format!("tafl-lab-torch{}", std::env::consts::EXE_SUFFIX));
    let mut cmd = Command::new(&exe);
    cmd.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let err = cmd.arg0("tafl-lab").exec();
        anyhow::bail!("{}: {err} (tafl-lab-torch, which runs every command that needs LibTorch, is built beside tafl-lab)", exe.display())
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().map_err(|e| anyhow::anyhow!("{}: {e}", exe.display()))?;
        std::process::exit(status.code().unwrap_or(1));
    }
}
