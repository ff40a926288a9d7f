//! Input that once broke a command: out-of-range numbers, model directories, paths with
//! commas in agent specs. Each test failed before its fix.

use crate::common;

use common::cli::{fails_with, ok, run, run_stdin, scratch};
use std::path::Path;
use tafl_lab::arena::{AgentKind, AgentSpec};
use tafl_lab::search::RootPolicy;

/// The shipped brandubh model directory.
const SHIPPED: &str = "models/brandubh";

#[test]
fn out_of_range_numbers_are_one_line_errors() {
    for s in ["-1", "nan", "inf", "0"] {
        fails_with(&run(&["bench", "rules", &format!("--seconds={s}"), "--depth", "1"]), "--seconds");
        fails_with(&run(&["bench", "search", &format!("--seconds={s}")]), "--seconds");
    }
    fails_with(&run(&["bench", "rules", "--depth", "100000000"]), "--depth");
    fails_with(&run(&["perft", "--variant", "brandubh", "--depth", "100000000"]), "--depth");
    fails_with(&run(&["perft", "--variant", "brandubh", "--depth", "4000000000", "--divide"]), "--depth");
    // Command-line syntax errors are one line too (clap's own message, first line).
    fails_with(&run(&["perft", "--depth", "many"]), "invalid value 'many' for '--depth");
    fails_with(&run(&["bench", "rules", "--seconds", "whenever"]), "invalid value 'whenever' for '--seconds");
    fails_with(&run(&["match", "--variant", "brandubh", "--a", "random", "--b", "random", "--precision", "fp16"]), "invalid value 'fp16' for '--precision");
    // A negative number after a space reaches the command's own check.
    fails_with(&run(&["bench", "rules", "--seconds", "-1"]), "--seconds -1: expected a positive number");
    fails_with(&run(&["train", "--minutes", "-5"]), "--minutes");
    for m in ["-5", "nan"] {
        fails_with(&run(&["selfplay", "--run-dir", "/nonexistent/run", &format!("--minutes={m}")]), "--minutes");
    }
}

/// `az:model=models/brandubh` (the shipped directory form) loads the network its `latest` names
/// (or its `model.safetensors`).
#[test]
fn a_shipped_model_directory_works_wherever_a_model_is_named() {
    let text = ok(&run(&["analyze", "--variant", "brandubh", "--agent", &format!("az:model={SHIPPED},sims=8"), "--device", "cpu", "--json"]));
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert!(v["best_move"].is_string(), "{v}");
    let text =
        ok(&run(&["match", "--variant", "brandubh", "--a", &format!("gumbel:model={SHIPPED},sims=4"), "--b", "random", "--games", "2", "--json", "--quiet"]));
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["games"], 2);
    let out = scratch("export-dir");
    let text = ok(&run(&["export", "--model", SHIPPED, "--out", out.to_str().unwrap()]));
    assert!(text.contains("exported brandubh"), "{text}");
    // The export folder itself names a model too (its weights.safetensors).
    ok(&run(&["analyze", "--agent", &format!("az:model={},sims=4", out.display()), "--device", "cpu"]));
    let _ = std::fs::remove_dir_all(&out);
    let o = run_stdin(&["engine", "--model", SHIPPED, "--sims", "4"], "hello\nplay attackers\ngoodbye\n");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.lines().any(|l| l.starts_with("move ")), "{text}");
    // A directory with no model in it says what it looked for.
    fails_with(&run(&["analyze", "--agent", "az:model=configs,sims=4"]), "looked for");
}

