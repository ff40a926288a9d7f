//! The game viewer (`tafl-lab view`) and the HTML reports, checked in a real browser: headless
//! Chromium (scripts/browser.sh installs it and exports TAFL_LAB_CHROMIUM) loads each page from
//! disk, replays key presses given in the address (`#ply=5&keys=ArrowLeft,End`), and the DOM
//! it dumps is compared with the rules: the pieces on the board with `tafl-lab show` after the
//! same moves, captured pieces gone, the move counter, the final status. Screenshots of each
//! kind of page are taken and their size checked. Without a browser the tests that need one
//! are skipped with one line saying why (see [`common::needs`]; under `CI=true` they fail).

use crate::common;

use common::cli::{fails_with, ok, run, scratch};
use common::{require, Need};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use tafl_lab::rules::{Move, Position, Square, Variant};
use tafl_lab::selfplay::shard::{self, Shard, StoredGame, StoredPly};

const VARIANTS: [&str; 3] = ["brandubh", "copenhagen", "alea-evangelii"];

/// The browser, which each test that loads a page asked for first ([`require`]).
fn chromium() -> PathBuf {
    common::needs::locate(Need::Chromium).unwrap_or_else(|why| panic!("no browser: {why}"))
}

/// Chromium's arguments for one headless run with a profile of its own (tests run in
/// parallel; two browsers may not share a profile).
fn browser(tag: &str) -> (Command, PathBuf) {
    let profile = scratch(&format!("view-profile-{tag}"));
    let mut c = Command::new(chromium());
    c.args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run", "--mute-audio"]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    (c, profile)
}

fn url(page: &Path, fragment: &str) -> String {
    let abs = std::fs::canonicalize(page).unwrap();
    format!("file://{}#{fragment}", abs.display())
}

/// The DOM after the page loaded at `#fragment` (and replayed its keys).
fn load(page: &Path, fragment: &str) -> String {
    let tag = format!("{}-{}", page.file_stem().unwrap().to_string_lossy(), fragment.len());
    let (mut c, profile) = browser(&tag);
    let out = c
        .args(["--virtual-time-budget=3000", "--dump-dom", &url(page, fragment)])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} ({e}): run scripts/browser.sh", chromium().display()));
    let _ = std::fs::remove_dir_all(profile);
    let html = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(html.contains("data-ready=\"1\""), "the page's script did not finish: {}", String::from_utf8_lossy(&out.stderr));
    html
}

/// A screenshot of `page`: (width, height, bytes) of the PNG.
fn screenshot(page: &Path, fragment: &str, png: &Path) -> (u32, u32, usize) {
    let (mut c, profile) = browser(&format!("shot-{}", png.file_stem().unwrap().to_string_lossy()));
    let out = c.args(["--window-size=1280,800", &format!("--screenshot={}", png.display()), &url(page, fragment)]).output().unwrap();
    let _ = std::fs::remove_dir_all(profile);
    let bytes = std::fs::read(png).unwrap_or_else(|e| panic!("no screenshot ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20), bytes.len())
}

/// The text of the element with `id` (up to its first child tag).
fn text_of(dom: &str, id: &str) -> String {
    let at = dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no #{id}"));
    let start = at + dom[at..].find('>').unwrap() + 1;
    let end = start + dom[start..].find('<').unwrap();
    dom[start..end].replace("&amp;", "&")
}

/// Attribute `name` of one tag's text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let k = format!(" {name}=\"");
    let s = tag.find(&k)? + k.len();
    Some(&tag[s..s + tag[s..].find('"')?])
}

/// The tags named `name` in `dom`.
fn tags<'a>(dom: &'a str, name: &str) -> Vec<&'a str> {
    dom.match_indices(&format!("<{name} ")).map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap()]).collect()
}

/// The pieces drawn on the board: (square, a/d/k).
fn board_pieces(dom: &str) -> BTreeSet<(String, char)> {
    tags(dom, "circle")
        .into_iter()
        .filter_map(|t| {
            let class = attr(t, "class")?;
            let kind = class.strip_prefix("piece ")?;
            let c = match kind {
                "attacker" => 'a',
                "defender" => 'd',
                "king" => 'k',
                other => panic!("piece class {other}"),
            };
            Some((attr(t, "data-sq")?.to_string(), c))
        })
        .collect()
}

