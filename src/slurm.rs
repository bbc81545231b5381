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
//!
//! A command made of parts (`experiment all`: one experiment after another) gives each part a
//! folder of its own, `DIR/<part>/`, which belongs to the part's own command line (`experiment
//! thesis --resume DIR/thesis`): its tasks run that command line, and a folder written by the
//! part run alone serves the whole command as well.

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
    /// Run the points here (on --jobs workers) and keep each point's result under DIR as it
    /// finishes; the same command line run again computes only the points without one, so a
    /// run stopped part way (killed, out of time) resumes where it stopped (README, "Long runs")
    #[arg(long, value_name = "DIR", conflicts_with = "slurm")]
    pub resume: Option<PathBuf>,
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
            Shipment::Err(chain) => Err(chain.into_iter().next().unwrap_or_default()),
        })
    }
}

/// A command's rounds of points on Slurm.
pub struct Slurm {
    args: SlurmArgs,
    dir: PathBuf,
    /// The command line the folder belongs to and its tasks run: this process's (`None`), or a
    /// part's ([`Slurm::part`]).
    argv: Option<Vec<String>>,
    /// Rounds begun so far.
    rounds: AtomicUsize,
}

impl Slurm {
    /// The rounds of `--slurm DIR`, or of `--resume DIR` (the same folder, its points run here).
    pub fn new(args: &SlurmArgs) -> Option<Slurm> {
        args.slurm.as_ref().or(args.resume.as_ref()).map(|d| Slurm { args: args.clone(), dir: d.clone(), argv: None, rounds: AtomicUsize::new(0) })
    }

    /// The rounds of one part of this command (`experiment all` runs each experiment as a
    /// part): in the folder `DIR/<name>`, which belongs to `argv`, the part's own command line
    /// (the one its tasks run), with its rounds counted from 1.
    pub fn part(&self, name: &str, argv: Vec<String>) -> Slurm {
        Slurm { args: self.args.clone(), dir: self.dir.join(name), argv: Some(argv), rounds: AtomicUsize::new(0) }
    }

    /// The folder: `DIR`, or a part's `DIR/<name>`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// This command is made of parts ([`Slurm::part`]): its folder must be one of folders,
    /// and a task belongs to a part's command line, not to the whole.
    pub fn check_parts(&self) -> Result<()> {
        if self.args.slurm_round.is_some() {
            bail!("--slurm-round: a task computes a point of one part's command line, not of the whole (`experiment <name>`, not `all`)");
        }
        // (a folder of one command line, an experiment's say, is not a folder of folders)
        let c = self.dir.join("command.txt");
        if let Ok(text) = std::fs::read_to_string(&c) {
            bail!(
                "{} {}: the folder holds the points of one command line ({}: `{}`), while `experiment all` keeps each experiment in a folder of its own under it: give a new folder, and move an experiment's folder to `<folder>/<name>` to have `all` use its points",
                self.flag(),
                self.dir.display(),
                c.display(),
                text.lines().skip(1).collect::<Vec<_>>().join(" ")
            );
        }
        Ok(())
    }

    /// The command line the folder belongs to.
    fn argv(&self) -> Result<Vec<String>> {
        match &self.argv {
            Some(a) => Ok(a.clone()),
            None => args(),
        }
    }

    /// Under `--resume`: the points run here, on the progress bar's workers.
    pub fn local(&self) -> bool {
        self.args.resume.is_some()
    }

