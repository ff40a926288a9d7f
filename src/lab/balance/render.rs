//! A balance run's files: the Markdown report and CSV table of its rows, the plots (rates,
//! lengths, strength), `games.jsonl` (the sample games for the viewer) and `report.html`.

use super::{BalanceRow, SampleGame};
use crate::fsio::atomic_write;
use crate::report::plot::{self, BarSeries, Chart, PlotError, Series};
use crate::rules::Reason;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A share as a percentage with one decimal: `66.7%`.
pub(crate) fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// An interval of shares as percentages: `30.0–90.3`.
pub(crate) fn ci(c: [f64; 2]) -> String {
    format!("{:.1}–{:.1}", 100.0 * c[0], 100.0 * c[1])
}

/// The Markdown report.
pub fn markdown(rows: &[BalanceRow], command: &str) -> String {
    let mut s = String::from("# Balance report\n\n");
    let _ = writeln!(s, "Command: `{command}`\n");
    let _ = writeln!(
        s,
        "Each variant: the same agent plays both sides, every game from its own random opening. \
         Games counts distinct games (a game that repeats an earlier one's moves exactly is left \
         out and listed as a duplicate); rates with Wilson 95% intervals over those.\n"
    );
    s.push_str(
        "| variant | games (duplicates) | attackers win | defenders win (95% CI) | draws | human defenders win | mean / median plies |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let human = r.human.as_ref().map_or("–".to_string(), |h| format!("{} ({})", pct(h.defenders_win), h.source));
        let _ = writeln!(
            s,
            "| {} | {} ({}) | {} | {} ({}) | {} | {} | {:.1} / {:.1} |",
            r.label(),
            r.games,
            r.duplicates,
            pct(r.attackers_rate),
            pct(r.defenders_rate),
            ci(r.defenders_ci),
            pct(r.draws_rate),
            human,
            r.mean_length,
            r.median_length
        );
    }
    s.push_str("\n## How games ended\n\n| variant |");
    for reason in Reason::ALL {
        let _ = write!(s, " {} |", reason.name());
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(Reason::ALL.len()));
    s.push('\n');
    for r in rows {
        let _ = write!(s, "| {} |", r.label());
        for reason in Reason::ALL {
            let _ = write!(s, " {} |", r.reasons.get(reason.name()).copied().unwrap_or(0));
        }
        s.push('\n');
    }
    s.push_str("\n## Plots\n\n![win rates](rates.png)\n\n![game lengths](lengths.png)\n");
    if rows.iter().map(|r| r.sims).collect::<std::collections::BTreeSet<_>>().len() > 1 {
        s.push_str("\n![defenders' rate against search budget](strength.png)\n");
    }
    s
}

/// The CSV table (one row per measured configuration).
pub fn csv(rows: &[BalanceRow]) -> String {
    let mut s = String::from("variant,changes,agent,sims,games,duplicates,attackers_win,defenders_win,draws,attackers_rate,defenders_rate,draws_rate,defenders_ci_low,defenders_ci_high,mean_length,median_length");
    for reason in Reason::ALL {
        let _ = write!(s, ",{}", reason.name());
    }
    s.push('\n');
    for r in rows {
        let _ = write!(
            s,
            "{},\"{}\",\"{}\",{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.3},{:.1}",
            r.variant,
            r.changes.join(";"),
            r.agent,
            r.sims,
            r.games,
            r.duplicates,
            r.attackers_win,
            r.defenders_win,
            r.draws,
            r.attackers_rate,
            r.defenders_rate,
            r.draws_rate,
            r.defenders_ci[0],
            r.defenders_ci[1],
            r.mean_length,
            r.median_length
        );
        for reason in Reason::ALL {
            let _ = write!(s, ",{}", r.reasons.get(reason.name()).copied().unwrap_or(0));
        }
        s.push('\n');
    }
    s
}

/// Writes report.md, balance.csv, balance.json and the plots into `dir`.
pub fn write_outputs(dir: &Path, rows: &[BalanceRow], command: &str) -> Result<Vec<PathBuf>, PlotError> {
    let err = |p: &Path, e: std::io::Error| PlotError { path: p.display().to_string(), message: e.to_string() };
    std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
    let mut written = Vec::new();
    let json = serde_json::to_string_pretty(rows).expect("rows serialize") + "\n";
    for (name, text) in [("balance.json", json), ("balance.csv", csv(rows)), ("report.md", markdown(rows, command))] {
        let p = dir.join(name);
        atomic_write(&p, text.as_bytes()).map_err(|e| err(&p, e))?;
        written.push(p);
    }
    let categories: Vec<String> = rows.iter().map(BalanceRow::label).collect();
    let bars = |name: &str, f: &dyn Fn(&BalanceRow) -> (f64, [f64; 2])| BarSeries {
        name: name.to_string(),
        values: rows
            .iter()
            .map(|r| {
                let (v, c) = f(r);
                (v, c[0], c[1])
            })
            .collect(),
    };
    let series = [
        bars("attackers win", &|r| (r.attackers_rate, r.attackers_ci)),
        bars("defenders win", &|r| (r.defenders_rate, r.defenders_ci)),
        bars("draws", &|r| (r.draws_rate, r.draws_ci)),
    ];
    let markers: Vec<(usize, f64, String)> =
        rows.iter().enumerate().filter_map(|(i, r)| r.human.as_ref().map(|h| (i, h.defenders_win, h.source.clone()))).collect();
    written.extend(plot::write(
        &dir.join("rates"),
        "Win rates (95% Wilson intervals)",
        &Chart::Bars { y_label: "share of games", categories: &categories, series: &series, markers: &markers, y_range: None },
    )?);
    let lengths: Vec<Series> = rows
        .iter()
        .map(|r| Series {
            name: r.label(),
            points: r.length_histogram.iter().map(|&(lo, hi, c)| ((lo + hi) as f64 / 2.0, c as f64 / r.games.max(1) as f64)).collect(),
            errors: Vec::new(),
        })
        .collect();
    written.extend(plot::write(
        &dir.join("lengths"),
        "Game length",
        &Chart::Lines { x_label: "plies", y_label: "share of games", series: &lengths, y_range: None, x_log2: false },
    )?);
    let mut by_variant: BTreeMap<String, Vec<&BalanceRow>> = BTreeMap::new();
    for r in rows {
        let key = if r.changes.is_empty() { r.variant.clone() } else { format!("{} [{}]", r.variant, r.changes.join(", ")) };
        by_variant.entry(key).or_default().push(r);
    }
    if by_variant.values().any(|v| v.len() > 1) {
        let strength: Vec<Series> = by_variant
            .iter()
            .map(|(name, rs)| Series {
                name: name.clone(),
                points: rs.iter().map(|r| ((r.sims.max(1) as f64).log2(), r.defenders_rate)).collect(),
                errors: rs.iter().map(|r| (r.defenders_ci[0], r.defenders_ci[1])).collect(),
            })
            .collect();
        written.extend(plot::write(
            &dir.join("strength"),
            "Defenders' rate against search budget",
            &Chart::Lines { x_label: "simulations per move", y_label: "defenders win", series: &strength, y_range: Some((0.0, 1.0)), x_log2: true },
        )?);
    }
    Ok(written)
}