/// The pieces `tafl-lab show` prints after `moves`.
fn show_pieces(variant: &str, moves: &[Move]) -> BTreeSet<(String, char)> {
    let list = moves.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" ");
    let text = ok(&run(&["show", "--variant", variant, "--moves", &list]));
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(rank) = words.next().and_then(|w| w.parse::<u8>().ok()) else { continue };
        for (file, cell) in words.take_while(|w| w.parse::<u8>().is_err()).enumerate() {
            if let c @ ('a' | 'd' | 'k') = cell.chars().next().unwrap() {
                out.insert((format!("{}{rank}", (b'a' + file as u8) as char), c));
            }
        }
    }
    assert!(out.iter().any(|p| p.1 == 'k'), "no king in `show` output:\n{text}");
    out
}

/// A random legal game (xorshift over the legal moves) of at most `max` plies.
fn random_game(variant: &Arc<Variant>, seed: u64, max: usize) -> (Vec<Move>, Vec<Vec<Square>>) {
    let mut pos = Position::start(variant.clone());
    let mut x = seed.max(1);
    let (mut moves, mut caps) = (Vec::new(), Vec::new());
    while moves.len() < max && pos.outcome().is_none() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let legal = pos.legal_moves();
        let mv = legal[(x % legal.len() as u64) as usize];
        caps.push(pos.play(mv).unwrap());
        moves.push(mv);
    }
    (moves, caps)
}

/// A random game with a capture, and the first ply that captures.
fn game_with_capture(variant: &Arc<Variant>) -> (Vec<Move>, usize, Vec<Square>) {
    for seed in 1..200 {
        let (moves, caps) = random_game(variant, seed, 400);
        if let Some(i) = caps.iter().position(|c| !c.is_empty()) {
            return (moves, i + 1, caps[i].clone());
        }
    }
    panic!("no random game with a capture");
}

fn view(args: &[&str]) -> String {
    let mut a = vec!["view"];
    a.extend_from_slice(args);
    ok(&run(&a))
}

/// Self-contained: no file or address outside the page (the SVG namespace is a name, not a
/// fetch).
fn assert_self_contained(page: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    let rest = html.replace("http://www.w3.org/2000/svg", "");
    for bad in ["http://", "https://", "<link", " src=", "@import", "url("] {
        assert!(!rest.contains(bad), "{} refers to something outside it: {bad}", page.display());
    }
}

#[test]
fn game_record_pages_show_the_rules_board_on_three_board_sizes() {
    if require(Need::Chromium).is_none() {
        return;
    }
    let d = scratch("view-records");
    std::fs::create_dir_all(&d).unwrap();
    for name in VARIANTS {
        let v = Arc::new(Variant::preset(name).expect("preset"));
        let (moves, cap_ply, captured) = game_with_capture(&v);
        let file = d.join(format!("{name}.txt"));
        std::fs::write(&file, moves.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" ")).unwrap();
        let page = d.join(format!("{name}.html"));
        view(&[file.to_str().unwrap(), "--variant", name, "--out", page.to_str().unwrap()]);
        assert_self_contained(&page);
        // Two plies past the capture, then two presses of the left arrow.
        let dom = load(&page, &format!("ply={}&keys=ArrowLeft,ArrowLeft", cap_ply + 2));
        assert_eq!(text_of(&dom, "counter"), format!("ply {cap_ply} / {}", moves.len()), "{name}");
        let shown = board_pieces(&dom);
        assert_eq!(shown, show_pieces(name, &moves[..cap_ply]), "{name}: the page's board after {cap_ply} plies");
        for sq in &captured {
            assert!(!shown.iter().any(|(s, _)| *s == sq.to_string()), "{name}: captured {sq} still on the board");
            assert!(
                tags(&dom, "g").iter().any(|t| attr(t, "class") == Some("captured") && attr(t, "data-sq") == Some(&sq.to_string())),
                "{name}: {sq} not marked captured"
            );
        }
        let squares = tags(&dom, "rect").into_iter().filter(|t| attr(t, "class").is_some_and(|c| c.starts_with("sq "))).count();
        let n = v.geometry.size() as usize;
        assert_eq!(squares, n * n, "{name}: {n}x{n} squares");
        let kinds = |k: &str| tags(&dom, "rect").into_iter().filter(|t| attr(t, "class") == Some(k)).count();
        assert_eq!(kinds("sq corner"), v.geometry.squares().filter(|&s| v.is_corner(s)).count(), "{name}: corners");
        assert_eq!(kinds("sq throne"), v.geometry.squares().filter(|&s| v.is_throne(s) && !v.is_corner(s)).count(), "{name}: throne");
        let mover = if cap_ply % 2 == 0 { v.rules.first } else { v.rules.first.opponent() };
        assert!(text_of(&dom, "status").to_lowercase().starts_with(&format!("{} to move", mover.name())), "{name}: {}", text_of(&dom, "status"));
        assert!(dom.contains(&format!("data-ply=\"{cap_ply}\" class=\"cap cur\"")), "{name}: the move list marks the capture and the current move");
    }
}

