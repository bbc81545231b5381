//! Sweeps on a Slurm cluster (README, "On a cluster"): the points a command would run on its
//! own cores ([`crate::par::Progress::map_points`]) go out as Slurm job arrays, one task per
//! point, each writing its own result file; the same command run again reads the results back
//! and writes exactly what a local run writes.
//!
//! A command runs its points in one or more rounds (`slicing` runs the applications alone
//! first, then every workload under every policy, from those results). With `--slurm DIR` each
//! round `r` has a folder `DIR/round-r/` holding
//! - `points.txt`: the round's points, one per line, named as on the progress bar (a later run
//!   whose command line makes other points stops with an error rather than mix results);
//! - `array.sh`: the job array (`#SBATCH --array=0-(N-1)`), each task running this same command
//!   line with `--slurm-round r`, which computes the point `SLURM_ARRAY_TASK_ID` names and writes
//!   `results/<index>.cbor` (CBOR: every value, NaN included, comes back bit for bit), its log
//!   in `logs/<index>.out`;
//! - `next.sh`: the follow-up job, submitted to start when the array has ended (`afterany`),
//!   which runs the command line again: it submits the next round, or, with every round's
//!   results in, writes the outputs (its standard output is `next.out`);
//! - `job`: the array's job id once submitted (a later run does not submit the round again).
//!
//! A run with `--slurm DIR` walks the rounds: a round with all its results is read back; at the
//! first round without them it writes the round's folder, submits it (unless `--no-submit`), says
//! so and ends (exit 0), or, if that round was submitted before, names the points still without
//! a result and ends with exit 3.

use anyhow::{anyhow, bail, Context, Result};
use serde::{de::DeserializeOwned, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The exit code of a run that found a submitted round without all its results.
pub const NOT_FINISHED: i32 = 3;

/// `--slurm` and the options that go with it, shared by the commands that sweep.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SlurmArgs {
    /// Run the points on Slurm: write them as job arrays under DIR (one task per point, each
    /// writing its own result file) and submit them with `sbatch`; run the same command again
    /// (a follow-up job does) to write the outputs from the results, exactly as a local run
    /// writes them (README, "On a cluster")
    #[arg(long, value_name = "DIR")]
    pub slurm: Option<PathBuf>,
    /// Options for `sbatch`, for every job it submits (for instance "--partition=long --time=2:00:00")
    #[arg(long, value_name = "OPTIONS", requires = "slurm", allow_hyphen_values = true)]
    pub sbatch: Option<String>,
    /// Write the job scripts without submitting them (run `sbatch DIR/round-R/array.sh` yourself)
    #[arg(long, requires = "slurm")]
    pub no_submit: bool,
    /// (the job arrays' tasks) Compute the point of round R that SLURM_ARRAY_TASK_ID names and
    /// write its result
    #[arg(long, value_name = "R", requires = "slurm", hide = true)]
    pub slurm_round: Option<usize>,
}

/// A result that can travel through a file: a point's value or its error.
pub trait Shipped: Sized {
    fn ship(&self) -> Shipment;
    fn unship(s: Shipment) -> Result<Self, String>;
}

/// What a result file holds: the value, or the error's chain of messages (outermost first).
#[derive(Serialize, serde::Deserialize)]
pub enum Shipment {
    Ok(ciborium::Value),
    Err(Vec<String>),
}

fn value_of<T: Serialize>(t: &T) -> ciborium::Value {
    ciborium::Value::serialized(t).expect("a result serializes")
}

fn from_value<T: DeserializeOwned>(v: ciborium::Value) -> Result<T, String> {
    v.deserialized().map_err(|e| format!("a result file does not hold this command's result: {e}"))
}

impl<T: Serialize + DeserializeOwned> Shipped for anyhow::Result<T> {
    fn ship(&self) -> Shipment {
        match self {
            Ok(t) => Shipment::Ok(value_of(t)),
            Err(e) => Shipment::Err(e.chain().map(|c| c.to_string()).collect()),
        }
    }
    fn unship(s: Shipment) -> Result<Self, String> {
        Ok(match s {
            Shipment::Ok(v) => Ok(from_value(v)?),
            Shipment::Err(chain) => {
                // (rebuilt innermost first, so that `{}`, `{:#}` and `{:?}` print as the original)
                let mut it = chain.into_iter().rev();
                let mut e = anyhow::Error::msg(it.next().unwrap_or_default());
                for c in it {
                    e = e.context(c);
                }
                Err(e)
            }
        })
    }
}

impl<T: Serialize + DeserializeOwned> Shipped for Result<T, String> {
    fn ship(&self) -> Shipment {
        match self {
            Ok(t) => Shipment::Ok(value_of(t)),
            Err(e) => Shipment::Err(vec![e.clone()]),
        }
    }
    fn unship(s: Shipment) -> Result<Self, String> {
        Ok(match s {
            Shipment::Ok(v) => Ok(from_value(v)?),
            Shipment::Err(mut chain) => Err(chain.swap_remove(0)),
        })
    }
}

