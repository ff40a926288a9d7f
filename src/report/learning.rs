//! `tafl-lab report`: a run's learning curves from `metrics.jsonl`, as Markdown and plots.
//!
//! Beside the main table, the per-side calibration of the self-play values (lines that have
//! it: see [`super::metrics::CalibrationMetrics`]): a table of each side's positions, mean
//! predicted and realized score and Brier score per generation, and a plot of predicted
//! against realized per side. A side whose predicted line runs far from its realized line is
//! misjudged by the search that trains the network.

use super::metrics::{CalibrationMetrics, EvalMetrics, Losses, MetricsLine, SelfPlayMetrics};
use super::plot::{self, Chart, PlotError, Series};
use crate::arena::Wdl;
use crate::fsio::atomic_write;
use crate::rules::Side;
use crate::stats::elo_interval;
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

/// An evaluation's interval, as (low, high), for the error bars of a plot.
type EvalInterval = dyn Fn(&EvalMetrics) -> (f64, f64);

/// The fixed opponents (anchors): every opponent but the moving `previous`.
fn anchors(rows: &[MetricsLine]) -> Vec<String> {
    opponents(rows).into_iter().filter(|o| o != "previous").collect()
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
    s.push_str("\n![Elo](elo.png)\n\n");
    if !anchors(rows).is_empty() {
        s.push_str("![per side against the fixed opponents](anchors.png)\n\n");
    }
    s.push_str("![scores against time](scores.png)\n\n![self-play sides](selfplay.png)\n\n![losses](losses.png)\n");
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
    // Per opponent, one point per evaluation against it: (x of the row, y of the match), with
    // the match's interval when `errors` gives one.
    let eval_series = |x: &dyn Fn(&MetricsLine) -> f64, y: &dyn Fn(&EvalMetrics) -> f64, errors: Option<&EvalInterval>| -> Vec<Series> {
        opponents(rows)
            .into_iter()
            .map(|o| {
                let evals: Vec<(f64, &EvalMetrics)> = rows.iter().filter_map(|r| eval_against(r, &o).map(|e| (x(r), e))).collect();
                Series {
                    name: format!("vs {o}"),
                    points: evals.iter().map(|(x, e)| (*x, y(e))).collect(),
                    errors: errors.map_or_else(Vec::new, |err| evals.iter().map(|(_, e)| err(e)).collect()),
                }
            })
            .collect()
    };
    let elo = eval_series(&gen, &|e| e.elo, Some(&elo_bounds));
    written.extend(plot::write(
        &out.join("elo"),
        "Elo against each opponent (95% intervals, clipped at ±800)",
        &Chart::Lines { x_label: "generation", y_label: "Elo difference", series: &elo, y_range: None, x_log2: false },
    )?);
    // The fixed opponents (anchors: every opponent but the moving `previous`), per side: a
    // stall or a drift of one side shows within a few generations.
    let anchors = anchors(rows);
    if !anchors.is_empty() {
        let mut sides = Vec::new();
        for o in &anchors {
            for (side, of) in
                [("as attackers", (|e: &EvalMetrics| e.as_attackers) as fn(&EvalMetrics) -> Wdl), ("as defenders", |e: &EvalMetrics| e.as_defenders)]
            {
                let evals: Vec<(f64, Wdl)> = rows.iter().filter_map(|r| eval_against(r, o).map(|e| (gen(r), of(e)))).filter(|(_, w)| w.games() > 0).collect();
                sides.push(Series {
                    name: format!("{side} vs {o}"),
                    points: evals.iter().map(|(g, w)| (*g, side_score(w))).collect(),
                    errors: evals.iter().map(|(_, w)| wilson(side_score(w), w.games() as u64)).collect(),
                });
            }
        }
        written.extend(plot::write(
            &out.join("anchors"),
            "Score against the fixed opponents, per side (95% Wilson intervals)",
            &Chart::Lines { x_label: "generation", y_label: "score", series: &sides, y_range: Some((0.0, 1.0)), x_log2: false },
        )?);
    }
    let scores = eval_series(&|r| r.wall_seconds / 60.0, &|e| e.score, None);
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

/// The most an Elo interval is drawn out to: a clean sweep's bound is infinite.
const ELO_CLIP: f64 = 800.0;

/// An evaluation's Elo interval (both sides' games), clipped to ±[`ELO_CLIP`] for drawing.
fn elo_bounds(e: &EvalMetrics) -> (f64, f64) {
    let t = e.as_attackers + e.as_defenders;
    let est = elo_interval(u64::from(t.win), u64::from(t.draw), u64::from(t.loss));
    (est.low.clamp(-ELO_CLIP, ELO_CLIP), est.high.clamp(-ELO_CLIP, ELO_CLIP))
}

/// Points per game of one side's results (a draw is half a point).
fn side_score(w: &Wdl) -> f64 {
    (f64::from(w.win) + 0.5 * f64::from(w.draw)) / f64::from(w.games().max(1))
}

/// A score's 95% Wilson interval over `n` games, as (low, high).
fn wilson(score: f64, n: u64) -> (f64, f64) {
    crate::stats::wilson((score * n as f64).round() as u64, n, crate::stats::Z95)
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
        ("elo", "Elo against each opponent (95% intervals)"),
        ("anchors", "Score against the fixed opponents, per side"),
        ("scores", "Score against each opponent, by wall time"),
        ("selfplay", "Self-play results by side"),
        ("losses", "Training losses"),
    ] {
        // A run with no fixed opponent has no anchors plot.
        if name != "anchors" || !anchors(rows).is_empty() {
            body.push_str(&figure(&out.join(format!("{name}.svg")), caption)?);
        }
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

    fn eval(att: (u32, u32, u32), def: (u32, u32, u32)) -> EvalMetrics {
        let mut e = rows(8).into_iter().flat_map(|r| r.eval).next().expect("the fixture has an evaluation");
        e.as_attackers = Wdl { win: att.0, draw: att.1, loss: att.2 };
        e.as_defenders = Wdl { win: def.0, draw: def.1, loss: def.2 };
        e
    }

    /// The Elo interval drawn for an evaluation counts both sides' games; a clean sweep's
    /// infinite bound is clipped, an even result is centred on 0.
    #[test]
    fn an_evaluations_elo_interval_counts_both_sides_and_clips_a_sweep() {
        let (lo, hi) = elo_bounds(&eval((4, 0, 0), (4, 0, 0)));
        assert!(lo > 0.0 && hi == ELO_CLIP, "{lo} {hi}");
        let (lo, hi) = elo_bounds(&eval((3, 0, 2), (2, 0, 3)));
        assert!((lo + hi).abs() < 1e-6 && lo < -100.0, "{lo} {hi}");
        assert_eq!(side_score(&Wdl { win: 1, draw: 2, loss: 1 }), 0.5);
        assert_eq!(side_score(&Wdl { win: 0, draw: 0, loss: 0 }), 0.0);
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