#[test]
fn the_final_position_names_the_result_and_keys_step_through() {
    if require(Need::Chromium).is_none() {
        return;
    }
    let d = scratch("view-final");
    std::fs::create_dir_all(&d).unwrap();
    let page = d.join("fixture.html");
    view(&["tests/fixtures/games/brandubh-king-captured.txt", "--out", page.to_str().unwrap()]);
    let dom = load(&page, "keys=End,ArrowLeft,Home,ArrowRight,End");
    assert_eq!(text_of(&dom, "counter"), "ply 7 / 7");
    assert_eq!(text_of(&dom, "status"), "Attackers win: the king was captured (king_captured)");
    // The rules leave a captured king on its square (as `show` does); the page marks it.
    let moves: Vec<Move> = "g4-g2 e4-e6 a4-a6 d4-e4 f4-f6 e4-e1 f6-f1"
        .split(' ')
        .map(|m| Move::parse(m, Variant::preset("brandubh").expect("preset").geometry).unwrap())
        .collect();
    assert_eq!(board_pieces(&dom), show_pieces("brandubh", &moves));
    assert!(tags(&dom, "g").iter().any(|t| attr(t, "class") == Some("captured") && attr(t, "data-piece") == Some("king") && attr(t, "data-sq") == Some("e1")));
    let dom = load(&page, "keys=End,ArrowLeft,ArrowLeft,ArrowRight");
    assert_eq!(text_of(&dom, "counter"), "ply 6 / 7");
    assert_eq!(text_of(&dom, "status"), "Attackers to move");
    let png = d.join("fixture.png");
    let (w, h, bytes) = screenshot(&page, "ply=7", &png);
    assert_eq!((w, h), (1280, 800));
    assert!(bytes > 20_000, "a drawn board, not a blank page: {bytes} bytes");
}

/// Records whose games end by a resignation (22 plies, the attackers resign) and on time (21
/// plies, the defenders' time runs out), which the rules did not end: (file, the game's line in
/// the list, the final status, the result).
const RECORDED_ENDS: [(&str, &str, &str, &str); 2] = [
    ("brandubh-resigned.txt", "line 1: defenders win (resigned), 22 plies", "Defenders win by resignation (after 22 plies)", "defenders_win"),
    ("brandubh-timeout.txt", "line 1: attackers win (timeout), 21 plies", "Attackers win on time (after 21 plies)", "attackers_win"),
];

/// The game list and the final status agree on a recorded resignation and a loss on time:
/// both a win (the list once said "unfinished, 22 plies" beside "Defenders win by
/// resignation"). Checked in the page's data, which the page shows as it is (the browser test
/// below checks the page itself).
#[test]
fn resigned_and_timed_out_records_end_the_same_in_the_list_and_the_final_status() {
    for (file, listed, status, result) in RECORDED_ENDS {
        let src = tafl_lab::view::input::read(&Path::new("tests/fixtures/games").join(file), None).unwrap();
        let data = tafl_lab::view::page::data(file, &src.games).unwrap();
        let g = &data["games"][0];
        assert_eq!(g["listed"], listed, "{file}");
        assert_eq!(g["end"], status, "{file}");
        assert_eq!(g["result"], result, "{file}: the list's colour and the final status agree");
    }
}

/// The same records in the browser: the list's line and the status at the end.
#[test]
fn resigned_and_timed_out_records_show_the_same_end_in_the_list_and_the_final_status() {
    if require(Need::Chromium).is_none() {
        return;
    }
    let d = scratch("view-recorded-ends");
    std::fs::create_dir_all(&d).unwrap();
    for (file, listed, status, _) in RECORDED_ENDS {
        let page = d.join(format!("{file}.html"));
        view(&[&format!("tests/fixtures/games/{file}"), "--out", page.to_str().unwrap()]);
        let dom = load(&page, "keys=End");
        let items: Vec<String> = dom
            .match_indices("<li data-game=")
            .map(|(i, _)| {
                let start = i + dom[i..].find('>').unwrap() + 1;
                dom[start..start + dom[start..].find('<').unwrap()].to_string()
            })
            .collect();
        assert_eq!(items, [format!("1. {listed}")], "{file}");
        assert_eq!(text_of(&dom, "status"), status, "{file}");
    }
}