/// A command's rounds of points on Slurm.
pub struct Slurm {
    args: SlurmArgs,
    dir: PathBuf,
    /// Rounds begun so far.
    rounds: AtomicUsize,
}

impl Slurm {
    pub fn new(args: &SlurmArgs) -> Option<Slurm> {
        args.slurm.as_ref().map(|d| Slurm { args: args.clone(), dir: d.clone(), rounds: AtomicUsize::new(0) })
    }

    /// The next round's results: read back when all are in; otherwise this process ends here
    /// (after computing its one point, as a task; after writing and submitting the round, or
    /// reporting what is missing).
    pub fn round<T, R: Shipped>(&self, label: &str, items: &[T], name: impl Fn(&T) -> String, f: impl Fn(&T) -> R) -> Vec<R> {
        let r = self.rounds.fetch_add(1, Ordering::Relaxed) + 1;
        match self.try_round(r, label, items, name, f) {
            Ok(v) => v,
            Err(End(code, msg)) => {
                use std::io::Write;
                let _ = std::io::stdout().flush();
                if !msg.is_empty() {
                    eprintln!("{msg}");
                }
                std::process::exit(code)
            }
        }
    }

    fn try_round<T, R: Shipped>(&self, r: usize, label: &str, items: &[T], name: impl Fn(&T) -> String, f: impl Fn(&T) -> R) -> Result<Vec<R>, End> {
        let rd = self.dir.join(format!("round-{r}"));
        let names: Vec<String> = items.iter().map(|t| name(t).replace('\n', " ")).collect();
        let listed = rd.join("points.txt");
        match std::fs::read_to_string(&listed) {
            Ok(text) => {
                let old: Vec<&str> = text.lines().collect();
                if old != names.iter().map(String::as_str).collect::<Vec<_>>() {
                    let first = (0..old.len().max(names.len())).find(|&i| old.get(i).copied() != names.get(i).map(String::as_str)).unwrap_or(0);
                    return Err(End::error(anyhow!(
                        "--slurm {}: round {r} was written for other points ({} there, {} now; point {first} is `{}` there and `{}` now): give the command line that wrote it, or another folder",
                        self.dir.display(),
                        old.len(),
                        names.len(),
                        old.get(first).copied().unwrap_or("(none)"),
                        names.get(first).map_or("(none)", String::as_str)
                    )));
                }
            }
            Err(_) if self.args.slurm_round.is_some() => {
                return Err(End::error(anyhow!("--slurm {}: round {r} was never written ({} is missing): a task runs only in a round the command wrote", self.dir.display(), listed.display())));
            }
            Err(_) => {
                std::fs::create_dir_all(rd.join("results")).and_then(|_| std::fs::create_dir_all(rd.join("logs"))).map_err(|e| End::error(anyhow!("--slurm {}: {e}", rd.display())))?;
                write(&listed, &(names.join("\n") + "\n")).map_err(End::error)?;
            }
        }
        if self.args.slurm_round == Some(r) {
            return Err(self.task(&rd, r, items, &names, f));
        }
        let results = rd.join("results");
        let missing: Vec<usize> = (0..items.len()).filter(|i| !results.join(format!("{i}.cbor")).exists()).collect();
        if missing.is_empty() {
            return (0..items.len()).map(|i| read_result(&results.join(format!("{i}.cbor")))).collect::<Result<Vec<R>>>().map_err(End::error);
        }
        if let Some(t) = self.args.slurm_round {
            return Err(End::error(anyhow!("--slurm {}: round {t} needs round {r}'s results, and {} of its {} points have none", self.dir.display(), missing.len(), items.len())));
        }
        let job = rd.join("job");
        if let Ok(id) = std::fs::read_to_string(&job) {
            let show: Vec<String> = missing.iter().take(8).map(|&i| format!("{i} ({}; log {})", names[i], rd.join("logs").join(format!("{i}.out")).display())).collect();
            return Err(End(
                NOT_FINISHED,
                format!(
                    "{label}: round {r} (job {}) has results for {} of {} points; without one: {}{}\n(run this command again once the job has ended; to submit the round again, remove {})",
                    id.trim(),
                    items.len() - missing.len(),
                    items.len(),
                    show.join(", "),
                    if missing.len() > show.len() { format!(" and {} more", missing.len() - show.len()) } else { String::new() },
                    job.display()
                ),
            ));
        }
        Err(self.submit(&rd, r, label, items.len()).unwrap_or_else(End::error))
    }

