//! The balance atlas (`balance --atlas DIR`): one table and one page over every trained model
//! in DIR (a folder per preset, as `scripts/atlas.sh` keeps them in `models/atlas/`).
//!
//! Why one command: a designer's question "which side does this variant favour, and by how
//! much?" needs, per preset, a strong agent (its strength against programs nobody here wrote),
//! the sides' rates at equal search at two strengths (balance often moves with strength), the
//! search handicap that evens the sides (comparable across variants where raw rates are not),
//! how games end, and the human figure where one is published. This module gathers those rows
//! ([`AtlasRow`]) from measurements the caller makes with [`super::balance`] and
//! [`super::handicap`], and from the match records kept beside each model, and renders them.
//!
//! A preset's strength rows are the `match --json` files in `<DIR>/<preset>/matches/`; the
//! atlas reads them as they are (opponent, W-D-L per side, forfeits, voids, disagreements).

use super::balance::BalanceRow;
use super::handicap::Handicap;
use crate::arena::Wdl;
use crate::report::html;
use crate::report::plot::{self, BarSeries, Chart, PlotError};
use crate::rules::Variant;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why the atlas cannot be made, in one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum AtlasError {
    #[error("{0}: {1}")]
    Read(PathBuf, String),
    #[error("{0}: no trained model (no <preset>/model.safetensors in it whose run is finished)")]
    Empty(PathBuf),
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// One trained model of the atlas folder.
#[derive(Clone, Debug)]
pub struct Preset {
    /// The folder's name, a preset of `tafl-lab variants`.
    pub name: String,
    pub variant: Arc<Variant>,
    /// The model's folder (what `az:model=` takes).
    pub model: PathBuf,
}

/// Whether the training run kept beside a model (`run/state.json`, as `scripts/atlas.sh`
/// keeps it) is still going: its budget not yet spent. A model with no run beside it counts
/// as trained.
fn still_training(model_dir: &Path) -> bool {
    // A state that does not read counts as unfinished: the model is left out, and named.
    crate::train::RunDir::new(&model_dir.join("run")).load_state().map_or(true, |state| state.is_some_and(|st| !st.finished))
}

/// The trained presets of `dir`, by name: each folder that holds a `model.safetensors` and is
/// named after a preset, and the names of those left out because their run is still going.
///
/// # Errors
/// The folder cannot be read, a model folder is not named after a preset, or there is none.
pub fn presets(dir: &Path) -> Result<(Vec<Preset>, Vec<String>), AtlasError> {
    let read = |e: std::io::Error| AtlasError::Read(dir.to_path_buf(), e.to_string());
    let mut out = Vec::new();
    let mut training = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read)? {
        let path = entry.map_err(read)?.path();
        if !path.join("model.safetensors").is_file() {
            continue;
        }
        if still_training(&path) {
            training.push(path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default());
            continue;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let variant = Variant::preset(&name).map_err(|e| AtlasError::Read(path.clone(), format!("the folder is not named after a preset: {e}")))?;
        out.push(Preset { name, variant: Arc::new(variant), model: path });
    }
    if out.is_empty() {
        return Err(AtlasError::Empty(dir.to_path_buf()));
    }
    out.sort_by(|a, b| (a.variant.geometry.size(), &a.name).cmp(&(b.variant.geometry.size(), &b.name)));
    training.sort();
    Ok((out, training))
}

/// One match of a preset's model against another program, from its `match --json` file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StrengthRow {
    /// The model's agent (`a` of the match) and the opponent (`b`).
    pub agent: String,
    pub opponent: String,
    pub seed: u64,
    pub as_attackers: Wdl,
    pub as_defenders: Wdl,
    pub forfeits: u32,
    pub voids: u32,
    pub disagreements: u32,
    /// The file, relative to the atlas folder.
    pub file: String,
}