#[test]
fn match_record_pages_list_every_game_with_its_end() {
    if require(Need::Chromium).is_none() {
        return;
    }
    let d = scratch("view-match");
    std::fs::create_dir_all(&d).unwrap();
    for name in VARIANTS {
        let rec = d.join(format!("{name}.txt"));
        ok(&run(&["match", "--variant", name, "--a", "random", "--b", "random", "--games", "3", "--seed", "5", "--record", rec.to_str().unwrap(), "--quiet"]));
        let page = d.join(format!("{name}.html"));
        // The record names its variant on its first line: no --variant needed.
        view(&[rec.to_str().unwrap(), "--out", page.to_str().unwrap()]);
        assert_self_contained(&page);
        let text = std::fs::read_to_string(&rec).unwrap();
        assert_eq!(text.lines().next().unwrap(), format!("# variant: {name}"));
        let header = text.lines().filter(|l| l.starts_with("# game ")).nth(1).unwrap();
        let end = header.rsplit_once("; ").unwrap().1; // e.g. `defenders win (corner_escape)`
        let plies = text.lines().nth(4).unwrap().split_whitespace().count();
        let dom = load(&page, "game=2&keys=ArrowDown,ArrowUp,End");
        assert_eq!(tags(&dom, "li").iter().filter(|t| attr(t, "data-game").is_some()).count(), 3, "{name}");
        assert_eq!(text_of(&dom, "counter"), format!("ply {plies} / {plies}"), "{name}");
        let status = text_of(&dom, "status");
        let reason = end.rsplit_once('(').unwrap().1.trim_end_matches(')');
        assert!(status.ends_with(&format!("({reason})")), "{name}: `{status}` for `{end}`");
        let winner = end.split(" win").next().unwrap();
        assert!(status.to_lowercase().starts_with(if end.starts_with("draw") { "draw" } else { winner }), "{name}: `{status}` for `{end}`");
    }
    let png = d.join("alea.png");
    let (w, h, bytes) = screenshot(&d.join("alea-evangelii.html"), "ply=30", &png);
    assert_eq!((w, h), (1280, 800));
    assert!(bytes > 20_000, "{bytes} bytes");
}

/// A shard of random games with a made-up search (policy and value) on every ply.
fn write_shard(v: &Arc<Variant>, path: &Path, games: u64) -> Vec<Vec<StoredPly>> {
    let mut stored = Vec::new();
    for seed in 0..games {
        let (moves, _) = random_game(v, seed + 11, 80);
        let mut pos = Position::start(v.clone());
        let mut plies = Vec::new();
        for (i, &mv) in moves.iter().enumerate() {
            let legal = pos.legal_moves();
            let policy = legal.iter().enumerate().map(|(k, &m)| (shard::pack(m), if m == mv { 5.0 } else { 1.0 / (k + 2) as f32 })).collect();
            plies.push(StoredPly {
                mv: shard::pack(mv),
                full: i % 3 != 2,
                value: 0.25 - (i as f32) / 1000.0,
                policy: if i % 3 == 2 { vec![] } else { policy },
            });
            pos.play(mv).unwrap();
        }
        stored.push(StoredGame { plies, outcome: pos.outcome().unwrap_or(tafl_lab::rules::Outcome::draw(tafl_lab::rules::Reason::PlyCap)), slot: Some(seed) });
    }
    let plies = stored.iter().map(|g| g.plies.clone()).collect();
    shard::write(path, &Shard { rules_fingerprint: v.rules_fingerprint(), model_generation: 3, writer: "trainer".into(), games: stored }).unwrap();
    plies
}