    /// The option that named the folder, for messages.
    fn flag(&self) -> &'static str {
        if self.local() {
            "--resume"
        } else {
            "--slurm"
        }
    }

    /// The next round's results: read back when all are in; otherwise this process ends here
    /// (after computing its one point, as a task; after writing and submitting the round, or
    /// reporting what is missing). Under `--resume` the points without a result are computed
    /// here: `here(todo, each)` runs `each` on every index of `todo` (on the caller's workers),
    /// which computes the point and writes its result.
    pub fn round<T: Sync, R: Shipped>(&self, label: &str, items: &[T], name: impl Fn(&T) -> String, f: impl Fn(&T) -> R + Sync, here: impl FnOnce(&[usize], &(dyn Fn(usize) -> Result<()> + Sync)) -> Vec<Result<()>>) -> Vec<R> {
        let r = self.rounds.fetch_add(1, Ordering::Relaxed) + 1;
        match self.try_round(r, label, items, name, f, here) {
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

    fn try_round<T: Sync, R: Shipped>(&self, r: usize, label: &str, items: &[T], name: impl Fn(&T) -> String, f: impl Fn(&T) -> R + Sync, here: impl FnOnce(&[usize], &(dyn Fn(usize) -> Result<()> + Sync)) -> Vec<Result<()>>) -> Result<Vec<R>, End> {
        if r == 1 {
            self.same_command().map_err(End::error)?;
        }
        let rd = self.dir.join(format!("round-{r}"));
        let names: Vec<String> = items.iter().map(|t| name(t).replace('\n', " ")).collect();
        let listed = rd.join("points.txt");
        match std::fs::read_to_string(&listed) {
            Ok(text) => {
                let old = read_points(&text);
                if old != names.iter().map(String::as_str).collect::<Vec<_>>() {
                    let first = (0..old.len().max(names.len())).find(|&i| old.get(i).copied() != names.get(i).map(String::as_str)).unwrap_or(0);
                    return Err(End::error(anyhow!(
                        "{} {}: round {r} was written for other points ({} there, {} now; point {first} is `{}` there and `{}` now): give the command line that wrote it, or another folder",
                        self.flag(),
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
                std::fs::create_dir_all(rd.join("results")).and_then(|_| std::fs::create_dir_all(rd.join("logs"))).map_err(|e| End::error(anyhow!("{} {}: {e}", self.flag(), rd.display())))?;
                write(&listed, points_text(&names)).map_err(End::error)?;
            }
        }
        if self.args.slurm_round == Some(r) {
            return Err(self.task(&rd, r, items, &names, f));
        }
        let results = rd.join("results");
        let mut missing = missing_results(&results, items.len());
        if !missing.is_empty() && std::env::var_os(FOLLOW_UP).is_some() && rd.join("job").exists() {
            // (the follow-up job starts as the last task ends: on a network file system the
            // last results may show a little later; listing the folder again sees them)
            for _ in 0..12 {
                std::thread::sleep(std::time::Duration::from_secs(5));
                missing = missing_results(&results, items.len());
                if missing.is_empty() {
                    break;
                }
            }
        }
        if !missing.is_empty() && self.local() {
            // (each point's result kept as it comes: a run stopped now loses only the points
            // under way)
            let stored = here(&missing, &|i| store(&result_file(&rd, i), &f(&items[i])));
            stored.into_iter().collect::<Result<Vec<()>>>().map_err(End::error)?;
            missing.clear();
        }
        if missing.is_empty() {
            return (0..items.len()).map(|i| read_result(&result_file(&rd, i))).collect::<Result<Vec<R>>>().map_err(End::error);
        }
        if let Some(t) = self.args.slurm_round {
            return Err(End::error(anyhow!("--slurm {}: round {t} needs round {r}'s results, and {} of its {} points have none", self.dir.display(), missing.len(), items.len())));
        }
        let job = rd.join("job");
        if let Ok(id) = std::fs::read_to_string(&job) {
            let show: Vec<String> = missing.iter().take(8).map(|&i| format!("{i} ({}; log {})", names[i], rd.join("logs").join(log_pattern(items.len(), i / ARRAY_MAX * ARRAY_MAX).replace("%a", &(i % ARRAY_MAX).to_string())).display())).collect();
            return Err(End(
                NOT_FINISHED,
                format!(
                    "{label}: round {r} (job {}) has results for {} of {} points; without one: {}{}\n(run this command again once the job has ended; to submit the points without a result again, remove {})",
                    id.trim(),
                    items.len() - missing.len(),
                    items.len(),
                    show.join(", "),
                    if missing.len() > show.len() { format!(" and {} more", missing.len() - show.len()) } else { String::new() },
                    job.display()
                ),
            ));
        }
        Err(self.submit(&rd, r, label, items.len(), &missing).unwrap_or_else(End::error))
    }

    /// The command line that wrote `DIR` (`DIR/command.txt`, written by the first run), against
    /// this one: another command line's results are never mixed in. The options that do not
    /// change the points ([`NOT_POINTS`]: how and where they run, where the outputs go) are
    /// left out of the comparison, so a folder written under `--slurm` can be finished under
    /// `--resume`, or moved, and a part's folder serves the part run alone and the whole.
    fn same_command(&self) -> Result<()> {
        if self.dir.exists() && !self.dir.is_dir() {
            bail!("{} {}: not a folder (a file of that name is there): give a folder, new or one this command line wrote", self.flag(), self.dir.display());
        }
        let argv = self.argv()?;
        let kept = without(&argv, &["--jobs", "--sbatch", "--slurm-round"], NOT_POINTS_FLAGS);
        let text = format!("mpgpu {}\n{}\n", env!("CARGO_PKG_VERSION"), kept.join("\n"));
        let path = self.dir.join("command.txt");
        match std::fs::read_to_string(&path) {
            Ok(old) if points_of(&old) == points_of(&text) => Ok(()),
            Ok(old) => bail!(
                "{} {}: the folder holds the points of another command line ({}: `{}`; this one: `{}`): give that command line, or another folder",
                self.flag(),
                self.dir.display(),
                path.display(),
                old.lines().collect::<Vec<_>>().join(" "),
                text.lines().collect::<Vec<_>>().join(" ")
            ),
            Err(_) if self.args.slurm_round.is_some() => bail!("--slurm {}: {} is missing: a task runs only in a folder the command wrote", self.dir.display(), path.display()),
            Err(_) => {
                for c in self.dir.to_string_lossy().chars().filter(|_| !self.local()) {
                    if c.is_whitespace() || c == '%' || c == '\'' || c == '"' {
                        bail!("--slurm {}: the folder's path may not hold spaces, quotes or `%` (Slurm's log paths take it as written)", self.dir.display());
                    }
                }
                std::fs::create_dir_all(&self.dir).with_context(|| format!("{} {}", self.flag(), self.dir.display()))?;
                write(&path, &text)
            }
        }
    }

    /// As a task: computes its point and writes the result.
    fn task<T, R: Shipped>(&self, rd: &Path, r: usize, items: &[T], names: &[String], f: impl Fn(&T) -> R) -> End {
        // (a round of more points than one array takes is submitted as several, each task's
        // index offset by its array's first point)
        let offset = std::env::var("MPGPU_SLURM_OFFSET").ok().and_then(|v| v.trim().parse::<usize>().ok()).unwrap_or(0);
        let i = match std::env::var("SLURM_ARRAY_TASK_ID").ok().and_then(|v| v.trim().parse::<usize>().ok()).map(|i| i + offset) {
            Some(i) if i < items.len() => i,
            Some(i) => return End::error(anyhow!("--slurm-round {r}: SLURM_ARRAY_TASK_ID is {i}, but the round has {} points (0..={})", items.len(), items.len().saturating_sub(1))),
            None => return End::error(anyhow!("--slurm-round {r}: expected the point's index in SLURM_ARRAY_TASK_ID (set by Slurm for a job array's task)")),
        };
        eprintln!("round {r}, point {i}: {}", names[i]);
        match store(&result_file(rd, i), &f(&items[i])) {
            Ok(()) => End(0, String::new()),
            Err(e) => End::error(e),
        }
    }

    /// Writes the round's job arrays and follow-up, and submits them: the points in `missing`
    /// (all of them the first time), at most [`ARRAY_MAX`] to an array.
    fn submit(&self, rd: &Path, r: usize, label: &str, n: usize, missing: &[usize]) -> Result<End> {
        let cwd = std::env::current_dir().context("the current folder")?;
        let exe = std::env::current_exe().context("this program's path")?;
        let exe = exe.to_str().ok_or_else(|| anyhow!("this program's path {} is not UTF-8", exe.display()))?.to_string();
        // (the tasks run the folder's command line; the follow-up, this process's)
        let task_args = self.argv()?;
        let args = args()?;
        let abs = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) };
        let rd = abs(rd);
        // (`--slurm-round R` right after the subcommand, ahead of any `--`)
        let run = |round: Option<usize>| {
            let mut a = if round.is_some() { task_args.clone() } else { args.clone() };
            if let Some(r) = round {
                a.splice(1..1, ["--slurm-round".to_string(), r.to_string()]);
            }
            format!("set -eu\ncd -- {} || exit 1\nexec {} {}\n", quote(&cwd.display().to_string()), quote(&exe), a.iter().map(|x| quote(x)).collect::<Vec<_>>().join(" "))
        };
        let head = |what: &str, out: &Path| format!("#!/bin/bash\n# mpgpu {label}: {what} (written by mpgpu --slurm)\n#SBATCH --job-name=mpgpu-{label}-{r}\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --output={}\n", out.display());
        let mut arrays = Vec::new();
        for c in 0..n.div_ceil(ARRAY_MAX) {
            let first = c * ARRAY_MAX;
            let chunk: Vec<usize> = missing.iter().copied().filter(|i| i / ARRAY_MAX == c).collect();
            if chunk.is_empty() {
                continue;
            }
            let script = rd.join(if n <= ARRAY_MAX { "array.sh".to_string() } else { format!("array-{c}.sh") });
            write(
                &script,
                &format!(
                    "{}#SBATCH --array={}\nexport MPGPU_SLURM_OFFSET={first}\n{}",
                    head(&format!("round {r}, points {} of {n}, one per task (the point: {first} + the task's index)", ranges(chunk.iter().copied())), &rd.join("logs").join(log_pattern(n, first))),
                    ranges(chunk.iter().map(|&i| i - first)),
                    run(Some(r))
                ),
            )?;
            arrays.push(script);
        }
        let next = rd.join("next.sh");
        write(&next, &format!("{}export {FOLLOW_UP}=1\n{}", head(&format!("after round {r}, the next round or the outputs"), &rd.join("next.out")), run(None)))?;
        if self.args.no_submit {
            return Ok(End(0, format!("{label}: round {r}'s {n} points are in {} (not submitted: `sbatch` {}, then run this command again)", rd.display(), arrays.iter().map(|a| a.display().to_string()).collect::<Vec<_>>().join(", "))));
        }
        let extra: Vec<String> = self.args.sbatch.as_deref().map(|s| s.split_whitespace().map(String::from).collect()).unwrap_or_default();
        let mut ids = Vec::new();
        for a in &arrays {
            ids.push(sbatch(&extra, &[], a)?);
        }
        write(&rd.join("job"), format!("{}\n", ids.join(" ")))?;
        let then = sbatch(&extra, &[format!("--dependency=afterany:{}", ids.join(":"))], &next)
            .with_context(|| format!("the points are submitted (job {}), but not the follow-up: run this command again once they have ended", ids.join(" ")))?;
        Ok(End(
            0,
            format!(
                "{label}: round {r}'s {} points submitted as job array {}; job {then} runs this command again when it has ended (the next round, or the outputs, with its standard output in {})",
                missing.len(),
                ids.join(", "),
                rd.join("next.out").display()
            ),
        ))
    }
}

/// How the process ends instead of going on: its exit code and what it says.
struct End(i32, String);

impl End {
    fn error(e: anyhow::Error) -> End {
        End(2, format!("error: {e:#}"))
    }
}

/// `text` written to `path` through a temporary file of this process's own, so that a reader
/// never sees half of it (nor two writers' halves: a point run twice).
fn write(path: &Path, text: impl AsRef<[u8]>) -> Result<()> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let tmp = path.with_extension(format!("{}-{}.tmp", host.trim(), std::process::id()));
    std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).with_context(|| format!("{}", path.display()))
}

/// A point's result written to its file.
fn store<R: Shipped>(path: &Path, res: &R) -> Result<()> {
    let mut bytes = Vec::new();
    ciborium::into_writer(&res.ship(), &mut bytes).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    write(path, bytes)
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

/// Set in the follow-up job's environment: results still missing are looked for again for a
/// minute before they count as missing.
const FOLLOW_UP: &str = "MPGPU_SLURM_FOLLOW_UP";

/// The points of a round of `n` without a result file in `results` (the folder listed, so that
/// a network file system's cached "no such file" does not hide a new one).
fn missing_results(results: &Path, n: usize) -> Vec<usize> {
    let mut have = vec![false; n];
    if let Ok(rd) = std::fs::read_dir(results) {
        for e in rd.flatten() {
            if let Some(i) = e.file_name().to_str().and_then(|f| f.strip_suffix(RESULT_EXT)).and_then(|i| i.parse::<usize>().ok()) {
                if i < n {
                    have[i] = true;
                }
            }
        }
    }
    (0..n).filter(|&i| !have[i]).collect()
}

/// The most points one job array takes (Slurm's default `MaxArraySize` is 1001: indices 0..=1000).
const ARRAY_MAX: usize = 1000;

/// The ending of a result file's name, after the point's index.
const RESULT_EXT: &str = ".cbor";

/// The result file of point `i` of the round in folder `rd`.
fn result_file(rd: &Path, i: usize) -> PathBuf {
    rd.join("results").join(format!("{i}{RESULT_EXT}"))
}

/// The log file of a task of the array whose first point is `first`, in a round of `n` points
/// (`%a`: the task's index): `<point>.out` when one array holds the round.
fn log_pattern(n: usize, first: usize) -> String {
    if n <= ARRAY_MAX {
        "%a.out".into()
    } else {
        format!("{first}+%a.out")
    }
}

/// The options that do not change a command's points: how and where they run (`--jobs`,
/// `--sbatch`, a task's `--slurm-round`, the folder of `--resume` or `--slurm`) and where the
/// outputs go (`--out`, `--docs`); each takes a value.
pub const NOT_POINTS: &[&str] = &["--jobs", "--sbatch", "--slurm-round", "--resume", "--slurm", "--out", "--docs"];

/// The flags (no value) that do not change a command's points.
const NOT_POINTS_FLAGS: &[&str] = &["--no-submit"];

/// `argv` without the options of `valued` (and their values, given apart or after `=`) and
/// the flags of `flags`; an option given as `--name=value` is kept as `--name value`.
fn without(argv: &[String], valued: &[&str], flags: &[&str]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            kept.extend(it.cloned());
            break;
        }
        if valued.contains(&a.as_str()) {
            it.next();
        } else if let Some((name, value)) = a.split_once('=').filter(|(n, _)| n.starts_with("--")) {
            if !valued.contains(&name) {
                kept.extend([name.to_string(), value.to_string()]);
            }
        } else if !flags.contains(&a.as_str()) {
            kept.push(a.clone());
        }
    }
    kept
}

