//! `tafl-lab replay`: checks recorded games move by move (one JSON line per ply), or many
//! games in one process with `--games`, so game files from elsewhere can be validated.

use crate::PositionArgs;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use std::io::{Read, Write};
use tafl_rules::notation::{self, parse_move, split_moves};
use tafl_rules::records;
use tafl_rules::{Position, Side};

/// Replay a move list (a file or - for stdin) and print one JSON object per ply; with
/// --games, replay one game per line and print one JSON verdict per game.
#[derive(Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub pos: PositionArgs,
    /// File of whitespace-separated moves, or - for standard input.
    pub file: String,
    /// The file holds many games, one per line (blank lines and lines starting with `#`
    /// are skipped), each from the start position: print one JSON line per game with its
    /// verdict (plies, status, reason, or the error) instead of one per ply.
    #[arg(long)]
    pub games: bool,
}

pub fn run(args: &ReplayArgs, out: &mut impl Write) -> Result<()> {
    if args.games {
        replay_games(&args.pos, &args.file, out)
    } else {
        replay(&args.pos, &args.file, out)
    }
}

fn read_input(file: &str) -> Result<String> {
    if file == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("reading standard input")?;
        Ok(s)
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))
    }
}

/// Plays `text`'s moves from `pos`, calling `each` after every ply; the error names the ply.
fn play_record(
    pos: &mut Position,
    text: &str,
    mut each: impl FnMut(usize, &notation::MoveRecord, Side, &[tafl_rules::Square], &Position) -> Result<()>,
) -> Result<()> {
    let start_ply = pos.ply();
    for (i, tok) in split_moves(text).into_iter().enumerate() {
        let ply = start_ply as usize + i + 1;
        let rec = parse_move(tok, pos.geometry()).map_err(|e| anyhow!("ply {ply}: {e}"))?;
        let side = pos.to_move();
        let captures = pos.play(rec.mv).map_err(|e| anyhow!("ply {ply}: {e}"))?;
        if let Some(claimed) = &rec.captures {
            if *claimed != captures {
                let e = tafl_rules::MoveError::CaptureMismatch { mv: rec.mv, claimed: claimed.clone(), actual: captures };
                bail!("ply {ply}: {e}");
            }
        }
        each(ply, &rec, side, &captures, pos)?;
    }
    Ok(())
}

/// `(status, reason)` of a position for JSON output.
fn status(pos: &Position) -> (&'static str, serde_json::Value) {
    match pos.outcome() {
        None => ("ongoing", serde_json::Value::Null),
        Some(o) => (o.status_name(), serde_json::Value::from(o.reason.name())),
    }
}

fn replay(args: &PositionArgs, file: &str, out: &mut impl Write) -> Result<()> {
    let text = read_input(file)?;
    let mut pos = args.position()?;
    play_record(&mut pos, &text, |ply, rec, side, captures, pos| {
        let (status, reason) = status(pos);
        let line = serde_json::json!({
            "ply": ply,
            "move": rec.mv.to_string(),
            "side": side.name(),
            "captures": captures.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "status": status,
            "reason": reason,
        });
        writeln!(out, "{line}")?;
        Ok(())
    })
}

/// Many games in one process: one JSON verdict per game line. A game with an illegal move
/// gets its error in the verdict (`"error": "ply 7: ..."`) and the others go on; a summary
/// goes to standard error.
fn replay_games(args: &PositionArgs, file: &str, out: &mut impl Write) -> Result<()> {
    let text = read_input(file)?;
    if records::detect_form(&text) != records::RecordForm::Numbered {
        return replay_records(args, file, &text, out);
    }
    let start = args.position()?;
    let (mut games, mut bad) = (0usize, 0usize);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        games += 1;
        let mut pos = start.clone();
        let mut plies = 0;
        let result = play_record(&mut pos, line, |_, _, _, _, _| {
            plies += 1;
            Ok(())
        });
        let (status, reason) = status(&pos);
        let error = result.err().map(|e| {
            bad += 1;
            format!("{e:#}")
        });
        let verdict = serde_json::json!({
            "line": i + 1,
            "plies": plies,
            "status": status,
            "reason": reason,
            "error": error,
        });
        writeln!(out, "{verdict}")?;
    }
    out.flush()?;
    eprintln!("replayed {games} games: {} legal to the end, {bad} with an error", games - bad);
    Ok(())
}

/// `--games` on an archive CSV or an OpenTafl record: each game checked as `pretrain` checks
/// it (moves, recorded captures, result), one verdict per game with the recorded result.
fn replay_records(args: &PositionArgs, file: &str, text: &str, out: &mut impl Write) -> Result<()> {
    let variant = args.variant()?;
    let (form, games) = records::parse_records(text);
    let (n, mut bad) = (games.len(), 0usize);
    for game in games {
        let verdict =
            match game.map_err(|e| (e.line, e.reason)).and_then(|r| records::check(&r, &variant).map(|c| (r.line, c)).map_err(|e| (r.line, e.to_string()))) {
                Ok((line, c)) => serde_json::json!({
                    "line": line,
                    "plies": c.moves.len(),
                    "status": c.end.map_or("ongoing", |o| o.status_name()),
                    "reason": c.end.map(|o| o.reason.name()),
                    "recorded": c.result.to_string(),
                    "error": null,
                }),
                Err((line, e)) => {
                    bad += 1;
                    serde_json::json!({ "line": line, "error": e })
                }
            };
        writeln!(out, "{verdict}")?;
    }
    out.flush()?;
    eprintln!("{file} ({}): {n} games, {} accepted, {bad} refused", form.name(), n - bad);
    Ok(())
}