/// Writes `games.jsonl` (one [`SampleGame`] a line) into `dir`.
///
/// # Errors
/// The file cannot be written.
pub fn write_games(dir: &Path, games: &[SampleGame]) -> Result<PathBuf, PlotError> {
    let p = dir.join("games.jsonl");
    let text: String = games.iter().map(|g| serde_json::to_string(g).expect("games serialize") + "\n").collect();
    atomic_write(&p, text.as_bytes()).map_err(|e| PlotError { path: p.display().to_string(), message: e.to_string() })?;
    Ok(p)
}

/// `report.html`: the tables of [`markdown`], the plots inline, and per row links to its
/// sample games in the viewer page `viewer` (game `k` of the page is `games[k - 1]`), grouped
/// by how they ended. Reads the plots' SVG files from `dir`, so [`write_outputs`] comes first.
///
/// # Errors
/// A plot file that cannot be read, or the page cannot be written.
pub fn write_html(dir: &Path, rows: &[BalanceRow], command: &str, games: &[SampleGame], viewer: &str) -> Result<PathBuf, PlotError> {
    use crate::report::html::{escape, figure, page, table};
    let mut body =
        format!("<p>Command: <code>{}</code></p>\n<p>Each variant: the same agent plays both sides. Rates with Wilson 95% intervals.</p>\n", escape(command));
    let links = |row: usize| -> String {
        let mut by_end: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (k, g) in games.iter().enumerate().filter(|(_, g)| g.row == row) {
            by_end.entry(g.ending.as_str()).or_default().push(format!(
                "<a href=\"{}#game={}\" title=\"{}\">{}</a>",
                escape(viewer),
                k + 1,
                escape(&g.end),
                g.game
            ));
        }
        by_end.iter().map(|(e, l)| format!("{}: {}", escape(e), l.join(" "))).collect::<Vec<_>>().join("<br>")
    };
    let main: Vec<Vec<String>> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let human = r.human.as_ref().map_or("–".to_string(), |h| format!("{} ({})", pct(h.defenders_win), escape(&h.source)));
            vec![
                escape(&r.label()),
                r.games.to_string(),
                pct(r.attackers_rate),
                format!("{} ({})", pct(r.defenders_rate), ci(r.defenders_ci)),
                pct(r.draws_rate),
                human,
                format!("{:.1} / {:.1}", r.mean_length, r.median_length),
                format!("<span class=\"games\">{}</span>", links(i + 1)),
            ]
        })
        .collect();
    body.push_str(&table(
        &["variant", "games", "attackers win", "defenders win (95% CI)", "draws", "human defenders win", "mean / median plies", "games to watch (by ending)"],
        &main,
    ));
    body.push_str("<h2>How games ended</h2>\n");
    let mut header = vec!["variant"];
    header.extend(Reason::ALL.iter().map(|r| r.name()));
    let reasons: Vec<Vec<String>> = rows
        .iter()
        .map(|r| std::iter::once(escape(&r.label())).chain(Reason::ALL.iter().map(|x| r.reasons.get(x.name()).copied().unwrap_or(0).to_string())).collect())
        .collect();
    body.push_str(&table(&header, &reasons));
    body.push_str("<h2>Plots</h2>\n");
    body.push_str(&figure(&dir.join("rates.svg"), "Win rates with 95% Wilson intervals; crosses: human play")?);
    body.push_str(&figure(&dir.join("lengths.svg"), "Game length")?);
    if dir.join("strength.svg").is_file() && rows.iter().map(|r| r.sims).collect::<std::collections::BTreeSet<_>>().len() > 1 {
        body.push_str(&figure(&dir.join("strength.svg"), "Defenders' rate against search budget")?);
    }
    let p = dir.join("report.html");
    atomic_write(&p, page("Balance report", &body).as_bytes()).map_err(|e| PlotError { path: p.display().to_string(), message: e.to_string() })?;
    Ok(p)
}
