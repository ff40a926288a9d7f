//! `tafl-lab view`: one self-contained HTML page to step through games (see `tafl_lab::view`).

use anyhow::{anyhow, Result};
use std::io::Write;
use std::path::PathBuf;
use tafl_lab::view::{input, page};

/// Write one self-contained HTML page that steps through the games of INPUT.
///
/// The page needs no network and no other file. INPUT is a
/// move list (the `replay` form), an archive CSV, numbered lines or an OpenTafl record, a
/// `match --record` file, a self-play shard or a training run directory (its shards, with the
/// search's top moves and value), or a balance output directory (its games.jsonl). The page
/// steps through the moves (buttons, arrow keys, the move list, a slider); `#game=G&ply=P` in
/// its address opens a position.
#[derive(clap::Args)]
pub struct ViewArgs {
    /// The games: a file or a directory (see above).
    pub input: PathBuf,
    /// The HTML file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Variant of records that do not name one (preset name, TOML path or OpenTafl rules
    /// string; default brandubh, as `replay`), or of a shard outside its run directory.
    #[arg(long)]
    pub variant: Option<String>,
    /// Show only game N (1-based, in the input's order).
    #[arg(long, value_name = "N")]
    pub game: Option<usize>,
    /// At most this many games, spread evenly over the input (default: 40 of a training run,
    /// 500 of anything else).
    #[arg(long, value_name = "N")]
    pub max_games: Option<usize>,
}

pub fn run(a: &ViewArgs, out: &mut impl Write) -> Result<()> {
    let src = input::read(&a.input, a.variant.as_deref())?;
    for s in src.skipped.iter().take(5) {
        eprintln!("warning: skipped {s}");
    }
    if src.skipped.len() > 5 {
        eprintln!("warning: skipped {} more", src.skipped.len() - 5);
    }
    let total = src.games.len();
    let max = a.max_games.unwrap_or(if src.kind == input::SourceKind::TrainingRun { 40 } else { 500 });
    let games = input::select(src.games, a.game, max)?;
    let name = a.input.file_name().map_or_else(|| a.input.display().to_string(), |n| n.to_string_lossy().into_owned());
    let variants: Vec<&str> = games.iter().fold(Vec::new(), |mut v, g| {
        if !v.contains(&g.variant.name.as_str()) {
            v.push(g.variant.name.as_str());
        }
        v
    });
    let title = format!("{name}: {} ({})", src.kind, variants.join(", "));
    let html = page::render(&title, &games).map_err(|e| anyhow!("{}: {e}", a.input.display()))?;
    tafl_lab::fsio::atomic_write(&a.out, html.as_bytes()).map_err(|e| anyhow!("--out {}: {e}", a.out.display()))?;
    let shown = if games.len() < total { format!("{} of {total} games", games.len()) } else { format!("{total} game{}", if total == 1 { "" } else { "s" }) };
    writeln!(out, "{}: {shown}, {} KB; wrote {}", src.kind, html.len().div_ceil(1024), a.out.display())?;
    Ok(())
}

/// The viewer side of `balance`: keeps a sample of each row's games (`games.jsonl`: one of
/// each way the row's games ended, then others), writes them as one viewer page
/// (`games.html`) and `report.html` with links into it. Returns the files written.
pub fn balance_pages(
    dir: &std::path::Path,
    jobs: &[tafl_lab::lab::balance::BalanceJob],
    rows: &[tafl_lab::lab::balance::BalanceRow],
    results: &[Vec<tafl_lab::arena::GameResult>],
    command: &str,
) -> Result<Vec<PathBuf>> {
    use tafl_lab::lab::balance;
    let sample = balance::sample_games(jobs, rows, results, balance::SAMPLE_PER_ROW);
    let jsonl = balance::write_games(dir, &sample)?;
    let src = input::read(&jsonl, None)?;
    let html = page::render(&format!("Balance games ({})", dir.display()), &src.games).map_err(|e| anyhow!("{}: {e}", jsonl.display()))?;
    let viewer = dir.join("games.html");
    tafl_lab::fsio::atomic_write(&viewer, html.as_bytes()).map_err(|e| anyhow!("{}: {e}", viewer.display()))?;
    let report = balance::write_html(dir, rows, command, &sample, "games.html")?;
    Ok(vec![jsonl, viewer, report])
}