/// What this module reads of a `match --json` file.
#[derive(Deserialize)]
struct MatchFile {
    a: String,
    b: String,
    seed: u64,
    a_as_attackers: Wdl,
    a_as_defenders: Wdl,
    #[serde(default)]
    forfeits: u32,
    #[serde(default)]
    voids: u32,
    #[serde(default)]
    disagreements: u32,
}

/// The strength rows of `preset` (its `matches/*.json`, by file name), relative to `atlas`.
///
/// # Errors
/// A file that is not a `match --json` output, named.
pub fn strength(atlas: &Path, preset: &Preset) -> Result<Vec<StrengthRow>, AtlasError> {
    let dir = preset.model.join("matches");
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(Vec::new()) };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).map_err(|e| AtlasError::Read(f.clone(), e.to_string()))?;
            let m: MatchFile = serde_json::from_str(&text).map_err(|e| AtlasError::Read(f.clone(), format!("not a `match --json` output: {e}")))?;
            let file = f.strip_prefix(atlas).unwrap_or(&f).display().to_string();
            Ok(StrengthRow {
                agent: m.a,
                opponent: m.b,
                seed: m.seed,
                as_attackers: m.a_as_attackers,
                as_defenders: m.a_as_defenders,
                forfeits: m.forfeits,
                voids: m.voids,
                disagreements: m.disagreements,
                file,
            })
        })
        .collect()
}

/// The handicap of a preset as the atlas shows it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HandicapSummary {
    /// The agent at equal search and the factors played.
    pub agent: String,
    pub factors: Vec<u32>,
    pub games_per_factor: usize,
    /// The attackers' search over the defenders' at which the sides are even, and its 95%
    /// interval; `None` when the fit failed (`verdict` says why).
    pub k_even: Option<f64>,
    pub k_interval: Option<(f64, f64)>,
    pub verdict: String,
}

impl HandicapSummary {
    pub fn new(agent: &str, factors: &[u32], games: usize, h: &Handicap) -> HandicapSummary {
        let (k_even, k_interval) = match &h.fit {
            Ok(f) => (Some(f.k_even()), f.k_interval()),
            Err(_) => (None, None),
        };
        HandicapSummary { agent: agent.to_string(), factors: factors.to_vec(), games_per_factor: games, k_even, k_interval, verdict: h.verdict() }
    }
}

/// Everything the atlas says of one preset.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AtlasRow {
    pub preset: String,
    pub board: String,
    pub description: String,
    pub strength: Vec<StrengthRow>,
    /// Self-play at equal search, one row per strength (simulations).
    pub balance: Vec<BalanceRow>,
    pub handicap: Option<HandicapSummary>,
}

impl AtlasRow {
    pub fn new(preset: &Preset, strength: Vec<StrengthRow>, balance: Vec<BalanceRow>, handicap: Option<HandicapSummary>) -> AtlasRow {
        let n = preset.variant.geometry.size();
        AtlasRow { preset: preset.name.clone(), board: format!("{n}x{n}"), description: preset.variant.description.clone(), strength, balance, handicap }
    }
}

/// What a preset's self-play measurement (its balance rows and handicap) depends on: the
/// model's weights and the run's settings. The same key gives the same games (every game is
/// seeded from the run's seed), so a measurement kept under it stands for playing them again.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct MeasureKey {
    pub model_sha256: String,
    pub sims: Vec<u32>,
    pub factors: Vec<u32>,
    pub games: usize,
    pub seed: u64,
    pub opening_plies: u32,
}

/// One preset's self-play measurement, kept in `<out>/presets/<preset>.json` as soon as it is
/// made: the atlas of many presets takes hours on two cores, and adding one preset (or a run
/// cut short) then plays only what is new.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    pub key: MeasureKey,
    pub balance: Vec<BalanceRow>,
    pub handicap: Option<HandicapSummary>,
}

fn kept_path(out: &Path, preset: &str) -> PathBuf {
    out.join("presets").join(format!("{preset}.json"))
}