/// What a `command.txt` says of the points: its version line and its arguments without the
/// options of [`NOT_POINTS`].
fn points_of(text: &str) -> (String, Vec<String>) {
    let mut lines = text.lines();
    let version = lines.next().unwrap_or("").to_string();
    let argv: Vec<String> = lines.map(String::from).collect();
    (version, without(&argv, NOT_POINTS, NOT_POINTS_FLAGS))
}

/// The command line's arguments after the program's name.
pub(crate) fn args() -> Result<Vec<String>> {
    std::env::args_os().skip(1).map(|a| a.into_string().map_err(|a| anyhow!("--slurm: the argument {a:?} is not UTF-8"))).collect()
}

/// `0-3,5,7-8`: the indices as Slurm's `--array` takes them (ascending).
fn ranges(v: impl Iterator<Item = usize>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    for i in v {
        run = match run {
            Some((a, b)) if i == b + 1 => Some((a, i)),
            Some((a, b)) => {
                out.push(if a == b { a.to_string() } else { format!("{a}-{b}") });
                Some((i, i))
            }
            None => Some((i, i)),
        };
    }
    if let Some((a, b)) = run {
        out.push(if a == b { a.to_string() } else { format!("{a}-{b}") });
    }
    out.join(",")
}

/// A round's `points.txt`: one line per point (an empty round is an empty file).
fn points_text(names: &[String]) -> String {
    names.iter().map(|n| format!("{n}\n")).collect()
}