    /// As a task: computes its point and writes the result.
    fn task<T, R: Shipped>(&self, rd: &Path, r: usize, items: &[T], names: &[String], f: impl Fn(&T) -> R) -> End {
        let i = match std::env::var("SLURM_ARRAY_TASK_ID").ok().and_then(|v| v.trim().parse::<usize>().ok()) {
            Some(i) if i < items.len() => i,
            Some(i) => return End::error(anyhow!("--slurm-round {r}: SLURM_ARRAY_TASK_ID is {i}, but the round has {} points (0..={})", items.len(), items.len().saturating_sub(1))),
            None => return End::error(anyhow!("--slurm-round {r}: expected the point's index in SLURM_ARRAY_TASK_ID (set by Slurm for a job array's task)")),
        };
        eprintln!("round {r}, point {i}: {}", names[i]);
        let res = f(&items[i]);
        let path = rd.join("results").join(format!("{i}.cbor"));
        let mut bytes = Vec::new();
        if let Err(e) = ciborium::into_writer(&res.ship(), &mut bytes) {
            return End::error(anyhow!("{}: {e}", path.display()));
        }
        match write(&path, bytes) {
            Ok(()) => End(0, String::new()),
            Err(e) => End::error(e),
        }
    }

    /// Writes the round's job array and follow-up, and submits them.
    fn submit(&self, rd: &Path, r: usize, label: &str, n: usize) -> Result<End> {
        let cwd = std::env::current_dir().context("the current folder")?;
        let exe = std::env::current_exe().context("this program's path")?;
        let args: Vec<String> = std::env::args().skip(1).collect();
        let abs = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) };
        let rd = abs(rd);
        let run = |extra: &str| format!("cd {}\nexec {} {}{extra}\n", quote(&cwd.display().to_string()), quote(&exe.display().to_string()), args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "));
        let array = rd.join("array.sh");
        write(
            &array,
            &format!(
                "#!/bin/bash\n# mpgpu {label}: round {r}, {n} points, one per task (written by mpgpu --slurm)\n#SBATCH --job-name=mpgpu-{label}-{r}\n#SBATCH --array=0-{}\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --output={}\n{}",
                n - 1,
                rd.join("logs").join("%a.out").display(),
                run(&format!(" --slurm-round {r}"))
            ),
        )?;
        let next = rd.join("next.sh");
        write(
            &next,
            &format!("#!/bin/bash\n# mpgpu {label}: after round {r}, the next round or the outputs (written by mpgpu --slurm)\n#SBATCH --job-name=mpgpu-{label}-next\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --output={}\n{}", rd.join("next.out").display(), run("")),
        )?;
        if self.args.no_submit {
            return Ok(End(0, format!("{label}: round {r}'s {n} points are in {} (not submitted: `sbatch {}`, then run this command again)", rd.display(), array.display())));
        }
        let extra: Vec<String> = self.args.sbatch.as_deref().map(|s| s.split_whitespace().map(String::from).collect()).unwrap_or_default();
        let id = sbatch(&extra, &[], &array)?;
        std::fs::write(rd.join("job"), format!("{id}\n")).with_context(|| format!("{}", rd.join("job").display()))?;
        let then = sbatch(&extra, &[format!("--dependency=afterany:{id}")], &next)?;
        Ok(End(0, format!("{label}: round {r}'s {n} points submitted as job array {id}; job {then} runs this command again when it has ended (the next round, or the outputs, with its standard output in {})", rd.join("next.out").display())))
    }
}

/// How the process ends instead of going on: its exit code and what it says.
struct End(i32, String);

impl End {
    fn error(e: anyhow::Error) -> End {
        End(2, format!("error: {e:#}"))
    }
}

/// `text` written to `path` through a temporary file, so that a reader never sees half of it.
fn write(path: &Path, text: impl AsRef<[u8]>) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).with_context(|| format!("{}", path.display()))
}

fn read_result<R: Shipped>(path: &Path) -> Result<R> {
    let bytes = std::fs::read(path).with_context(|| format!("{}", path.display()))?;
    let s: Shipment = ciborium::from_reader(&bytes[..]).map_err(|e| anyhow!("{}: not a result file: {e}", path.display()))?;
    R::unship(s).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// Submits `script` with `sbatch --parsable` and the options; its job id.
fn sbatch(options: &[String], more: &[String], script: &Path) -> Result<String> {
    let out = std::process::Command::new("sbatch")
        .arg("--parsable")
        .args(options)
        .args(more)
        .arg(script)
        .output()
        .map_err(|e| anyhow!("sbatch: {e} (is Slurm installed? --no-submit writes the scripts only)"))?;
    if !out.status.success() {
        bail!("sbatch {}: {}", script.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit() || c == '_') {
        bail!("sbatch {}: expected a job id, got `{}`", script.display(), text.trim());
    }
    Ok(id)
}

/// `s` quoted for the shell.
fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
