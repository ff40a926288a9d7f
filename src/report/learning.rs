//! `tafl-lab report`: a run's learning curves from `metrics.jsonl`, as Markdown and plots.
//!
//! Beside the main table, the per-side calibration of the self-play values (lines that have
//! it: see [`super::metrics::CalibrationMetrics`]): a table of each side's positions, mean
//! predicted and realized score and Brier score per generation, and a plot of predicted
//! against realized per side. A side whose predicted line runs far from its realized line is
//! misjudged by the search that trains the network.

use super::metrics::{CalibrationMetrics, EvalMetrics, Losses, MetricsLine, SelfPlayMetrics};
use super::plot::{self, Chart, PlotError, Series};
use crate::fsio::atomic_write;
use crate::rules::Side;
use serde::Deserialize;
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

/// Reads `metrics.jsonl`; every line must be a [`MetricsLine`].
///
/// # Errors
/// When the file cannot be read, holds no line, or a line is not JSON, has no generation or
/// lacks another field of a metrics line (the error names the line).
pub fn read_metrics(path: &Path) -> Result<Vec<MetricsLine>, ReportError> {
    let err = |message: String| ReportError::Input { path: path.display().to_string(), message };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let rows: Vec<MetricsLine> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value = serde_json::from_str(l).map_err(|e| err(format!("line {}: {e}", i + 1)))?;
            if v["generation"].as_u64().is_none() {
                return Err(err(format!("line {}: no generation", i + 1)));
            }
            MetricsLine::deserialize(&v).map_err(|e| err(format!("line {}: {e}", i + 1)))
        })
        .collect::<Result<_, _>>()?;
    if rows.is_empty() {
        return Err(err("no generations yet".into()));
    }
    Ok(rows)
}

/// Every opponent of the run, in order of first appearance.
fn opponents(rows: &[MetricsLine]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in rows.iter().flat_map(|r| &r.eval) {
        if !out.contains(&e.opponent) {
            out.push(e.opponent.clone());
        }
    }
    out
}

/// The row's match against `opponent`, if it had one.
fn eval_against<'a>(r: &'a MetricsLine, opponent: &str) -> Option<&'a EvalMetrics> {
    r.eval.iter().find(|e| e.opponent == opponent)
}

/// The rows that have a calibration, with it.
fn calibrated(rows: &[MetricsLine]) -> Vec<(u64, &CalibrationMetrics)> {
    rows.iter().filter_map(|r| r.calibration.as_ref().map(|c| (r.generation, c))).collect()
}

const CALIBRATION_TEXT: &str = "Calibration of the self-play searches' values, per side to move: positions (fully searched plies), the mean predicted score of the side to move ((v + 1)/2 of the search's root value), the mean score it got, and the Brier score.";
const CALIBRATION_HEADER: [&str; 7] =
    ["gen", "att positions", "att predicted / realized", "att Brier", "def positions", "def predicted / realized", "def Brier"];

/// The cells of one calibration row, in [`CALIBRATION_HEADER`]'s order.
fn calibration_cells(generation: u64, c: &CalibrationMetrics) -> Vec<String> {
    let mut cells = vec![generation.to_string()];
    for side in [Side::Attackers, Side::Defenders] {
        let s = c.side(side);
        cells.push(s.count.to_string());
        cells.push(format!("{:.2} / {:.2}", s.mean_predicted, s.mean_realized));
        cells.push(format!("{:.3}", s.brier));
    }
    cells
}

/// The Markdown learning-curve table.
pub fn markdown(rows: &[MetricsLine], run: &str) -> String {
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
        let sp = &r.selfplay;
        let _ = write!(
            s,
            "| {} | {:.1} | {:.2} / {:.2} | {:.0}% / {:.0}% / {:.0}% | {:.0} |",
            r.generation,
            r.wall_seconds / 60.0,
            r.loss.policy,
            r.loss.value,
            100.0 * sp.attackers_win,
            100.0 * sp.defenders_win,
            100.0 * sp.draws,
            sp.mean_plies
        );
        for o in &opp {
            match eval_against(r, o) {
                Some(e) => {
                    let _ = write!(s, " {:.0}% ({:+.0}), {} / {} |", 100.0 * e.score, e.elo, e.as_attackers, e.as_defenders);
                }
                None => s.push_str("  |"),
            }
        }
        s.push('\n');
    }
    s.push_str("\n![Elo](elo.png)\n\n![scores against time](scores.png)\n\n![self-play sides](selfplay.png)\n\n![losses](losses.png)\n");
    let cal = calibrated(rows);
    if !cal.is_empty() {
        let _ = write!(s, "\n## Value calibration\n\n{CALIBRATION_TEXT}\n\n| {} |\n|", CALIBRATION_HEADER.join(" | "));
        s.push_str(&"---|".repeat(CALIBRATION_HEADER.len()));
        s.push('\n');
        for (g, c) in &cal {
            let _ = writeln!(s, "| {} |", calibration_cells(*g, c).join(" | "));
        }
        s.push_str("\n![value calibration](calibration.png)\n");
    }
    s
}

