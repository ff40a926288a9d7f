//! Run configs in the names they were saved with before one vocabulary (`simulations`,
//! `c_puct`, `batch` for both `leaves_per_tree` and `positions_per_call`, `fast_simulations`,
//! `attacker_simulations`), which every saved run still has.

/// `text`, a run config in today's names, in the old names: the `[selfplay.search]` and
/// `[eval]` tables' `sims`, `cpuct` and `leaves_per_tree`, and `[selfplay]`'s
/// `positions_per_call`, `fast_sims` and `attacker_sims`.
pub fn with_old_names(text: &str) -> String {
    let mut table = String::new();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with('[') {
            table = line.split('#').next().unwrap_or("").trim().to_string();
        }
        let key = line.split_once('=').map(|(k, _)| k.trim());
        let renamed = match (table.as_str(), key) {
            ("[selfplay.search]" | "[eval]", Some("sims")) => line.replacen("sims", "simulations", 1),
            ("[selfplay.search]", Some("cpuct")) => line.replacen("cpuct", "c_puct", 1),
            ("[selfplay.search]", Some("leaves_per_tree")) => line.replacen("leaves_per_tree", "batch", 1),
            ("[selfplay]", Some("positions_per_call")) => line.replacen("positions_per_call", "batch", 1),
            ("[selfplay]", Some("fast_sims" | "attacker_sims")) => line.replacen("_sims", "_simulations", 1),
            _ => line.to_string(),
        };
        out.push_str(&renamed);
        out.push('\n');
    }
    out
}