/// The measurement of `preset` kept in `out` under `key`, if there is one: `None` when there
/// is no file, it does not read, or it was made with another model or other settings.
pub fn kept(out: &Path, preset: &str, key: &MeasureKey) -> Option<Measured> {
    let text = std::fs::read_to_string(kept_path(out, preset)).ok()?;
    let m: Measured = serde_json::from_str(&text).ok()?;
    (m.key == *key).then_some(m)
}

/// Keeps `measured` for `preset` in `out` (written to a temporary name and renamed).
///
/// # Errors
/// The file cannot be written.
pub fn keep(out: &Path, preset: &str, measured: &Measured) -> Result<(), AtlasError> {
    let path = kept_path(out, preset);
    let io = |e: std::io::Error| AtlasError::Read(path.clone(), e.to_string());
    std::fs::create_dir_all(path.parent().expect("a file in a folder")).map_err(io)?;
    let text = serde_json::to_string_pretty(measured).expect("a measurement serialises") + "\n";
    crate::fsio::atomic_write(&path, text.as_bytes()).map_err(io)
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn wdl(w: &Wdl) -> String {
    format!("{}-{}-{}", w.win, w.draw, w.loss)
}

/// The strength cell: each match as `opponent: W-D-L attacking, W-D-L defending`.
fn strength_text(rows: &[StrengthRow]) -> String {
    if rows.is_empty() {
        return "not measured".into();
    }
    rows.iter()
        .map(|r| {
            let faults = r.forfeits + r.voids + r.disagreements;
            let clean = if faults == 0 { String::new() } else { format!(" ({} forfeits, {} voids, {} disagreements)", r.forfeits, r.voids, r.disagreements) };
            format!("`{}`: {} attacking, {} defending{clean}", r.opponent, wdl(&r.as_attackers), wdl(&r.as_defenders))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The defenders' rate at each strength: `64 sims: 55.0% (45.2-64.4), 100 games`.
fn balance_text(rows: &[BalanceRow]) -> String {
    rows.iter()
        .map(|b| format!("{} sims: {} ({}-{}) of {}", b.sims, pct(b.defenders_rate), pct(b.defenders_ci[0]), pct(b.defenders_ci[1]), b.games))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The handicap in words: which side needs how much more search to break even.
fn handicap_text(h: &Option<HandicapSummary>) -> String {
    match h {
        None => "not measured".into(),
        Some(h) => match h.k_even {
            Some(k) => {
                let (side, k, interval) = super::handicap::weaker_side_needs(k, h.k_interval);
                let i = interval.map_or(" (no interval)".into(), |(lo, hi)| format!(" ({lo:.2}x to {hi:.2}x)"));
                format!("{side} need {k:.2}x the search{i}")
            }
            None => h.verdict.clone(),
        },
    }
}

/// How the games of the first strength ended, the commonest first: `king captured 61%, ...`.
fn endings_text(rows: &[BalanceRow]) -> String {
    let Some(b) = rows.first() else { return String::new() };
    let total: u32 = b.reasons.values().sum();
    let mut r: Vec<(&String, &u32)> = b.reasons.iter().filter(|(_, &n)| n > 0).collect();
    r.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    r.iter().map(|(k, &n)| format!("{k} {:.0}%", 100.0 * n as f64 / total.max(1) as f64)).collect::<Vec<_>>().join(", ")
}

fn lengths_text(rows: &[BalanceRow]) -> String {
    rows.iter().map(|b| format!("{:.0}", b.mean_length)).collect::<Vec<_>>().join(" / ")
}

fn human_text(rows: &[BalanceRow]) -> String {
    match rows.first().and_then(|b| b.human.as_ref()) {
        Some(h) => format!("{} ({})", pct(h.defenders_win), h.source),
        None => "none published".into(),
    }
}

/// The table's columns, in the Markdown table and on the page.
const COLUMNS: [&str; 8] = ["preset", "board", "strength", "defenders at equal search", "handicap that evens it", "mean plies", "endings", "human defenders"];

/// One preset's cells under [`COLUMNS`] (Markdown text: code in backticks).
fn cells(r: &AtlasRow) -> Vec<String> {
    vec![
        format!("`{}`", r.preset),
        r.board.clone(),
        strength_text(&r.strength),
        balance_text(&r.balance),
        handicap_text(&r.handicap),
        lengths_text(&r.balance),
        endings_text(&r.balance),
        human_text(&r.balance),
    ]
}

/// The table's header and one line per preset (Markdown).
pub fn markdown(rows: &[AtlasRow], command: &str) -> String {
    let mut s = String::from("# Balance atlas\n\n");
    s.push_str(&format!("Command: `{command}`\n\n"));
    s.push_str(
        "Per preset: the model's strength against programs nobody here wrote (W-D-L as attackers and as defenders), \
         the defenders' rate when the model plays itself at equal search (95% Wilson interval over distinct games) at each \
         strength, how much more search the weaker side needs for the sides to be even (95% interval), mean game length \
         at each strength, how games end at the first strength, and the human defenders' rate where one is published \
         (under the rules named with its source, which may differ from the preset's).\n\n",
    );
    s.push_str(&format!("| {} |\n|{}\n", COLUMNS.join(" | "), "---|".repeat(COLUMNS.len())));
    for r in rows {
        s.push_str(&format!("| {} |\n", cells(r).join(" | ")));
    }
    s
}

fn csv_field(x: &str) -> String {
    if x.contains([',', '"', '\n']) {
        format!("\"{}\"", x.replace('"', "\"\""))
    } else {
        x.to_string()
    }
}

/// One line per preset and strength: the numbers of the table, for spreadsheets.
pub fn csv(rows: &[AtlasRow]) -> String {
    let mut s = String::from(
        "preset,board,sims,games,attackers_rate,defenders_rate,draws_rate,defenders_low,defenders_high,mean_length,k_even,k_low,k_high,human_defenders\n",
    );
    for r in rows {
        for b in &r.balance {
            let h = r.handicap.as_ref();
            let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.4}"));
            s.push_str(&format!(
                "{},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.1},{},{},{},{}\n",
                csv_field(&r.preset),
                r.board,
                b.sims,
                b.games,
                b.attackers_rate,
                b.defenders_rate,
                b.draws_rate,
                b.defenders_ci[0],
                b.defenders_ci[1],
                b.mean_length,
                opt(h.and_then(|h| h.k_even)),
                opt(h.and_then(|h| h.k_interval.map(|i| i.0))),
                opt(h.and_then(|h| h.k_interval.map(|i| i.1))),
                opt(b.human.as_ref().map(|h| h.defenders_win)),
            ));
        }
    }
    s
}

/// Markdown inline code to HTML.
fn cell_html(x: &str) -> String {
    let mut out = String::new();
    for (i, part) in html::escape(x).split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("<code>{part}</code>"));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// One self-contained page ([`html::page`]): the table and `plot`, the handicap plot as
/// [`html::figure`] inlines it.
pub fn html(rows: &[AtlasRow], command: &str, plot: &str) -> String {
    let body_rows: Vec<Vec<String>> = rows.iter().map(|r| cells(r).iter().map(|c| cell_html(c)).collect()).collect();
    let body = format!(
        "<p>Command: <code>{}</code></p>\n<div id=\"atlas\">{}</div>\n<h2>The handicap that evens each preset</h2>\n<div id=\"plot\">{plot}</div>\n\
         <script>document.body.dataset.rows=document.querySelectorAll('#atlas tbody tr').length;document.body.dataset.ready='1';</script>\n",
        html::escape(command),
        html::table(&COLUMNS, &body_rows),
    );
    // The page draws nothing itself; the script only says what the browser parsed (the
    // browser test reads these attributes).
    html::page("Balance atlas", &body)
}

/// The axis of the handicap chart: both signs (below 0 the defenders need the larger search),
/// every value and interval of `values` ((log2 k, low, high) per preset) inside, 0 always on
/// it, and room above for the legend.
fn handicap_axis(values: &[(f64, f64, f64)]) -> (f64, f64) {
    let lo = values.iter().map(|v| v.1.min(v.0)).fold(0.0f64, f64::min);
    let hi = values.iter().map(|v| v.2.max(v.0)).fold(0.0f64, f64::max);
    (lo - 0.25, hi + 0.25 * (hi - lo).max(1.0))
}

/// The handicap chart: log2 of the even ratio per preset with its interval (above 0: the
/// attackers need more search; below: the defenders do).
fn handicap_chart(dir: &Path, rows: &[AtlasRow]) -> Result<Vec<PathBuf>, PlotError> {
    let measured: Vec<&AtlasRow> = rows.iter().filter(|r| r.handicap.as_ref().is_some_and(|h| h.k_even.is_some())).collect();
    let categories: Vec<String> = measured.iter().map(|r| r.preset.clone()).collect();
    let values: Vec<(f64, f64, f64)> = measured
        .iter()
        .map(|r| {
            let h = r.handicap.as_ref().expect("filtered");
            let k = h.k_even.expect("filtered").log2();
            let (lo, hi) = h.k_interval.map_or((k, k), |(l, h)| (l.log2(), h.log2()));
            (k, lo, hi)
        })
        .collect();
    let y_range = Some(handicap_axis(&values));
    let series = [BarSeries { name: "log2 of the attackers' search over the defenders' at the even point".into(), values }];
    plot::write(
        &dir.join("handicap"),
        "Search handicap that evens each preset (95% interval)",
        &Chart::Bars { y_label: "log2 (attackers' search / defenders')", categories: &categories, series: &series, markers: &[], y_range },
    )
}

/// Writes `atlas.md`, `atlas.csv`, `atlas.json`, `handicap.svg`/`.png` and `atlas.html` into
/// `dir`; returns their paths.
///
/// # Errors
/// A file cannot be written.
pub fn write(dir: &Path, rows: &[AtlasRow], command: &str) -> Result<Vec<PathBuf>, AtlasError> {
    let io = |p: &Path, e: std::io::Error| AtlasError::Read(p.to_path_buf(), e.to_string());
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut files = handicap_chart(dir, rows)?;
    let plot = html::figure(
        &dir.join("handicap.svg"),
        "log2 of the attackers' search over the defenders' at which the sides are even; above 0 the attackers need more",
    )?;
    let json = serde_json::to_string_pretty(&serde_json::json!({ "command": command, "presets": rows })).expect("rows serialise") + "\n";
    for (name, text) in [("atlas.md", markdown(rows, command)), ("atlas.csv", csv(rows)), ("atlas.json", json), ("atlas.html", html(rows, command, &plot))] {
        let path = dir.join(name);
        crate::fsio::atomic_write(&path, text.as_bytes()).map_err(|e| io(&path, e))?;
        files.push(path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn balance_row(sims: u32, defenders: u32, games: u32) -> BalanceRow {
        let (lo, hi) = crate::stats::wilson(defenders as u64, games as u64, crate::stats::Z95);
        BalanceRow {
            variant: "brandubh".into(),
            changes: Vec::new(),
            agent: format!("az:model=x,sims={sims}"),
            sims,
            seed: 1,
            games,
            duplicates: 0,
            attackers_win: games - defenders,
            defenders_win: defenders,
            draws: 0,
            attackers_rate: (games - defenders) as f64 / games as f64,
            defenders_rate: defenders as f64 / games as f64,
            draws_rate: 0.0,
            attackers_ci: [1.0 - hi, 1.0 - lo],
            defenders_ci: [lo, hi],
            draws_ci: [0.0, 0.0],
            mean_length: 40.0,
            median_length: 38.0,
            length_histogram: Vec::new(),
            reasons: BTreeMap::from([("corner escape".to_string(), defenders), ("king captured".to_string(), games - defenders)]),
            human: None,
            provenance: None,
        }
    }

    fn row() -> AtlasRow {
        AtlasRow {
            preset: "brandubh".into(),
            board: "7x7".into(),
            description: "Brandubh".into(),
            strength: vec![StrengthRow {
                agent: "az:model=models/atlas/brandubh,sims=64".into(),
                opponent: "mcts:sims=400".into(),
                seed: 41,
                as_attackers: Wdl { win: 49, draw: 0, loss: 1 },
                as_defenders: Wdl { win: 50, draw: 0, loss: 0 },
                forfeits: 0,
                voids: 0,
                disagreements: 0,
                file: "brandubh/matches/vs-mcts400.json".into(),
            }],
            balance: vec![balance_row(64, 60, 100), balance_row(256, 55, 100)],
            handicap: Some(HandicapSummary {
                agent: "az:model=x,sims=64".into(),
                factors: vec![2, 4],
                games_per_factor: 40,
                k_even: Some(2.5),
                k_interval: Some((1.9, 3.3)),
                verdict: "even".into(),
            }),
        }
    }

    /// The handicap chart's axis holds presets where either side needs the larger search, with
    /// their intervals.
    #[test]
    fn the_handicap_axis_holds_both_signs_and_every_interval() {
        // Ard Ri as first reconstructed (the defenders need 44x: log2 -5.4, no interval), Magpie
        // (the attackers need 5.2x) and a preset close to even.
        let values = [(-5.45, -5.45, -5.45), (2.37, 1.45, 3.30), (0.38, -0.1, 0.85)];
        let (lo, hi) = handicap_axis(&values);
        assert!(lo < -5.45 && hi > 3.30, "{lo}..{hi}");
        assert!(hi - 3.30 >= 0.25, "room above the highest interval for the legend: {hi}");
        // A chart of positive handicaps still shows 0.
        let (lo, _) = handicap_axis(&[(1.0, 0.5, 1.5)]);
        assert!(lo < 0.0 && lo > -0.5, "{lo}");
    }

    /// A kept measurement is found again under its key only: another seed, other factors or
    /// another model's hash find nothing, and so does a file that does not read.
    #[test]
    fn a_kept_measurement_is_found_only_under_its_own_key() {
        let out = std::env::temp_dir().join(format!("tafl-lab-atlas-kept-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let key = MeasureKey { model_sha256: "ab".repeat(32), sims: vec![64, 256], factors: vec![2, 4, 8], games: 100, seed: 51, opening_plies: 2 };
        let r = row();
        let m = Measured { key: key.clone(), balance: r.balance.clone(), handicap: r.handicap.clone() };
        assert_eq!(kept(&out, "brandubh", &key), None, "nothing kept yet");
        keep(&out, "brandubh", &m).expect("kept");
        assert_eq!(kept(&out, "brandubh", &key), Some(m));
        assert_eq!(kept(&out, "magpie", &key), None, "another preset");
        for other in [
            MeasureKey { seed: 52, ..key.clone() },
            MeasureKey { factors: vec![2, 4], ..key.clone() },
            MeasureKey { model_sha256: "cd".repeat(32), ..key.clone() },
        ] {
            assert_eq!(kept(&out, "brandubh", &other), None, "{other:?}");
        }
        std::fs::write(out.join("presets/brandubh.json"), "{ not json").unwrap();
        assert_eq!(kept(&out, "brandubh", &key), None, "a broken file is measured again");
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    fn the_table_shows_each_measurement_of_a_preset() {
        let md = markdown(&[row()], "tafl-lab balance --atlas models/atlas");
        let line = md.lines().find(|l| l.starts_with("| `brandubh`")).expect("a row for the preset");
        assert!(line.contains("`mcts:sims=400`: 49-0-1 attacking, 50-0-0 defending"), "{line}");
        assert!(line.contains("64 sims: 60.0% (50.2%-69.1%) of 100"), "{line}");
        assert!(line.contains("256 sims: 55.0%"), "{line}");
        assert!(line.contains("attackers need 2.50x the search (1.90x to 3.30x)"), "{line}");
        let mut r = row();
        r.handicap.as_mut().unwrap().k_even = Some(0.5);
        r.handicap.as_mut().unwrap().k_interval = Some((0.25, 0.8));
        assert!(markdown(&[r], "c").contains("defenders need 2.00x the search (1.25x to 4.00x)"));
        assert!(line.contains("corner escape 60%, king captured 40%"), "{line}");
        assert!(line.contains("none published"), "{line}");
        assert_eq!(line.matches(" | ").count() + 2, md.lines().find(|l| l.starts_with("| preset")).unwrap().matches('|').count());
    }

    #[test]
    fn the_csv_has_a_line_per_strength_and_the_page_escapes_its_text() {
        let c = csv(&[row()]);
        assert_eq!(c.lines().count(), 3);
        assert!(c.lines().nth(1).unwrap().starts_with("brandubh,7x7,64,100,0.4000,0.6000,"), "{c}");
        let mut r = row();
        r.strength[0].opponent = "otep:cmd=<x>".into();
        let page = html(&[r], "a & b", "<svg></svg>");
        assert!(page.contains("<code>otep:cmd=&lt;x&gt;</code>") && page.contains("a &amp; b") && page.contains("<svg></svg>"));
    }

    #[test]
    fn match_files_beside_a_model_become_its_strength_rows() {
        let dir = std::env::temp_dir().join(format!("tafl-atlas-{}", std::process::id()));
        let model = dir.join("brandubh");
        std::fs::create_dir_all(model.join("matches")).unwrap();
        std::fs::write(model.join("model.safetensors"), b"not read here").unwrap();
        std::fs::write(
            model.join("matches/vs-mcts400.json"),
            r#"{"a":"az:model=m,sims=64","b":"mcts:sims=400","seed":41,"a_as_attackers":{"win":9,"draw":0,"loss":1},"a_as_defenders":{"win":10,"draw":0,"loss":0},"forfeits":1,"voids":0,"disagreements":0}"#,
        )
        .unwrap();
        let (p, training) = presets(&dir).unwrap();
        assert_eq!((p.len(), training.len()), (1, 0));
        let s = strength(&dir, &p[0]).unwrap();
        assert_eq!(s[0].as_attackers, Wdl { win: 9, draw: 0, loss: 1 });
        assert_eq!(s[0].forfeits, 1);
        assert_eq!(s[0].file, "brandubh/matches/vs-mcts400.json");
        std::fs::write(model.join("matches/bad.json"), "{}").unwrap();
        let e = strength(&dir, &p[0]).unwrap_err().to_string();
        assert!(e.contains("bad.json") && e.contains("not a `match --json` output"), "{e}");
        // A model whose run is still going is left out and named; a finished one is in.
        let tablut = dir.join("tablut");
        std::fs::create_dir_all(tablut.join("run")).unwrap();
        std::fs::write(tablut.join("model.safetensors"), b"x").unwrap();
        std::fs::write(tablut.join("run/state.json"), r#"{"generation": 9, "wall_seconds": 1952.2, "selfplay_games": 432}"#).unwrap();
        assert_eq!(presets(&dir).unwrap().1, ["tablut"]);
        std::fs::write(tablut.join("run/state.json"), r#"{"generation": 90, "wall_seconds": 7190.0, "selfplay_games": 4320, "finished": true}"#).unwrap();
        assert_eq!(presets(&dir).unwrap().0.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["brandubh", "tablut"]);
        std::fs::create_dir_all(dir.join("not-a-preset")).unwrap();
        std::fs::write(dir.join("not-a-preset/model.safetensors"), b"x").unwrap();
        assert!(presets(&dir).unwrap_err().to_string().contains("not named after a preset"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