/// The points a round's `points.txt` lists (a file holding only a newline, as an empty round
/// was once written, lists none).
fn read_points(text: &str) -> Vec<&str> {
    if text == "\n" {
        return Vec::new();
    }
    text.lines().collect()
}

/// `s` quoted for the shell.
fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_belongs_to_the_points_not_to_where_they_ran() {
        let text = |args: &str| format!("mpgpu 0.1.0\n{}\n", args.split(' ').collect::<Vec<_>>().join("\n"));
        let same = |a: &str, b: &str| points_of(&text(a)) == points_of(&text(b));
        // (the folder, the outputs' places, the workers and the submission: not the points)
        assert!(same("experiment warped-slicer --resume /a --out /o --docs /d", "experiment warped-slicer --slurm=/b/warped-slicer --jobs 2 --no-submit"));
        assert!(same("sweep vecadd --regs 8..16:8 --resume=/a", "sweep vecadd --sbatch -p --regs 8..16:8 --slurm /a"));
        // (anything else is)
        assert!(!same("experiment warped-slicer --resume /a", "experiment warped-slicer --resume /a --quick"));
        assert!(!same("experiment warped-slicer --resume /a", "experiment zorua --resume /a"));
        assert!(!same("sweep vecadd --regs 8..16:8", "sweep vecadd --regs 8..24:8"));
        assert!(points_of("mpgpu 0.1.0\nx\n") != points_of("mpgpu 0.2.0\nx\n"));
        // (`--name=value` is `--name value`; the order of the rest counts)
        assert!(same("experiment zorua --max-cycles=9 --quick", "experiment zorua --max-cycles 9 --quick"));
        assert!(!same("experiment zorua --max-cycles 9 --quick", "experiment zorua --quick --max-cycles 9"));
    }

    #[test]
    fn array_indices_and_log_names() {
        assert_eq!(ranges([0, 1, 2, 3, 5, 7, 8].into_iter()), "0-3,5,7-8");
        assert_eq!(ranges([4].into_iter()), "4");
        assert_eq!(log_pattern(1000, 0), "%a.out");
        assert_eq!(log_pattern(1071, 1000), "1000+%a.out");
        assert_eq!(quote("a b'c"), "'a b'\\''c'");
        assert_eq!(quote("--regs=8..24:8"), "--regs=8..24:8");
    }

    #[test]
    fn a_rounds_points_read_back_as_written_even_when_there_are_none() {
        for names in [vec![], vec!["a b".to_string(), "c".to_string()]] {
            let text = points_text(&names);
            assert_eq!(read_points(&text), names.iter().map(String::as_str).collect::<Vec<_>>(), "{text:?}");
        }
    }
}
