//! `tafl-lab report`: a run's learning curves from `metrics.jsonl`, as Markdown and plots.

use super::plot::{self, Chart, PlotError, Series};
use crate::fsio::atomic_write;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {message}")]
    Input { path: String, message: String },
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// Reads `metrics.jsonl`; every line must be a JSON object with a generation.
pub fn read_metrics(path: &Path) -> Result<Vec<Value>, ReportError> {
    let err = |message: String| ReportError::Input { path: path.display().to_string(), message };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let rows: Vec<Value> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value = serde_json::from_str(l).map_err(|e| err(format!("line {}: {e}", i + 1)))?;
            if v["generation"].as_u64().is_none() {
                return Err(err(format!("line {}: no generation", i + 1)));
            }
            Ok(v)
        })
        .collect::<Result<_, _>>()?;
    if rows.is_empty() {
        return Err(err("no generations yet".into()));
    }
    Ok(rows)
}

fn opponents(rows: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        for e in r["eval"].as_array().into_iter().flatten() {
            if let Some(o) = e["opponent"].as_str() {
                if !out.iter().any(|x| x == o) {
                    out.push(o.to_string());
                }
            }
        }
    }
    out
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// The Markdown learning-curve table.
pub fn markdown(rows: &[Value], run: &str) -> String {
    let opp = opponents(rows);
    let mut s = format!("# Learning report: {run}\n\n");
    s.push_str("Per generation: wall time, losses, self-play per-side rates, and the evaluation score (Elo) against each opponent, with the model's W-D-L as attackers / as defenders.\n\n");
    s.push_str("| gen | minutes | loss policy / value | self-play att / def / draw | plies |");
    for o in &opp {
        let _ = write!(s, " vs {o} |");
    }
    s.push_str("\n|---|---|---|---|---|");
    s.push_str(&"---|".repeat(opp.len()));
    s.push('\n');
    for r in rows {
        let sp = &r["selfplay"];
        let _ = write!(
            s,
            "| {} | {:.1} | {:.2} / {:.2} | {:.0}% / {:.0}% / {:.0}% | {:.0} |",
            r["generation"],
            f(&r["wall_seconds"]) / 60.0,
            f(&r["loss"]["policy"]),
            f(&r["loss"]["value"]),
            100.0 * f(&sp["attackers_win"]),
            100.0 * f(&sp["defenders_win"]),
            100.0 * f(&sp["draws"]),
            f(&sp["mean_plies"])
        );
        for o in &opp {
            let e = r["eval"].as_array().into_iter().flatten().find(|e| e["opponent"].as_str() == Some(o));
            match e {
                Some(e) => {
                    let wdl = |k: &str| format!("{}-{}-{}", e[k]["win"], e[k]["draw"], e[k]["loss"]);
                    let _ = write!(s, " {:.0}% ({:+.0}), {} / {} |", 100.0 * f(&e["score"]), f(&e["elo"]), wdl("as_attackers"), wdl("as_defenders"));
                }
                None => s.push_str("  |"),
            }
        }
        s.push('\n');
    }
    s.push_str("\n![Elo](elo.png)\n\n![scores against time](scores.png)\n\n![self-play sides](selfplay.png)\n\n![losses](losses.png)\n");
    s
}

/// Writes `learning.md` and the plots into `out`.
pub fn write(rows: &[Value], run: &str, out: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let io = |p: &Path, e: std::io::Error| ReportError::Input { path: p.display().to_string(), message: e.to_string() };
    std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let md = out.join("learning.md");
    atomic_write(&md, markdown(rows, run).as_bytes()).map_err(|e| io(&md, e))?;
    let mut written = vec![md];
    let gen = |r: &Value| f(&r["generation"]);
    let eval_series = |x: &dyn Fn(&Value) -> f64, y: &dyn Fn(&Value) -> f64| -> Vec<Series> {
        opponents(rows)
            .into_iter()
            .map(|o| Series {
                name: format!("vs {o}"),
                points: rows
                    .iter()
                    .filter_map(|r| r["eval"].as_array().into_iter().flatten().find(|e| e["opponent"].as_str() == Some(&o)).map(|e| (x(r), y(e))))
                    .collect(),
                errors: Vec::new(),
            })
            .collect()
    };
    let elo = eval_series(&gen, &|e| f(&e["elo"]));
    written.extend(plot::write(&out.join("elo"), "Elo against each opponent", &Chart::Lines { x_label: "generation", y_label: "Elo difference", series: &elo, y_range: None, x_log2: false })?);
    let scores = eval_series(&|r| f(&r["wall_seconds"]) / 60.0, &|e| f(&e["score"]));
    written.extend(plot::write(&out.join("scores"), "Score against each opponent", &Chart::Lines { x_label: "minutes", y_label: "score", series: &scores, y_range: Some((0.0, 1.0)), x_log2: false })?);
    let side = |name: &str, key: &str| Series { name: name.to_string(), points: rows.iter().map(|r| (gen(r), f(&r["selfplay"][key]))).collect(), errors: Vec::new() };
    let sides = [side("attackers win", "attackers_win"), side("defenders win", "defenders_win"), side("draws", "draws")];
    written.extend(plot::write(&out.join("selfplay"), "Self-play results by side", &Chart::Lines { x_label: "generation", y_label: "share of games", series: &sides, y_range: Some((0.0, 1.0)), x_log2: false })?);
    let loss = |name: &str, key: &str| Series {
        name: name.to_string(),
        points: rows.iter().filter(|r| f(&r["train_steps"]) > 0.0).map(|r| (gen(r), f(&r["loss"][key]))).collect(),
        errors: Vec::new(),
    };
    let losses = [loss("policy", "policy"), loss("value", "value")];
    written.extend(plot::write(&out.join("losses"), "Training losses", &Chart::Lines { x_label: "generation", y_label: "cross-entropy", series: &losses, y_range: None, x_log2: false })?);
    Ok(written)
}
