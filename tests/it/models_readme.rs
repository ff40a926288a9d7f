//! `models/README.md` matches what ships: every folder under `models/` is named in its tables
//! (the atlas's folders in `models/atlas/README.md`'s), and every path those tables name
//! exists, so the page cannot go on describing a model that is gone (it once described a
//! brandubh model that no longer shipped).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
            if sub != "models" {
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