#[test]
fn self_play_pages_show_the_search() {
    if require(Need::Chromium).is_none() {
        return;
    }
    let d = scratch("view-shards");
    std::fs::create_dir_all(&d).unwrap();
    for name in VARIANTS {
        let v = Arc::new(Variant::preset(name).expect("preset"));
        let path = d.join(format!("g000003-trainer-{name}.shard"));
        let plies = write_shard(&v, &path, 2);
        let page = d.join(format!("{name}.html"));
        view(&[path.to_str().unwrap(), "--variant", name, "--out", page.to_str().unwrap()]);
        assert_self_contained(&page);
        // Ply 3 of game 2 had a full search: its best move is the move played, shown first.
        let dom = load(&page, "game=2&ply=3");
        let best = shard::unpack(plies[1][3].mv).to_string();
        let rows: Vec<&str> = tags(&dom, "tr").into_iter().filter_map(|t| attr(t, "data-move")).collect();
        assert_eq!(rows.len(), 5, "{name}: the top 5 moves");
        assert_eq!(rows[0], best, "{name}");
        assert!(tags(&dom, "tr").iter().any(|t| attr(t, "data-move") == Some(best.as_str()) && attr(t, "class") == Some("played")));
        assert!(text_of(&dom, "value").contains("+0.25"), "{name}: {}", text_of(&dom, "value"));
        assert!(tags(&dom, "path").iter().any(|t| attr(t, "data-move") == Some(best.as_str())), "{name}: an arrow for the best move");
    }
    // A run directory: its config names the variant; a truncated shard is skipped, not fatal.
    let run_dir = d.join("run");
    std::fs::create_dir_all(run_dir.join("games")).unwrap();
    std::fs::copy("configs/runs/smoke.toml", run_dir.join("config.toml")).unwrap();
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    write_shard(&v, &run_dir.join("games/g000001-trainer-0000.shard"), 3);
    write_shard(&v, &run_dir.join("games/g000002-trainer-0000.shard"), 3);
    let bytes = std::fs::read(run_dir.join("games/g000002-trainer-0000.shard")).unwrap();
    std::fs::write(run_dir.join("games/g000002-trainer-0000.shard"), &bytes[..bytes.len() / 2]).unwrap();
    let page = d.join("run.html");
    let o = run(&["view", run_dir.to_str().unwrap(), "--out", page.to_str().unwrap()]);
    assert!(ok(&o).contains("3 games"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("g000002-trainer-0000.shard"));
    let png = d.join("shard.png");
    let (w, h, bytes) = screenshot(&d.join("copenhagen.html"), "game=1&ply=4", &png);
    assert_eq!((w, h), (1280, 800));
    assert!(bytes > 20_000, "{bytes} bytes");
}

#[test]
fn balance_reports_link_to_games_of_each_ending() {
    if require(Need::Chromium).is_none() {
        return;
    }
    let d = scratch("view-balance");
    ok(&run(&["balance", "--variants", "brandubh", "--agent", "random", "--games", "24", "--seed", "3", "--out", d.to_str().unwrap(), "--quiet"]));
    let report = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert!(report.matches("<svg").count() >= 2, "the plots are inline");
    assert_self_contained(&d.join("games.html"));
    let rows: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(d.join("balance.json")).unwrap()).unwrap();
    let sample: Vec<serde_json::Value> = std::fs::read_to_string(d.join("games.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Every way a game ended has a game to watch, linked from the report.
    for (reason, n) in rows[0]["reasons"].as_object().unwrap() {
        let linked = sample.iter().position(|g| g["ending"] == reason.as_str());
        assert_eq!(linked.is_some(), n.as_u64().unwrap() > 0, "{reason}");
        if let Some(k) = linked {
            assert!(report.contains(&format!("href=\"games.html#game={}\"", k + 1)), "{reason}");
        }
    }
    let k = sample.iter().position(|g| g["ending"] == "king_captured").expect("random attackers capture a king in 24 games");
    let dom = load(&d.join("games.html"), &format!("game={}&keys=End", k + 1));
    assert!(text_of(&dom, "status").starts_with("Attackers win: the king was captured"));
    let plies = sample[k]["moves"].as_str().unwrap().split_whitespace().count();
    assert_eq!(text_of(&dom, "counter"), format!("ply {plies} / {plies}"));
    // `view` reads the balance folder too.
    let page = d.join("again.html");
    assert!(view(&[d.to_str().unwrap(), "--out", page.to_str().unwrap()]).contains(&format!("{} games", sample.len())));
    let (w, h, bytes) = screenshot(&d.join("report.html"), "", &d.join("report.png"));
    assert_eq!((w, h), (1280, 800));
    assert!(bytes > 20_000, "{bytes} bytes");
}

#[test]
fn a_200_game_match_page_stays_under_a_megabyte() {
    let d = scratch("view-size");
    std::fs::create_dir_all(&d).unwrap();
    let rec = d.join("m.txt");
    // Random Copenhagen games run long (most reach the ply cap), a worst case for size.
    ok(&run(&["match", "--variant", "copenhagen", "--a", "random", "--b", "random", "--games", "200", "--record", rec.to_str().unwrap(), "--quiet"]));
    let page = d.join("m.html");
    assert!(view(&[rec.to_str().unwrap(), "--variant", "copenhagen", "--out", page.to_str().unwrap()]).contains("200 games"));
    let size = std::fs::metadata(&page).unwrap().len();
    let plies: usize = std::fs::read_to_string(&rec).unwrap().lines().filter(|l| !l.starts_with('#')).map(|l| l.split_whitespace().count()).sum();
    assert!(plies > 200 * 100, "long games: {plies} plies");
    assert!(size < 1_000_000, "{size} bytes for {plies} plies");
}

#[test]
fn bad_inputs_get_one_line_errors_and_no_page() {
    let d = scratch("view-errors");
    std::fs::create_dir_all(&d).unwrap();
    let out = d.join("out.html");
    let o = out.to_str().unwrap();
    let empty = d.join("empty.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    fails_with(&run(&["view", empty.to_str().unwrap(), "--out", o]), "no games");
    let cut = d.join("cut.txt");
    std::fs::write(&cut, "# game 1: A (random) plays attackers; draw (ply_cap)\nd1-d3 d5-b5\n# game 2: A (random) plays defenders; draw (ply_cap)\n").unwrap();
    fails_with(&run(&["view", cut.to_str().unwrap(), "--out", o]), "line 3: game 2 has no line of moves (truncated record?)");
    let half = d.join("half.txt");
    std::fs::write(&half, "d2-b2 d5-e5 a4-a").unwrap();
    fails_with(&run(&["view", half.to_str().unwrap(), "--out", o]), "ply 3");
    let illegal = d.join("illegal.txt");
    std::fs::write(&illegal, "d2-b2 d2-d1").unwrap();
    fails_with(&run(&["view", illegal.to_str().unwrap(), "--out", o]), "ply 2");
    fails_with(&run(&["view", "tests/fixtures/games/brandubh-king-captured.txt", "--variant", "no-such-variant", "--out", o]), "no-such-variant");
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let sh = d.join("g000001-trainer-0000.shard");
    write_shard(&v, &sh, 1);
    let bytes = std::fs::read(&sh).unwrap();
    std::fs::write(&sh, &bytes[..bytes.len() - 7]).unwrap();
    fails_with(&run(&["view", sh.to_str().unwrap(), "--variant", "brandubh", "--out", o]), "truncated?");
    fails_with(&run(&["view", d.to_str().unwrap(), "--out", o]), "neither a training run");
    fails_with(&run(&["view", "tests/fixtures/games/brandubh-king-captured.txt", "--game", "2", "--out", o]), "--game 2: the input holds 1 game");
    assert!(!out.exists(), "no page for bad input");
}

/// The balance atlas's page (`balance --atlas`) in Chromium: self-contained, one table row per
/// trained preset with every column, and the handicap plot drawn inline.
#[test]
fn the_atlas_page_shows_a_row_per_preset_and_its_plot() {
    if require(Need::Chromium).is_none() {
        return;
    }
    let d = scratch("view-atlas");
    let model = d.join("models/brandubh");
    std::fs::create_dir_all(&model).unwrap();
    common::cli::new_model(&model.join("model.safetensors"), "brandubh");
    let out = d.join("out");
    let atlas = d.join("models");
    ok(&run(&["balance", "--atlas", atlas.to_str().unwrap(), "--sims", "2", "--factors", "2", "--games", "4", "--out", out.to_str().unwrap(), "--quiet"]));
    let page = out.join("atlas.html");
    assert_self_contained(&page);
    let dom = load(&page, "");
    assert!(dom.contains("data-rows=\"1\""), "one row for the one preset");
    let row = &dom[dom.find("<tbody>").unwrap()..dom.find("</tbody>").unwrap()];
    assert_eq!(row.matches("<td>").count(), 8, "{row}");
    assert!(row.contains("<code>brandubh</code>") && row.contains("2 sims: "), "{row}");
    let plot = &dom[dom.find("id=\"plot\"").unwrap()..];
    assert!(plot.contains("<svg") && !tags(plot, "rect").is_empty(), "the handicap plot is inline");
}
