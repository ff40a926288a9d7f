//! `tafl-lab tournament`: a round robin of several agents on one variant, saved in an output
//! folder and resumed by rerunning the same command ([`tafl_lab::lab::tournament`] plays it and
//! keeps its state); this file parses the arguments and prints. `--shard I/N` plays one shard
//! of every pairing's games into its own folder; `--merge` puts the shards' folders together.

use anyhow::{anyhow, bail, Result};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tafl_lab::arena::{AgentSpec, Shard};
use tafl_lab::lab::tournament::{self, pct, Event, Standings, Tournament, TournamentError};
use tafl_lab::rules::Variant;

/// Play a round robin of several agents on one variant (every pairing is a match of paired
/// openings with sides swapped); write a crosstable and joint Elo ratings with 95% intervals
/// to --out (tournament.json, tournament.md). Rerun the same command to resume.
#[derive(clap::Args)]
pub struct TournamentArgs {
    #[command(flatten)]
    pub common: super::ArenaArgs,
    /// The agents, separated by semicolons: "random;mcts:sims=100;az:model=m,sims=64".
    #[arg(long)]
    pub agents: Option<String>,
    /// One agent (repeat the flag); comes after those of --agents.
    #[arg(long = "agent")]
    pub agent: Vec<String>,
    /// Games per pairing (even: each opening is played with both sides).
    #[arg(long, default_value_t = 10)]
    pub games: usize,
    /// Output folder: settings.json, pairings/, tournament.json, tournament.md.
    #[arg(long)]
    pub out: PathBuf,
    /// Play only shard I of N (counted from 0, as job-array task ids) of every pairing's games:
    /// the pairs of games p with p mod N = I. Each shard needs its own --out; `--merge` puts
    /// the shards' folders together.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Merge the --out folders of every shard of one tournament into --out, as one whole run
    /// writes it (no games are played; the settings come from the shards).
    #[arg(long, value_name = "DIR", num_args = 1.., conflicts_with_all = ["agents", "agent", "games", "shard", "variant", "seed", "opening_plies"])]
    pub merge: Option<Vec<PathBuf>>,
}

/// `text` split at the semicolons outside double quotes (spec values may be quoted).
fn split_agents(text: &str) -> Vec<String> {
    let (mut parts, mut cur, mut quoted, mut escaped) = (Vec::new(), String::new(), false, false);
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

pub fn run(t: &TournamentArgs, out: &mut impl Write) -> Result<()> {
    if let Some(dirs) = &t.merge {
        let m = tournament::merge(&t.out, dirs).map_err(|e| match e {
            TournamentError::Folder(m) => anyhow!("--out {}: {m}", t.out.display()),
            e => anyhow!(e),
        })?;
        let s = &m.settings;
        writeln!(out, "{}: {} pairing{} of {} games merged from {} shards", s.variant, m.pairings, if m.pairings == 1 { "" } else { "s" }, s.games, m.shards)?;
        return ratings(t, &s.agents, &m.standings, out);
    }
    let common = &t.common;
    let variant = Arc::new(Variant::from_spec(&common.variant)?);
    let mut texts = t.agents.as_deref().map(split_agents).unwrap_or_default();
    texts.extend(t.agent.iter().map(|a| a.trim().to_string()));
    let specs: Vec<AgentSpec> = texts.iter().map(|s| super::parse_agent("--agents", s, &common.device)).collect::<Result<_>>()?;
    if specs.len() < 2 {
        bail!("--agents: a tournament needs at least two agents (\"A;B;C\" or repeated --agent), got {}", specs.len());
    }
    let labels: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
    for (k, l) in labels.iter().enumerate() {
        if labels[..k].contains(l) {
            bail!("--agents: {l} is listed twice");
        }
    }
    if t.games < 2 || t.games % 2 != 0 {
        bail!("--games: must be even and at least 2 (each opening is played with both sides), got {}", t.games);
    }
    super::check_shard(t.shard, t.games, "--games")?;
    // The folder and the agents as the user named them.
    let named = |e: TournamentError| match e {
        TournamentError::Folder(m) => anyhow!("--out {}: {m}", t.out.display()),
        TournamentError::Agent { index, message } => anyhow!("--agents {}: {message}", texts[index]),
        e => anyhow!(e),
    };
    let tournament = Tournament::open(&t.out, variant, specs, t.games, common.seed, common.opening_plies, t.shard).map_err(named)?;
    let pairings = labels.len() * (labels.len() - 1) / 2;
    let per_pairing = tournament.settings().match_config().indices().len();
    let bar = super::progress_bar((pairings * per_pairing) as u64, "tournament", common.quiet);
    let summary = tournament
        .run(&|_| bar.inc(1), &mut |event| match event {
            Event::Replaying { a, b, path, why } => writeln!(out, "replaying {a} vs {b} ({}): {why}", path.display()),
            Event::Start { resumed } => {
                // Games run in parallel across cores; each network evaluator then uses one torch thread.
                tafl_lab::nn::set_torch_threads(1);
                bar.set_position((resumed * per_pairing) as u64);
                Ok(())
            }
            Event::Pairing { a, b } => {
                bar.set_message(format!("{a} vs {b}"));
                Ok(())
            }
            Event::Played(r) => bar.suspend(|| {
                writeln!(
                    out,
                    "{} vs {}: {} games, {} scores {:.1}% ({} as attackers, {} as defenders)",
                    r.a,
                    r.b,
                    r.games,
                    r.a,
                    pct(r.a_points(), r.games),
                    r.a_as_attackers,
                    r.a_as_defenders
                )?;
                out.flush()
            }),
        })
        .map_err(named)?;
    bar.finish_and_clear();
    let settings = tournament.settings();
    writeln!(
        out,
        "{}: {} pairing{} of {} games{}: {} played, {} from an earlier run{}",
        settings.variant,
        summary.pairings,
        if summary.pairings == 1 { "" } else { "s" },
        t.games,
        t.shard.map(|s| format!(" (shard {s}: {per_pairing} games each)")).unwrap_or_default(),
        summary.played,
        summary.resumed,
        if summary.replayed > 0 { format!("; {} replayed (a model changed or its hashes were unknown)", summary.replayed) } else { String::new() }
    )?;
    ratings(t, &labels, &summary.standings, out)
}

/// The ratings, best first, and the files written.
fn ratings(t: &TournamentArgs, labels: &[String], st: &Standings, out: &mut impl Write) -> Result<()> {
    writeln!(out, "ratings (Bradley-Terry, joint maximum likelihood, mean 0, 95% intervals):")?;
    for (rank, &i) in st.order.iter().enumerate() {
        let r = st.fit.ratings[i];
        let (p, g) = st.score(i);
        writeln!(out, "{:>3}. {:<32} {:+6.0} ({:+.0} to {:+.0})  score {:.1}% of {g}", rank + 1, labels[i], r.elo, r.low, r.high, pct(p, g))?;
    }
    writeln!(out, "wrote {} and {}", t.out.join("tournament.json").display(), t.out.join("tournament.md").display())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_split_at_semicolons_outside_quotes() {
        assert_eq!(split_agents("random; mcts:sims=8,cpuct=2 ;"), ["random", "mcts:sims=8,cpuct=2"]);
        assert_eq!(split_agents(r#"az:model="a;b,c",sims=4;random"#), [r#"az:model="a;b,c",sims=4"#, "random"]);
        assert!(split_agents(" ; ").is_empty());
    }
}
