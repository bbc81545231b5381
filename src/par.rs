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
/// [`Progress::map`]. When standard error is not a terminal (a run under `nohup`, a batch job)
/// the bar is hidden and a line takes its place at most every [`LINE_EVERY`] as points end.
pub struct Progress {
    bar: indicatif::ProgressBar,
    workers: usize,
    label: String,
    /// `--slurm`: the points go out as job arrays instead ([`crate::slurm`]).
    slurm: Option<crate::slurm::Slurm>,
    /// Without a terminal: when this process started its points, the points it has run, and
    /// when the last progress line was written (none: the bar draws itself, or Slurm runs them).
    lines: Option<Mutex<Lines>>,
}

/// The least time between two progress lines without a terminal.
pub const LINE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

struct Lines {
    start: std::time::Instant,
    ran: u64,
    last: std::time::Instant,
    /// The part under way, for a command of parts ([`Progress::part`]).
    part: Option<Part>,
}

/// A part of a command's points (an experiment of `experiment all`), whose points may cost
/// other times than the other parts': its estimate is its own.
struct Part {
    name: String,
    /// The bar's position when it began, and its points.
    first: u64,
    len: u64,
    start: std::time::Instant,
    /// Its points run here so far.
    ran: u64,
    /// What comes after it, as the line says it (`, then ...`).
    then: String,
}

/// A duration as a progress line gives it: `42 s`, `17 min`, `2 h 05 min`.
fn span(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

impl Progress {
    /// A bar of `total` points labelled `label`, the points run `workers` at a time.
    pub fn new(label: &str, total: usize, workers: usize) -> Progress {
        Progress::drawn(label, total, workers, std::io::IsTerminal::is_terminal(&std::io::stderr()))
    }

    /// [`Progress::new`], drawn as a bar on a terminal or else as lines.
    fn drawn(label: &str, total: usize, workers: usize, terminal: bool) -> Progress {
        // (a hidden bar still counts the points, against the same length)
        let bar = indicatif::ProgressBar::with_draw_target(Some(total as u64), if terminal { indicatif::ProgressDrawTarget::stderr() } else { indicatif::ProgressDrawTarget::hidden() });
        bar.set_style(indicatif::ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} points, {msg} ({elapsed}, {eta} left)").unwrap().progress_chars("=> "));
        bar.set_prefix(label.to_string());
        let lines = (!terminal).then(|| {
            let now = std::time::Instant::now();
            Mutex::new(Lines { start: now, ran: 0, last: now, part: None })
        });
        Progress { bar, workers: workers.max(1), label: label.to_string(), slurm: None, lines }
    }

    /// A point ended here: the bar moves on, or without a terminal a line is written if the
    /// last is [`LINE_EVERY`] old.
    fn ran(&self) {
        if let Some(line) = self.line() {
            eprintln!("{line}");
        }
    }

    /// [`Progress::ran`]'s line, when one is due.
    fn line(&self) -> Option<String> {
        self.bar.inc(1);
        let mut l = self.lines.as_ref()?.lock().unwrap_or_else(|e| e.into_inner());
        l.ran += 1;
        if let Some(p) = &mut l.part {
            p.ran += 1;
        }
        if l.last.elapsed() < LINE_EVERY {
            return None;
        }
        l.last = std::time::Instant::now();
        let (pos, len) = (self.bar.position(), self.bar.length().unwrap_or(0));
        let took = l.start.elapsed();
        let head = format!("{}: {pos}/{len} points, {} so far", self.label, span(took));
        // (from the points run here: under `--resume` the kept ones took no time)
        Some(match &l.part {
            Some(p) => {
                let done = pos.saturating_sub(p.first).min(p.len);
                let left = p.start.elapsed().mul_f64(p.len.saturating_sub(done) as f64 / p.ran.max(1) as f64);
                format!("{head}; {}: {done}/{}, about {} left{}", p.name, p.len, span(left), p.then)
            }
            None => format!("{head}, about {} left", span(took.mul_f64(len.saturating_sub(pos) as f64 / l.ran as f64))),
        })
    }

    /// The next `points` points are the part `name`, followed by what `then` says (`, then
    /// ...`): the lines estimate the time left in the part from its own points, as the parts'
    /// points may cost very different times.
    pub fn part(&self, name: &str, points: usize, then: &str) {
        if let Some(l) = &self.lines {
            let mut l = l.lock().unwrap_or_else(|e| e.into_inner());
            l.part = Some(Part { name: name.to_string(), first: self.bar.position(), len: points as u64, start: std::time::Instant::now(), ran: 0, then: then.to_string() });
        }
    }

    /// The same, with the points of [`Progress::map_points`] run on Slurm if `--slurm` says so.
    pub fn with_slurm(mut self, args: &crate::slurm::SlurmArgs) -> Progress {
        self.slurm = crate::slurm::Slurm::new(args);
        if self.slurm.as_ref().is_some_and(|s| !s.local()) {
            self.bar = indicatif::ProgressBar::hidden();
            self.lines = None;
        }
        self
    }


    /// Puts `s` in place of the driver (a command of parts gives each part its own); the one
    /// it replaces.
    pub fn set_slurm(&mut self, s: Option<crate::slurm::Slurm>) -> Option<crate::slurm::Slurm> {
        std::mem::replace(&mut self.slurm, s)
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
                    self.ran();
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn without_a_terminal_a_line_comes_at_most_once_a_minute() {
        assert_eq!((span(Duration::from_secs(42)), span(Duration::from_secs(17 * 60 + 5)), span(Duration::from_secs(7500))), ("42 s".into(), "17 min".into(), "2 h 05 min".into()));
        let p = Progress::drawn("sweep", 10, 2, false);
        let now = Instant::now();
        assert_eq!(p.line(), None, "a line within the minute");
        {
            // (four points in 20 minutes, one of them just now: 6 left, about 30 minutes)
            let mut l = p.lines.as_ref().unwrap().lock().unwrap();
            l.start = now - Duration::from_secs(20 * 60);
            l.last = now - LINE_EVERY;
            l.ran = 3;
        }
        p.bar.inc(2);
        let line = p.line().expect("a line after a minute");
        assert!(line.starts_with("sweep: 4/10 points, 20 min so far, about 30 min left"), "{line}");
        assert_eq!(p.line(), None, "two lines within a minute");
        // A command of parts: the estimate is the part's own.
        p.part("zorua", 5, ", then warped-slicer");
        {
            // (the part's one point run here took 10 minutes: 4 left, about 40 minutes)
            let mut l = p.lines.as_ref().unwrap().lock().unwrap();
            l.part.as_mut().unwrap().start = now - Duration::from_secs(10 * 60);
            l.last = now - LINE_EVERY;
        }
        let line = p.line().expect("a line after a minute");
        assert!(line.ends_with("points, 20 min so far; zorua: 1/5, about 40 min left, then warped-slicer"), "{line}");
        // With a bar drawn (a terminal), no lines.
        let t = Progress::drawn("sweep", 10, 2, true);
        t.bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        assert!(t.lines.is_none() && t.line().is_none());
    }
}