/// Writes `learning.md`, the plots and `report.html` (the same, with the plots inline) into `out`.
pub fn write(rows: &[MetricsLine], run: &str, out: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let io = |p: &Path, e: std::io::Error| ReportError::Input { path: p.display().to_string(), message: e.to_string() };
    std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let md = out.join("learning.md");
    atomic_write(&md, markdown(rows, run).as_bytes()).map_err(|e| io(&md, e))?;
    let mut written = vec![md];
    let gen = |r: &MetricsLine| r.generation as f64;
    let eval_series = |x: &dyn Fn(&MetricsLine) -> f64, y: &dyn Fn(&EvalMetrics) -> f64| -> Vec<Series> {
        opponents(rows)
            .into_iter()
            .map(|o| Series {
                name: format!("vs {o}"),
                points: rows.iter().filter_map(|r| eval_against(r, &o).map(|e| (x(r), y(e)))).collect(),
                errors: Vec::new(),
            })
            .collect()
    };
    let elo = eval_series(&gen, &|e| e.elo);
    written.extend(plot::write(
        &out.join("elo"),
        "Elo against each opponent",
        &Chart::Lines { x_label: "generation", y_label: "Elo difference", series: &elo, y_range: None, x_log2: false },
    )?);
    let scores = eval_series(&|r| r.wall_seconds / 60.0, &|e| e.score);
    written.extend(plot::write(
        &out.join("scores"),
        "Score against each opponent",
        &Chart::Lines { x_label: "minutes", y_label: "score", series: &scores, y_range: Some((0.0, 1.0)), x_log2: false },
    )?);
    let side = |name: &str, share: fn(&SelfPlayMetrics) -> f64| Series {
        name: name.to_string(),
        points: rows.iter().map(|r| (gen(r), share(&r.selfplay))).collect(),
        errors: Vec::new(),
    };
    let sides = [side("attackers win", |s| s.attackers_win), side("defenders win", |s| s.defenders_win), side("draws", |s| s.draws)];
    written.extend(plot::write(
        &out.join("selfplay"),
        "Self-play results by side",
        &Chart::Lines { x_label: "generation", y_label: "share of games", series: &sides, y_range: Some((0.0, 1.0)), x_log2: false },
    )?);
    let loss = |name: &str, of: fn(&Losses) -> f64| Series {
        name: name.to_string(),
        points: rows.iter().filter(|r| r.train_steps > 0).map(|r| (gen(r), of(&r.loss))).collect(),
        errors: Vec::new(),
    };
    let losses = [loss("policy", |l| l.policy), loss("value", |l| l.value)];
    written.extend(plot::write(
        &out.join("losses"),
        "Training losses",
        &Chart::Lines { x_label: "generation", y_label: "cross-entropy", series: &losses, y_range: None, x_log2: false },
    )?);
    let cal = calibrated(rows);
    if !cal.is_empty() {
        let line = |name: &str, side: Side, of: fn(&super::metrics::SideCalibration) -> f64| Series {
            name: name.to_string(),
            points: cal.iter().filter(|(_, c)| c.side(side).count > 0).map(|(g, c)| (*g as f64, of(c.side(side)))).collect(),
            errors: Vec::new(),
        };
        let lines = [
            line("attackers predicted", Side::Attackers, |s| s.mean_predicted),
            line("attackers realized", Side::Attackers, |s| s.mean_realized),
            line("defenders predicted", Side::Defenders, |s| s.mean_predicted),
            line("defenders realized", Side::Defenders, |s| s.mean_realized),
        ];
        written.extend(plot::write(
            &out.join("calibration"),
            "Self-play values: predicted and realized score by side to move",
            &Chart::Lines { x_label: "generation", y_label: "score of the side to move", series: &lines, y_range: Some((0.0, 1.0)), x_log2: false },
        )?);
    }
    let page = out.join("report.html");
    atomic_write(&page, html(rows, run, out)?.as_bytes()).map_err(|e| io(&page, e))?;
    written.push(page);
    Ok(written)
}

