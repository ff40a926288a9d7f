//! `models/README.md` matches what ships: every folder under `models/` is named in its tables
//! (the atlas's folders in `models/atlas/README.md`'s), and every path those tables name
//! exists, so the page cannot go on describing a model that is gone (it once described a
//! brandubh model that no longer shipped).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tafl_lab::nn::checkpoint;

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models")
}

/// The backticked words of the first column of every table row of `page`.
fn first_column_words(page: &str) -> Vec<String> {
    page.lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            let cell = l.trim_start_matches('|').split('|').next().unwrap_or("");
            cell.split('`').skip(1).step_by(2).map(str::to_string).collect::<Vec<_>>()
        })
        .collect()
}

/// The folders under `dir`, one or two levels down, relative to it (`brandubh/`,
/// `brandubh/run/`), leaving out the `models/` folders of run states.
fn folders(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for a in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        let name = a.file_name().unwrap().to_string_lossy().to_string();
        out.insert(format!("{name}/"));
        for b in std::fs::read_dir(&a).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
            let sub = b.file_name().unwrap().to_string_lossy().to_string();
            // A run state's models/ and the shipping gate's records, which the ships table names.
            if sub != "models" && sub != "gate" {
                out.insert(format!("{name}/{sub}/"));
            }
        }
    }
    out
}

#[test]
fn models_readme_names_every_folder_and_only_paths_that_exist() {
    let dir = models();
    let words = first_column_words(&std::fs::read_to_string(dir.join("README.md")).unwrap());
    let named: BTreeSet<&str> = words.iter().map(String::as_str).filter(|w| w.contains('/')).collect();
    for w in &named {
        if !w.contains('<') {
            assert!(dir.join(w).exists(), "models/README.md names `{w}`, which is not under models/");
        }
    }
    // `atlas/<variant>/` covers the atlas's folders, which its own page lists.
    let missing: Vec<String> = folders(&dir).into_iter().filter(|f| !f.starts_with("atlas/") && !named.contains(f.as_str())).collect();
    assert!(missing.is_empty(), "folders under models/ that models/README.md does not name: {missing:?}");
    assert!(named.contains("atlas/<variant>/"), "models/README.md has a row for the atlas");
}

#[test]
fn the_atlas_page_has_a_row_for_every_trained_preset_and_no_other() {
    let dir = models().join("atlas");
    let page = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let rows: BTreeSet<String> = first_column_words(&page).into_iter().collect();
    let trained: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("model.safetensors").exists())
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    assert!(!trained.is_empty());
    assert_eq!(rows, trained, "models/atlas/README.md's rows against the folders holding a model.safetensors");
    for v in &trained {
        assert!(dir.join(v).join("run").join("state.json").exists(), "models/atlas/{v} keeps its resume state");
    }
}

/// The default a folder's `az:model=models/FOLDER` loads, as the loader resolves a folder
/// (`latest`, else `model.safetensors`), relative to the folder.
fn default_of(dir: &Path) -> Option<String> {
    if let Ok(text) = std::fs::read_to_string(dir.join("latest")) {
        return Some(text.trim().to_string());
    }
    dir.join("model.safetensors").exists().then(|| "model.safetensors".to_string())
}

/// The rows between the ships markers: (folder, default file, sha256 prefix).
fn ships_table(page: &str) -> Vec<(String, String, String)> {
    let begin = page.find("<!-- ships: begin -->").expect("a ships: begin marker");
    let end = page.find("<!-- ships: end -->").expect("a ships: end marker");
    page[begin..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<String> = l.split('|').map(|c| c.trim().trim_matches('`').to_string()).collect();
            (cells[1].trim_end_matches('/').to_string(), cells[2].clone(), cells[3].clone())
        })
        .collect()
}

fn sha256_prefix(path: &Path) -> String {
    let f = tafl_lab::nn::checkpoint::model_file(path).unwrap();
    f.sha256[..16].to_string()
}

/// The table of what ships (written by scripts/ship.sh) names each folder's default as the
/// loader resolves it, with that file's hash: a default replaced by hand shows here.
#[test]
fn the_ships_table_names_each_default_and_its_hash() {
    let dir = models();
    let rows = ships_table(&std::fs::read_to_string(dir.join("README.md")).unwrap());
    let mut want = Vec::new();
    for d in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        if let Some(file) = default_of(&d) {
            want.push((d.file_name().unwrap().to_string_lossy().to_string(), file.clone(), sha256_prefix(&d.join(&file))));
        }
    }
    want.sort();
    assert_eq!(rows, want, "models/README.md's ships table against the files (rewrite it with scripts/ship.sh --readme)");
}