#[test]
fn agent_specs_quote_paths_with_commas_and_round_trip() {
    let spec: AgentSpec = r#"az:model="runs/a,b/latest",sims=16"#.parse().unwrap();
    assert_eq!(spec.model.as_deref(), Some(Path::new("runs/a,b/latest")));
    assert_eq!(spec.search.sims, 16);
    let spec: AgentSpec = r#"gumbel:model="odd \"name\\ here",k=4"#.parse().unwrap();
    assert_eq!(spec.model.as_deref(), Some(Path::new(r#"odd "name\ here"#)));
    assert_eq!(spec.search.root, RootPolicy::gumbel(4));
    for bad in [r#"az:model="runs/a,b"#, r#"az:model="a"b"#, r#"az:model="a\x""#] {
        assert!(bad.parse::<AgentSpec>().is_err(), "{bad}");
    }
    // Specs built as values print a canonical text that parses back to the same spec.
    for path in ["plain/model.safetensors", "runs/a,b/models/latest", "with \"quotes\"\\and,commas", " spaced "] {
        for kind in [AgentKind::Az, AgentKind::Gumbel] {
            let mut spec = AgentSpec::new(kind, Some(path.into()), 24).with_device("cpu");
            if kind == AgentKind::Gumbel {
                spec.search.root = RootPolicy::gumbel(8);
            }
            let back: AgentSpec = spec.to_string().parse().unwrap();
            assert_eq!(back, spec, "{spec}");
            assert_eq!((back.search.sims, back.device()), (24, "cpu"));
        }
    }
    // A searching agent's label always says its budget.
    assert_eq!(AgentSpec::new(AgentKind::Mcts, None, 400).to_string(), "mcts:sims=400");
    assert_eq!(AgentSpec::new(AgentKind::Mcts, None, 64).to_string(), "mcts:sims=64");
    assert_eq!(AgentSpec::new(AgentKind::Random, None, 64).to_string(), "random");
}

/// A model in a directory whose name has a comma: the engine and analyze take it, and a
/// training run in such a directory evaluates its models (its specs are built as values).
#[test]
fn model_and_run_paths_with_commas_work() {
    let d = scratch("comma,dir");
    std::fs::create_dir_all(&d).unwrap();
    let model = d.join("model.safetensors");
    std::fs::copy(Path::new(SHIPPED).join("model.safetensors"), &model).unwrap();
    let quoted = format!("az:model=\"{}\",sims=4", model.display());
    ok(&run(&["analyze", "--agent", &quoted, "--device", "cpu"]));
    let o = run_stdin(&["engine", "--model", d.to_str().unwrap(), "--sims", "4"], "play attackers\ngoodbye\n");
    assert!(String::from_utf8_lossy(&o.stdout).lines().any(|l| l.starts_with("move ")), "{}", String::from_utf8_lossy(&o.stderr));
    let run_dir = d.join("run,1");
    ok(&run(&["train", "--config", "configs/runs/smoke.toml", "--run-dir", run_dir.to_str().unwrap(), "--quiet"]));
    let metrics = std::fs::read_to_string(run_dir.join("metrics.jsonl")).unwrap();
    assert!(metrics.lines().count() == 2 && metrics.contains("\"opponent\":\"random\""), "{metrics}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Every spec's canonical text parses back to the same spec (options in any order, defaults
/// written or left out), and the defaults agents, self-play and run configs use are the search
/// layer's own.
#[test]
fn canonical_specs_round_trip_and_defaults_have_one_home() {
    use tafl_lab::search::{Noise, RootPolicy, SearchConfig};
    let texts = [
        "random",
        "mcts",
        "mcts:sims=400",
        "mcts:sims=7,cpuct=2.5,batch=3",
        "az:model=m.safetensors",
        "az:sims=64,model=m.safetensors,device=cpu,cpuct=1.5",
        "gumbel:model=\"a,b\",k=4,sims=12",
        "gumbel:k=16,model=m,batch=8,sims=32",
        "az:model=m,precision=bf16,device=cpu",
        "gumbel:model=m,precision=fp32",
        "az:model=m,time=1.5",
        "mcts:time=0.25,sims=10",
        "az:model=m,probe=0",
        "az:model=m,probe=2",
        "az:model=m,time=1,probe=2,guard=7",
        "az:model=m,time=1,probe=2,contempt=0.2",
        "mcts:sims=10,guard=5",
        "az:model=m,time=1,repetition=draw",
        "mcts:sims=10,repetition=rules",
    ];
    for t in texts {
        let spec: AgentSpec = t.parse().unwrap();
        let canonical = spec.to_string();
        assert_eq!(canonical, spec.canonical());
        let back: AgentSpec = canonical.parse().unwrap();
        assert_eq!(back.to_string(), canonical, "{t}");
        assert_eq!(back, spec, "{t}");
        assert_eq!(back.search_config(), spec.search_config(), "{t}");
    }
    assert_eq!("gumbel:k=16,model=m,batch=8,sims=32".parse::<AgentSpec>().unwrap().canonical(), "gumbel:model=m,sims=32");
    assert_eq!("mcts:batch=3,cpuct=2.5,sims=7".parse::<AgentSpec>().unwrap().canonical(), "mcts:sims=7,cpuct=2.5,leaves_per_tree=3");
    assert_eq!(
        "mcts:leaves_per_tree=3".parse::<AgentSpec>().unwrap(),
        "mcts:batch=3".parse::<AgentSpec>().unwrap(),
        "batch is the older name of leaves_per_tree"
    );
    // The command's --device is used, but is not part of the text; a named device is.
    let s = "az:model=m".parse::<AgentSpec>().unwrap().default_device("cpu");
    assert_eq!((s.device(), s.to_string().as_str()), ("cpu", "az:model=m,sims=200"));
    let s = "az:model=m,device=cuda".parse::<AgentSpec>().unwrap().default_device("cpu");
    assert_eq!((s.device(), s.to_string().as_str()), ("cuda", "az:model=m,sims=200,device=cuda"));
    // So is the precision: the command's is used unless the spec names one; auto by default.
    use tafl_lab::nn::Precision;
    let s = "az:model=m".parse::<AgentSpec>().unwrap();
    assert_eq!(s.precision(), Precision::Auto);
    let s = s.default_precision(Precision::Fp32);
    assert_eq!((s.precision(), s.to_string().as_str()), (Precision::Fp32, "az:model=m,sims=200"));
    let s = "az:precision=bf16,model=m".parse::<AgentSpec>().unwrap().default_precision(Precision::Fp32);
    assert_eq!((s.precision(), s.to_string().as_str()), (Precision::Bf16, "az:model=m,sims=200,precision=bf16"));
    for bad in ["1", "-0.1", "nan", "x"] {
        let e = format!("az:model=m,contempt={bad}").parse::<AgentSpec>().unwrap_err().to_string();
        assert!(e.contains("contempt") && e.contains("from 0 to below 1"), "{e}");
    }
    let e = "az:model=m,precision=fp16".parse::<AgentSpec>().unwrap_err().to_string();
    assert!(e.contains("precision") && e.contains("fp16") && e.contains("auto, fp32 or bf16"), "{e}");
    // The probes: 1 (the escape probe) is the default, 2 adds the fork probe, 0 neither.
    for (t, escape, fork) in
        [("az:model=m", true, false), ("az:model=m,probe=1", true, false), ("az:model=m,probe=2", true, true), ("az:model=m,probe=0", false, false)]
    {
        let cfg = t.parse::<AgentSpec>().unwrap().search_config().unwrap();
        assert_eq!((cfg.escape_probe, cfg.fork_probe), (escape, fork), "{t}");
    }
    assert_eq!("az:model=m,probe=1".parse::<AgentSpec>().unwrap().canonical(), "az:model=m,sims=200");
    // The guard: off unless asked for, at most 15 plies.
    assert_eq!("az:model=m".parse::<AgentSpec>().unwrap().guard, 0);
    assert_eq!("az:model=m,guard=0".parse::<AgentSpec>().unwrap().canonical(), "az:model=m,sims=200");
    let e = "az:model=m,guard=16".parse::<AgentSpec>().unwrap_err().to_string();
    assert!(e.contains("guard") && e.contains("0 to 15"), "{e}");
    let e = "az:model=m,repetition=loss".parse::<AgentSpec>().unwrap_err().to_string();
    assert!(e.contains("repetition") && e.contains("rules or draw"), "{e}");
    let e = "az:model=m,probe=3".parse::<AgentSpec>().unwrap_err().to_string();
    assert!(e.contains("probe") && e.contains("0, 1 or 2"), "{e}");
    // A think time is for searches that can use any number of simulations.
    for (t, says) in [("mcts:time=0", "positive number of seconds"), ("az:model=m,time=x", "positive number"), ("gumbel:model=m,time=1", "az and mcts")] {
        let e = t.parse::<AgentSpec>().unwrap_err().to_string();
        assert!(e.contains(says), "{t}: {e}");
    }
    // A gumbel agent's defaults are the search layer's.
    let g: AgentSpec = "gumbel:model=m".parse().unwrap();
    let cfg = g.search_config().unwrap();
    assert_eq!(cfg.root, RootPolicy::gumbel(RootPolicy::DEFAULT_K));
    assert_eq!((cfg.cpuct, cfg.fpu_reduction), (SearchConfig::default().cpuct, SearchConfig::default().fpu_reduction));
    // A run config that leaves search settings out gets the search layer's defaults.
    let text = std::fs::read_to_string("configs/runs/smoke.toml").unwrap();
    let text = text.replace("root = { kind = \"gumbel\", k = 4 }", "root = { kind = \"gumbel\" }");
    let run = tafl_lab::train::config::RunConfig::from_toml(&text, "test.toml").unwrap();
    assert_eq!(run.selfplay.play.search.root, RootPolicy::gumbel(RootPolicy::DEFAULT_K));
    let sp = run.selfplay_config();
    assert_eq!(sp.search, SearchConfig { sims: 8, root: RootPolicy::gumbel(RootPolicy::DEFAULT_K), ..SearchConfig::default() });
    // An older config (search settings in [selfplay] itself) reads as it always did: PUCT
    // roots get the default Dirichlet noise.
    let old = text
        .replace("[selfplay.search]\nsims = 8\nroot = { kind = \"gumbel\" }\n", "")
        .replace("[selfplay]\n", "[selfplay]\nsimulations = 8\nroot = \"puct\"\n");
    assert!(!old.contains("[selfplay.search]"), "{old}");
    let run = tafl_lab::train::config::RunConfig::from_toml(&old, "old.toml").unwrap();
    assert_eq!(run.selfplay.play.search.leaves_per_tree, SearchConfig::default().leaves_per_tree);
    assert_eq!(run.selfplay.play.search.noise, Some(Noise::default()));
    assert_eq!(run.selfplay.play.search.root, RootPolicy::Puct);
    // The shipped model's saved config is in the older form and still resumes as it ran.
    let shipped = std::fs::read_to_string(Path::new(SHIPPED).join("config.toml")).unwrap();
    let run = tafl_lab::train::config::RunConfig::from_toml(&shipped, "config.toml").unwrap();
    let expected = SearchConfig { sims: 48, leaves_per_tree: 8, root: RootPolicy::gumbel(16), noise: None, ..SearchConfig::default() };
    assert_eq!(run.selfplay.play.search, expected);
    // Written back, a config is in today's form and reads back equal.
    let written = toml::to_string(&run).unwrap();
    assert!(written.contains("[selfplay.search]") && !written.contains("gumbel_k"), "{written}");
    assert_eq!(tafl_lab::train::config::RunConfig::from_toml(&written, "w.toml").unwrap(), run);
}

/// `play` and `engine` take `--agent SPEC` like the other commands, with `--model` and `--sims`
/// as its shorthand: the same agent plays the same moves either way, and the two forms
/// together are refused.
#[test]
fn play_and_engine_take_an_agent_spec_or_its_shorthand() {
    let moves = |o: &std::process::Output| -> Vec<String> {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).lines().filter(|l| l.starts_with("move ")).map(str::to_string).collect()
    };
    let talk = "play attackers\ngoodbye\n";
    let short = moves(&run_stdin(&["engine", "--model", SHIPPED, "--sims", "4", "--device", "cpu"], talk));
    assert!(!short.is_empty());
    let spec = format!("az:model={SHIPPED},sims=4");
    assert_eq!(moves(&run_stdin(&["engine", "--agent", &spec, "--device", "cpu"], talk)), short);
    let script = "moves\nd2-b2\nhint\nquit\n";
    let play = |args: &[&str]| {
        let mut all = vec!["play", "--side", "attackers", "--seed", "3"];
        all.extend_from_slice(args);
        ok(&run_stdin(&all, script))
    };
    let short = play(&["--sims", "12"]);
    assert!(short.contains("the AI (mcts:sims=12)") && short.contains("AI plays "), "{short}");
    assert_eq!(play(&["--agent", "mcts:sims=12"]), short);
    // The variant is the agent's model's.
    let g = play(&["--agent", &format!("gumbel:model={SHIPPED},sims=4"), "--device", "cpu"]);
    assert!(g.to_lowercase().starts_with("brandubh: ") && g.contains(&format!("the AI (gumbel:model={SHIPPED},sims=4)")), "{g}");
    for both in [["--model", SHIPPED], ["--sims", "4"]] {
        fails_with(&run_stdin(&["engine", "--agent", &spec, both[0], both[1]], talk), "cannot be used with");
        fails_with(&run_stdin(&["play", "--agent", "mcts:sims=4", both[0], both[1]], script), "cannot be used with");
    }
    fails_with(&run_stdin(&["play", "--agent", "mcts:sims=x"], script), "--agent");
}

/// `time=` makes a search agent think for a time, not a number of simulations: two
/// simulations' worth of budget become as many as 0.2 s allows.
#[test]
fn a_think_time_replaces_the_simulation_budget() {
    use tafl_lab::arena::Agent;
    let variant = std::sync::Arc::new(tafl_lab::rules::Variant::preset("brandubh").unwrap());
    let start = tafl_lab::rules::Position::start(variant.clone());
    let sims = |text: &str| {
        let mut agent = Agent::new(&text.parse().unwrap(), &variant, 1).unwrap();
        agent.think(&start).unwrap().simulations
    };
    assert!(sims("mcts:sims=2") <= 2);
    assert!(sims("mcts:sims=2,time=0.2") > 20);
}
