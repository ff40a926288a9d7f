//! Run-config and variant-TOML errors name the right line; budget overrides are checked; a
//! resumed run is sized from its saved config; a config saved with the older names of the
//! search settings reads to the same settings.

use crate::common;

use common::old_names::with_old_names;
use tafl_lab::rules::Variant;
use tafl_lab::search::{RootPolicy, SearchConfig};
use tafl_lab::train::{self, Overrides, RunConfig};

const SMOKE: &str = include_str!("../../configs/runs/smoke.toml");

/// `text` with `line` inserted so that it becomes line `n` (1-based).
fn with_line(text: &str, n: usize, line: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(n - 1, line);
    lines.join("\n") + "\n"
}

fn run_config_error(text: &str) -> String {
    RunConfig::from_toml(text, "bad.toml").expect_err("the config is bad").to_string()
}

#[test]
fn run_config_errors_at_column_0_name_their_own_line() {
    let cases = [
        // An unknown key at the start of line 5.
        (with_line(SMOKE, 5, "unknown_key = 1"), 5, "unknown field `unknown_key`"),
        // An unknown table at the start of line 7.
        (SMOKE.replace("[net]", "[nett]"), 7, "unknown field `nett`"),
        // A duplicate key at the start of line 5.
        (with_line(SMOKE, 5, "seed = 8"), 5, "duplicate key"),
        // The first line.
        (with_line(SMOKE, 1, "oops = true"), 1, "unknown field `oops`"),
    ];
    for (text, line, needle) in cases {
        assert_eq!(text.lines().nth(line - 1).map(|l| l.starts_with(['u', '[', 's', 'o'])), Some(true));
        let e = run_config_error(&text);
        assert!(e.starts_with(&format!("bad.toml: line {line}: ")), "line {line} expected: {e}");
        assert!(e.contains(needle), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    // A span inside a line (a value of the wrong type) keeps its line too.
    let text = SMOKE.replace("games = 2", "games = \"two\"");
    let line = text.lines().position(|l| l.contains("\"two\"")).unwrap() + 1;
    assert!(run_config_error(&text).contains(&format!("line {line}: ")), "{}", run_config_error(&text));
}

const VARIANT: &str = "name = \"mini\"\nbase = \"brandubh\"\ndescription = \"a test\"\nsource = \"here\"\n";

#[test]
fn variant_toml_errors_at_column_0_name_their_own_line() {
    Variant::from_toml_str(VARIANT, "mini.toml").expect("the base text is a variant");
    for (bad, needle) in [("name = \"again\"", "duplicate key"), ("= 3", "")] {
        let text = format!("{VARIANT}{bad}\n");
        let e = Variant::from_toml_str(&text, "mini.toml").expect_err("bad TOML").to_string();
        assert!(e.contains("mini.toml") && e.contains("line 5: "), "line 5 expected: {e}");
        assert!(e.contains(needle), "{e}");
    }
}

#[test]
fn budget_overrides_must_mean_something() {
    let bad = |o: Overrides, needle: &str| {
        let e = o.validate().expect_err("refused").to_string();
        assert!(e.contains(needle) && e.lines().count() == 1, "{e}");
    };
    for m in [-5.0, 0.0, f64::NAN, f64::INFINITY, -0.0] {
        bad(Overrides { minutes: Some(m), generations: None, init: None }, "--minutes");
    }
    bad(Overrides { minutes: None, generations: Some(0), init: None }, "--generations 0");
    for ok in [Overrides::default(), Overrides { minutes: Some(0.05), generations: Some(1), init: None }] {
        ok.validate().unwrap();
    }
    // The config's own budget: NaN is no number of minutes.
    let e = run_config_error(&SMOKE.replace("generations = 2", "generations = 2\nminutes = nan"));
    assert!(e.contains("budget.minutes"), "{e}");
}

#[test]
fn a_resumed_run_is_sized_from_its_saved_config() {
    let dir = std::env::temp_dir().join(format!("tafl-lab-test-effective-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let given = RunConfig::from_toml(SMOKE, "smoke.toml").unwrap();
    let mut saved = given.clone();
    saved.selfplay.threads = 4;
    saved.name = "saved".into();
    // No run yet: the given config; resuming nothing is an error.
    assert_eq!(train::effective_config(Some(given.clone()), &dir, false).unwrap(), given);
    assert!(train::effective_config(Some(given.clone()), &dir, true).unwrap_err().to_string().contains("nothing to resume"));
    std::fs::write(dir.join("config.toml"), toml::to_string(&saved).unwrap()).unwrap();
    std::fs::write(dir.join("state.json"), "{\"generation\": 3, \"wall_seconds\": 1.0, \"selfplay_games\": 12}").unwrap();
    let cfg = train::effective_config(Some(given.clone()), &dir, true).unwrap();
    assert_eq!(cfg, saved, "the saved config, not the command line's");
    assert_eq!(train::torch_threads(&cfg, 8), 2);
    assert_eq!(train::torch_threads(&given, 8), 8);
    assert_eq!(train::torch_threads(&cfg, 2), 1);
    // threads = 0: one worker per core, one torch thread each.
    let mut per_core = given.clone();
    per_core.selfplay.threads = 0;
    assert_eq!((per_core.selfplay.workers(8), train::torch_threads(&per_core, 8)), (8, 1));
    assert_eq!((per_core.selfplay.workers(1), train::torch_threads(&per_core, 1)), (1, 1));
    assert!(train::effective_config(Some(given), &dir, false).unwrap_err().to_string().contains("--resume"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A committed run's saved config, written before the settings had one name each.
const OLD_NAMES: &str = include_str!("../fixtures/run-config-old-names.toml");

#[test]
fn a_config_saved_with_the_old_names_reads_to_the_same_settings() {
    for old in ["simulations = 48", "c_puct = 1.5", "leaves_per_tree = 8", "fast_simulations = 16", "attacker_simulations = 192", "simulations = 64"] {
        assert!(OLD_NAMES.contains(&format!("\n{old}\n")), "the fixture says {old}");
    }
    let cfg = RunConfig::from_toml(OLD_NAMES, "config.toml").unwrap();
    let s = &cfg.selfplay.play;
    let search = SearchConfig {
        sims: 48,
        cpuct: 1.5,
        fpu_reduction: 0.2,
        leaves_per_tree: 8,
        noise: None,
        root: RootPolicy::gumbel(16),
        escape_probe: true,
        fork_probe: false,
        contempt: 0.0,
        forced_playouts: 0.0,
    };
    assert_eq!(s.search, search);
    assert_eq!((s.fast_sims, s.attacker_sims, s.positions_per_call, s.temperature_plies), (16, Some(192), 256, 8));
    assert_eq!(cfg.eval.sims, 64);
    // Written again, it is in today's names and reads back equal, in those names or the old.
    let written = toml::to_string(&cfg).unwrap();
    for new in [
        "\nsims = 48\n",
        "\ncpuct = 1.5\n",
        "\nleaves_per_tree = 8\n",
        "\npositions_per_call = 256\n",
        "\nfast_sims = 16\n",
        "\nattacker_sims = 192\n",
        "\nsims = 64\n",
    ] {
        assert!(written.contains(new), "{new:?} in {written}");
    }
    for old in ["simulations", "c_puct", "\nbatch ="] {
        assert!(!written.contains(old), "{old} in {written}");
    }
    assert_eq!(RunConfig::from_toml(&written, "written.toml").unwrap(), cfg);
    assert_eq!(RunConfig::from_toml(&with_old_names(&written), "old.toml").unwrap(), cfg);
    // The agent spec the run evaluates with is the same as well.
    let model = std::path::Path::new("m.safetensors");
    assert_eq!(cfg.eval_spec(model).to_string(), "az:model=m.safetensors,sims=64");
    // One setting under both names is an error that names it.
    let both = OLD_NAMES.replace("simulations = 48\n", "simulations = 48\nsims = 48\n");
    assert!(run_config_error(&both).contains("duplicate field `sims`"), "{}", run_config_error(&both));
}