/// The gate ships a candidate that beats the default by SPRT, and refuses one that does not,
/// keeping a record either way; the ships table follows. Played on a scratch copy of a
/// models folder: a network with random weights as the default, the shipped brandubh network
/// as the candidate (then the other way round, where the SPRT cannot accept in 4 games).
#[test]
fn the_shipping_gate_ships_only_a_candidate_that_wins_its_sprt() {
    let d = crate::common::cli::scratch("ship");
    let folder = d.join("brandubh");
    std::fs::create_dir_all(&folder).unwrap();
    crate::common::cli::new_model(&folder.join("model.safetensors"), "brandubh");
    std::fs::write(d.join("README.md"), "# models\n\n<!-- ships: begin -->\n<!-- ships: end -->\n\nafter\n").unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ship = |candidate: &Path, games: &str| {
        std::process::Command::new("bash")
            .arg(root.join("scripts/ship.sh"))
            .args(["brandubh", candidate.to_str().unwrap(), "8", games, "5"])
            .env("MODELS_DIR", &d)
            .env("TAFL_LAB_BIN", env!("CARGO_BIN_EXE_tafl-lab"))
            .output()
            .unwrap()
    };
    let strong = root.join("models/brandubh/model.safetensors");
    let o = ship(&strong, "200");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&o.stderr));
    let shipped = default_of(&folder).expect("latest names the new default");
    assert!(shipped.ends_with("-model.safetensors") && shipped != "model.safetensors", "{shipped}");
    assert_eq!(sha256_prefix(&folder.join(&shipped)), sha256_prefix(&strong));
    let records: Vec<PathBuf> = std::fs::read_dir(folder.join("gate")).unwrap().map(|e| e.unwrap().path()).collect();
    let json = records.iter().find(|p| p.extension().is_some_and(|e| e == "json")).expect("a gate record");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(v["sprt"]["decision"], "accept_h1");
    let page = std::fs::read_to_string(d.join("README.md")).unwrap();
    assert_eq!(ships_table(&page), [("brandubh".to_string(), shipped.clone(), sha256_prefix(&strong))]);
    assert!(page.ends_with("<!-- ships: end -->\n\nafter\n"), "the rest of the page is kept: {page}");
    // The record cell is the link to the gate's record and nothing else.
    let gate = json.strip_prefix(&d).unwrap().to_string_lossy().to_string();
    let row = page.lines().find(|l| l.starts_with("| `brandubh/`")).expect("the brandubh row");
    assert!(row.ends_with(&format!("| [`{gate}`]({gate}) |")), "{row}");
    // A random network against it: no decision in 4 games, so nothing ships.
    let weak = d.join("weak.safetensors");
    crate::common::cli::new_model(&weak, "brandubh");
    let o = ship(&weak, "4");
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("not shipped"));
    assert_eq!(default_of(&folder).unwrap(), shipped, "the default is unchanged");
    // A candidate with the training-only ownership head (the strong network plus a fresh
    // head, as a run with `train.ownership_weight` saves it) ships without the head; against
    // the random network again (`latest` removed).
    std::fs::remove_file(folder.join("latest")).unwrap();
    let with_head = d.join("with-head.safetensors");
    let (net, meta) = checkpoint::load_as(&strong, None, checkpoint::read_meta(&strong).unwrap().net.with_ownership(true), tch::Device::Cpu).unwrap();
    checkpoint::save(&net, &meta, &with_head).unwrap();
    let o = ship(&with_head, "200");
    assert_eq!(o.status.code(), Some(0), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let headless = folder.join(default_of(&folder).expect("the new default"));
    assert!(headless.to_string_lossy().ends_with("-with-head.safetensors"), "{}", headless.display());
    let (shipped_net, shipped_meta) = checkpoint::load(&headless, None, tch::Device::Cpu).unwrap();
    let (a, b) = (shipped_net.vs.variables(), net.vs.variables());
    assert!(!shipped_meta.net.ownership && a.len() + 2 == b.len() && a.iter().all(|(k, t)| t.equal(&b[k])), "the network without its head");
    // Bad arguments: one line, exit 2.
    let o = ship(&d.join("nosuch.safetensors"), "4");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nosuch.safetensors: no such file"));
    let _ = std::fs::remove_dir_all(&d);
}
