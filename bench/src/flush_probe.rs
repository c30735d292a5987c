//! `a2a-bench flush`: the disk's own flush latency, the floor under any durable write: appends
//! 4 KiB to a file in `--dir` and waits for `fdatasync` (`File::sync_data`), `--samples`
//! times, and reports the median and the 99th percentile. compare.sh runs it beside the sled
//! rows, so that the time to a durable first event is read against the disk it ran on.

use serde::Serialize;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `a2a-bench flush`.
#[derive(Clone, Debug, clap::Args)]
pub(crate) struct FlushArgs {
    /// The directory to write in (a file `a2a-bench-flush` is made there and removed).
    #[arg(long, default_value = ".")]
    pub(crate) dir: PathBuf,
    /// Flushes to time.
    #[arg(long, default_value_t = 500)]
    pub(crate) samples: usize,
}

#[derive(Debug, Serialize)]
struct Flushes {
    samples: usize,
    fdatasync_p50_ms: f64,
    fdatasync_p99_ms: f64,
}

/// Runs the probe; prints one JSON line.
pub(crate) fn probe(args: &FlushArgs) -> Result<(), String> {
    let path = args.dir.join("a2a-bench-flush");
    let mut file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let block = [0x5a_u8; 4096];
    let mut times = Vec::with_capacity(args.samples);
    for _ in 0..args.samples.max(1) {
        let t = Instant::now();
        file.write_all(&block).map_err(|e| e.to_string())?;
        file.sync_data().map_err(|e| e.to_string())?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    drop(file);
    let _ = std::fs::remove_file(&path);
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    let out = Flushes {
        samples: times.len(),
        fdatasync_p50_ms: at(0.5),
        fdatasync_p99_ms: at(0.99),
    };
    println!(
        "{}",
        serde_json::to_string(&out).map_err(|e| e.to_string())?
    );
    Ok(())
}