/// `report.html`: the table of [`markdown`] and the plots inline (read back from the SVG files
/// in `out`, so [`write`] draws them first).
fn html(rows: &[MetricsLine], run: &str, out: &Path) -> Result<String, ReportError> {
    use super::html::{figure, page, table};
    let opp = opponents(rows);
    let mut header: Vec<String> = ["gen", "minutes", "loss policy / value", "self-play att / def / draw", "plies"].map(String::from).to_vec();
    header.extend(opp.iter().map(|o| format!("vs {o}")));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let sp = &r.selfplay;
            let mut c = vec![
                r.generation.to_string(),
                format!("{:.1}", r.wall_seconds / 60.0),
                format!("{:.2} / {:.2}", r.loss.policy, r.loss.value),
                format!("{:.0}% / {:.0}% / {:.0}%", 100.0 * sp.attackers_win, 100.0 * sp.defenders_win, 100.0 * sp.draws),
                format!("{:.0}", sp.mean_plies),
            ];
            for o in &opp {
                c.push(
                    eval_against(r, o).map_or(String::new(), |e| format!("{:.0}% ({:+.0}), {} / {}", 100.0 * e.score, e.elo, e.as_attackers, e.as_defenders)),
                );
            }
            c
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut body = String::from("<p>Per generation: wall time, losses, self-play per-side rates, and the evaluation score (Elo) against each opponent, with the model's W-D-L as attackers / as defenders.</p>\n");
    body.push_str(&table(&header, &cells));
    body.push_str("<h2>Plots</h2>\n");
    for (name, caption) in [
        ("elo", "Elo against each opponent"),
        ("scores", "Score against each opponent, by wall time"),
        ("selfplay", "Self-play results by side"),
        ("losses", "Training losses"),
    ] {
        body.push_str(&figure(&out.join(format!("{name}.svg")), caption)?);
    }
    let cal = calibrated(rows);
    if !cal.is_empty() {
        let _ = write!(body, "<h2>Value calibration</h2>\n<p>{}</p>\n", super::html::escape(CALIBRATION_TEXT));
        let cells: Vec<Vec<String>> = cal.iter().map(|(g, c)| calibration_cells(*g, c)).collect();
        body.push_str(&table(&CALIBRATION_HEADER, &cells));
        body.push_str(&figure(&out.join("calibration.svg"), "Self-play values: predicted and realized score by side to move")?);
    }
    Ok(page(&format!("Learning report: {run}"), &body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::metrics::SideCalibration;

    const SHIPPED: &str = include_str!("../../docs/results/brandubh-settings-study-1/previous-shipped/metrics.jsonl");

    fn rows(n: usize) -> Vec<MetricsLine> {
        SHIPPED.lines().take(n).map(|l| MetricsLine::from_json(l).unwrap()).collect()
    }

    /// Lines without a calibration (every line written before it existed) make no section; a
    /// line with one makes a row of its generation, with its figures.
    #[test]
    fn the_calibration_table_lists_the_generations_that_have_one() {
        let mut r = rows(3);
        assert!(!markdown(&r, "old").contains("Value calibration"));
        r[1].calibration = Some(CalibrationMetrics {
            attackers: SideCalibration { count: 300, mean_predicted: 0.4, mean_realized: 0.1, brier: 0.2 },
            defenders: SideCalibration { count: 290, mean_predicted: 0.6, mean_realized: 0.9, brier: 0.25 },
        });
        let md = markdown(&r, "new");
        let section = &md[md.find("## Value calibration").expect("a section")..];
        let table: Vec<&str> = section.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(
            table,
            [
                "| gen | att positions | att predicted / realized | att Brier | def positions | def predicted / realized | def Brier |",
                "| 2 | 300 | 0.40 / 0.10 | 0.200 | 290 | 0.60 / 0.90 | 0.250 |"
            ]
        );
    }
}
