//! `a2a-bench guard`: compares the instruction counts of a callgrind run (`compare.sh
//! --instructions`) with a baseline committed in `bench/`, and fails when one grew by more than
//! the tolerance. Instructions, unlike CPU time, do not move with the machine's other load, so a
//! few seconds under callgrind tell a regression from noise. What noise remains is one-sided:
//! background work (sled's flusher thread) adds instructions to a window whatever its requests,
//! so each row takes the least of several runs.

use crate::load::{Binding, Outcome};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Options of `a2a-bench guard`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct GuardArgs {
    /// The JSON-lines files of one or more `compare.sh --instructions` runs (each row takes
    /// the least of them).
    #[arg(required = true)]
    pub(crate) results: Vec<PathBuf>,
    /// The baseline: a JSON list of `{label, scenario, concurrency, instructions}`.
    #[arg(long, default_value = "bench/baseline-instructions.json")]
    pub(crate) baseline: PathBuf,
    /// How much a figure may grow, in percent, before the guard fails.
    #[arg(long, default_value_t = 5.0)]
    pub(crate) tolerance: f64,
    /// The scenarios guarded (`label:scenario:concurrency`, comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "ours-memory:send:16,ours-memory:get:16,ours-sled:send:16,ours-sled:get:16"
    )]
    pub(crate) rows: Vec<String>,
    /// Write the results as the new baseline instead of comparing.
    #[arg(long)]
    pub(crate) write: bool,
}

/// One guarded figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Figure {
    label: String,
    scenario: String,
    concurrency: usize,
    /// Server user-space instructions per request.
    instructions: f64,
}

impl Figure {
    fn key(&self) -> String {
        format!("{}:{}:{}", self.label, self.scenario, self.concurrency)
    }
}

/// Compares (or writes) the baseline; `Err` names what grew or what is missing.
pub(crate) fn guard(args: &GuardArgs) -> Result<(), String> {
    let mut measured: Vec<Figure> = Vec::new();
    for file in &args.results {
        for figure in read_figures(file)?
            .into_iter()
            .filter(|f| args.rows.contains(&f.key()))
        {
            match measured.iter_mut().find(|m| m.key() == figure.key()) {
                Some(m) => m.instructions = m.instructions.min(figure.instructions),
                None => measured.push(figure),
            }
        }
    }
    let missing: Vec<&String> = args
        .rows
        .iter()
        .filter(|k| !measured.iter().any(|f| f.key() == **k))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "no instruction count for {missing:?} in the results (run compare.sh --instructions)"
        ));
    }
    if args.write {
        let json = serde_json::to_string_pretty(&measured).map_err(|e| e.to_string())?;
        std::fs::write(&args.baseline, json + "\n")
            .map_err(|e| format!("{}: {e}", args.baseline.display()))?;
        println!(
            "wrote {} figures to {}",
            measured.len(),
            args.baseline.display()
        );
        return Ok(());
    }
    let text = std::fs::read_to_string(&args.baseline)
        .map_err(|e| format!("{}: {e}", args.baseline.display()))?;
    let baseline: Vec<Figure> =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", args.baseline.display()))?;
    println!("| row | baseline | now | change |");
    println!("|---|--:|--:|--:|");
    let mut grew = Vec::new();
    for now in &measured {
        let Some(before) = baseline.iter().find(|b| b.key() == now.key()) else {
            return Err(format!("the baseline has no {}", now.key()));
        };
        let change = (now.instructions / before.instructions - 1.0) * 100.0;
        println!(
            "| {} | {:.0} | {:.0} | {change:+.1}% |",
            now.key(),
            before.instructions,
            now.instructions
        );
        if change > args.tolerance {
            grew.push(format!("{} {change:+.1}%", now.key()));
        }
    }
    if grew.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "instructions per request grew by more than {}%: {}",
            args.tolerance,
            grew.join(", ")
        ))
    }
}

/// The instruction counts of one results file.
fn read_figures(file: &PathBuf) -> Result<Vec<Figure>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str::<Outcome>)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", file.display()))?
        .into_iter()
        .filter_map(|o| {
            // The guarded rows are JSON-RPC's.
            if o.binding != Binding::JsonRpc {
                return None;
            }
            let instructions = o.server_instructions.filter(|_| o.under_callgrind)?;
            Some(Figure {
                label: o.label,
                scenario: o.scenario,
                concurrency: o.concurrency,
                instructions,
            })
        })
        .collect())
}
