//! Independent simulations on every core: the points of a sweep run on `--jobs` threads, under
//! one progress bar, and come back in the order they were given, so that what a command writes
//! does not depend on how many ran at once (README, "On every core").

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `--jobs`, shared by every command that runs independent simulations.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct JobsArgs {
    /// Simulations run at once (default: the machine's cores; at most 256). The output is the
    /// same for every value.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,
}

impl JobsArgs {
    /// The worker threads: `--jobs`, or the cores the process may use.
    pub fn workers(&self) -> usize {
        self.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), usize::from).max(1)
    }
}

/// One progress bar over all the points a command runs, in one or more rounds of
/// [`Progress::map`]; hidden when standard error is not a terminal.
pub struct Progress {
    bar: indicatif::ProgressBar,
    workers: usize,
    label: String,
    /// `--slurm`: the points go out as job arrays instead ([`crate::slurm`]).
    slurm: Option<crate::slurm::Slurm>,
}

impl Progress {
    /// A bar of `total` points labelled `label`, the points run `workers` at a time.
    pub fn new(label: &str, total: usize, workers: usize) -> Progress {
        let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) { indicatif::ProgressBar::new(total as u64) } else { indicatif::ProgressBar::hidden() };
        bar.set_style(indicatif::ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} points, {msg} ({elapsed}, {eta} left)").unwrap().progress_chars("=> "));
        bar.set_prefix(label.to_string());
        Progress { bar, workers: workers.max(1), label: label.to_string(), slurm: None }
    }

    /// The same, with the points of [`Progress::map_points`] run on Slurm if `--slurm` says so.
    pub fn with_slurm(mut self, args: &crate::slurm::SlurmArgs) -> Progress {
        self.slurm = crate::slurm::Slurm::new(args);
        if self.slurm.as_ref().is_some_and(|s| !s.local()) {
            self.bar = indicatif::ProgressBar::hidden();
        }
        self
    }


    /// [`Progress::map`] for results that can travel through a file: under `--slurm` the points
    /// run as a job array, and this process either reads their results back or ends here
    /// ([`crate::slurm::Slurm::round`]).
    pub fn map_points<T: Sync, R: Send + crate::slurm::Shipped>(&self, items: &[T], name: impl Fn(&T) -> String + Sync, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
        match &self.slurm {
            Some(s) => s.round(&self.label, items, &name, f, |todo, each| {
                // (`--resume`: the points without a kept result, here; the others counted done)
                self.bar.inc((items.len() - todo.len()) as u64);
                self.map(todo, |&i| name(&items[i]), |&i| each(i))
            }),
            None => self.map(items, name, f),
        }
    }

    /// `f` of every item, on the bar's workers; the results in the items' order. `name` labels
    /// an item on the bar while it runs.
    pub fn map<T: Sync, R: Send>(&self, items: &[T], name: impl Fn(&T) -> String + Sync, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
        let next = AtomicUsize::new(0);
        let out: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
        let workers = self.workers.min(items.len()).max(1);
        std::thread::scope(|sc| {
            for _ in 0..workers {
                sc.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    self.bar.set_message(name(item));
                    let r = f(item);
                    self.bar.inc(1);
                    out.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                });
            }
        });
        out.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().map(|r| r.expect("every point ran")).collect()
    }

    /// The bar cleared from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
