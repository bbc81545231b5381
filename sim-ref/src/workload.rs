//! Multiprogrammed workloads: a TOML file lists processes, each with its kernel launches
//! (library application, size, seed), arrival cycle, repeat count and priority.
//!
//! ```toml
//! description = "two processes: compute-bound sgemm against streaming lbm"
//! [[process]]
//! name = "sgemm"
//! arrival = 0          # cycle the process submits its first launch
//! priority = 1         # larger is more important (used by priority policies)
//! repeat = 2           # the launch list runs this many times
//! launches = [{ kernel = "sgemm", size = 128, seed = 1 }]
//! ```

use crate::text::quoted as q;
use crate::config::{check_size, read_capped, toml_error};
use crate::library::{self, Bench};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// The workload `mpgpu run` uses when given none.
pub const DEFAULT_WORKLOAD: &str = include_str!("../../workloads/default.toml");

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchSpec {
    /// Library application (see `mpgpu kernels`).
    pub kernel: String,
    /// Problem size; the application's default when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    #[serde(default = "one64")]
    pub seed: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessSpec {
    pub name: String,
    #[serde(default)]
    pub arrival: u64,
    #[serde(default)]
    pub priority: u32,
    #[serde(default = "one")]
    pub repeat: u32,
    /// DSS tokens (SM budget) under the `dss` policy; Equal Spatial Sharing when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<i8>,
    /// In a replayed workload (`min_runs`), whether this process is replayed too (default);
    /// `false`: it runs its list once, and counts as done when that run ends (the thesis's
    /// priority workloads: docs/results.md, "The thesis's workloads").
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub replay: bool,
    /// Halt the process once it has executed this many warp-instructions, replaying its launch
    /// list until then (Warped-Slicer's run length, §V-A: each application until it has executed
    /// what it executes alone in 2 M cycles). At the halt its blocks not yet issued are dropped
    /// (those on the SMs run to their end) and its turnaround is the halt's cycle less its
    /// arrival. Absent: it runs its list once (or under `min_runs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insts: Option<u64>,
    pub launches: Vec<LaunchSpec>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub description: String,
    /// Replay: every process starts its launch list again when it finishes, until each has
    /// completed at least this many runs; the run then ends (the replays under way are cut
    /// short), and a process's turnaround is the mean of its completed runs' (the thesis's
    /// methodology, Tanasić 2016 §5.3.1). Absent: each process runs its list once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_runs: Option<u32>,
    /// At most [`MAX_PROCESSES`]: the reader stops at the first one past that.
    #[serde(rename = "process", deserialize_with = "at_most_max_processes")]
    pub processes: Vec<ProcessSpec>,
}

/// The largest instruction target (`ProcessSpec::insts`).
pub const MAX_INSTS: u64 = 1 << 50;

/// Processes a workload may have.
pub const MAX_PROCESSES: usize = 64;

/// The largest `min_runs`, and the most runs any process of a replayed workload may start: a
/// process that would start more (one far shorter than another) stops the run with an error,
/// since every run allocates its own memory.
pub const MAX_RUNS: u32 = 100;

/// The `[[process]]` tables, refused as soon as there is one more than [`MAX_PROCESSES`]
/// (before that one is read, and before any is validated).
fn at_most_max_processes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<ProcessSpec>, D::Error> {
    struct Seq;
    impl<'de> serde::de::Visitor<'de> for Seq {
        type Value = Vec<ProcessSpec>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "an array of at most {MAX_PROCESSES} [[process]] tables")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut v = Vec::new();
            while v.len() < MAX_PROCESSES {
                match seq.next_element()? {
                    Some(p) => v.push(p),
                    None => return Ok(v),
                }
            }
            match seq.next_element::<serde::de::IgnoredAny>()? {
                None => Ok(v),
                Some(_) => Err(serde::de::Error::custom(format!("field `process`: more than {MAX_PROCESSES} processes (at most {MAX_PROCESSES} are supported)"))),
            }
        }
    }
    d.deserialize_seq(Seq)
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn one64() -> u64 {
    1
}

/// A workload error naming the file and the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    pub file: String,
    pub msg: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "workload {}: {}", self.file, self.msg)
    }
}

impl std::error::Error for WorkloadError {}

impl Workload {
    /// Reads, parses and validates a workload file of at most [`MAX_FILE_BYTES`](crate::config::MAX_FILE_BYTES).
    pub fn load(path: &Path) -> Result<Workload, WorkloadError> {
        let file = path.display().to_string();
        let text = read_capped(path, "workload").map_err(|msg| WorkloadError { file: file.clone(), msg })?;
        Workload::parse(&file, &text)
    }

    /// `p` by itself, run once: the run a process's shared turnaround is measured against.
    pub fn alone(p: &ProcessSpec) -> Workload {
        Workload { description: format!("{} alone", p.name), min_runs: None, processes: vec![p.clone()] }
    }

    /// The embedded default workload.
    pub fn default_workload() -> Workload {
        Workload::parse("(default)", DEFAULT_WORKLOAD).expect("the embedded default workload is valid")
    }

    /// Parses and validates TOML text (at most [`MAX_FILE_BYTES`](crate::config::MAX_FILE_BYTES)); `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Workload, WorkloadError> {
        let err = |msg: String| WorkloadError { file: file.into(), msg };
        check_size(text.len(), "workload").map_err(err)?;
        let w: Workload = toml::from_str(text).map_err(|e| err(toml_error(text, &e)))?;
        w.validate().map_err(err)?;
        Ok(w)
    }

    /// The workload as a TOML file in the shipped style (one `[[process]]` table per process,
    /// launches as an inline array) that [`Workload::parse`] reads back identically. Every field
    /// is written, defaults included; absent `size` and `tokens` stay absent.
    ///
    /// Panics if a value has no TOML form, which only a workload that fails
    /// [`Workload::validate`] can have (a `seed` above `i64::MAX`: TOML integers are signed).
    pub fn to_toml(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(out, "description = {}", toml_string(&self.description));
        if let Some(n) = self.min_runs {
            let _ = writeln!(out, "min_runs = {}", toml_value(&n));
        }
        for p in &self.processes {
            out.push_str("\n[[process]]\n");
            let _ = writeln!(out, "name = {}", toml_string(&p.name));
            let _ = writeln!(out, "arrival = {}", toml_value(&p.arrival));
            let _ = writeln!(out, "priority = {}", toml_value(&p.priority));
            let _ = writeln!(out, "repeat = {}", toml_value(&p.repeat));
            if let Some(t) = p.tokens {
                let _ = writeln!(out, "tokens = {}", toml_value(&t));
            }
            if !p.replay {
                let _ = writeln!(out, "replay = false");
            }
            if let Some(n) = p.insts {
                let _ = writeln!(out, "insts = {}", toml_value(&n));
            }
            let _ = writeln!(out, "launches = {}", toml_value(&p.launches));
        }
        out
    }

    /// Checks names, counts and every launch (kernel known, size accepted by it).
    pub fn validate(&self) -> Result<(), String> {
        if self.description.trim().is_empty() {
            return Err("field `description`: must say what the workload is".into());
        }
        if self.processes.is_empty() {
            return Err("no [[process]]: at least one process is needed".into());
        }
        if let Some(n) = self.min_runs.filter(|n| !(1..=MAX_RUNS).contains(n)) {
            return Err(format!("field `min_runs`: {n} is out of range (expected 1..={MAX_RUNS})"));
        }
        if self.processes.len() > MAX_PROCESSES {
            return Err(format!("field `process`: {} processes (at most {MAX_PROCESSES} are supported)", self.processes.len()));
        }
        let mut accepted = std::collections::HashSet::new();
        for (i, p) in self.processes.iter().enumerate() {
            let at = format!("process[{i}] ({})", q(&p.name));
            if p.name.trim().is_empty() {
                return Err(format!("process[{i}]: field `name` must not be empty"));
            }
            if let Some(j) = self.processes[..i].iter().position(|q| q.name == p.name) {
                return Err(format!("{at}: duplicate name (also process[{j}])"));
            }
            if p.repeat == 0 || p.repeat > 1000 {
                return Err(format!("{at}: field `repeat`: {} is out of range (expected 1..=1000)", p.repeat));
            }
            if p.arrival > 1 << 40 {
                return Err(format!("{at}: field `arrival`: {} is out of range (expected 0..=2^40 cycles)", p.arrival));
            }
            if let Some(t) = p.tokens {
                if !(0..=64).contains(&t) {
                    return Err(format!("{at}: field `tokens`: {t} is out of range (expected 0..=64)"));
                }
            }
            if !p.replay && self.min_runs.is_none() && p.insts.is_none() {
                return Err(format!("{at}: field `replay = false` applies to a replayed workload (`min_runs`): without it every process runs once"));
            }
            if let Some(n) = p.insts {
                if !(1..=MAX_INSTS).contains(&n) {
                    return Err(format!("{at}: field `insts`: {n} is out of range (expected 1..=2^50 warp-instructions)"));
                }
                if self.min_runs.is_some() {
                    return Err(format!("{at}: field `insts` halts the process at an instruction count, and `min_runs` ends the run at a number of runs: give one of them"));
                }
                if !p.replay {
                    return Err(format!("{at}: field `insts` replays the process until it halts: `replay = false` does not apply"));
                }
            }
            if p.launches.is_empty() {
                return Err(format!("{at}: field `launches` is empty: a process needs at least one launch"));
            }
            for (j, l) in p.launches.iter().enumerate() {
                let b = find(&l.kernel).map_err(|e| format!("{at}: launches[{j}]: {e}"))?;
                if l.seed > i64::MAX as u64 {
                    return Err(format!("{at}: launches[{j}]: field `seed`: {} is out of range (expected 0..=2^63-1)", l.seed));
                }
                let size = l.size.unwrap_or(b.default_size);
                // Building the host program checks the size without touching GPU memory. It
                // assembles the application's kernels each time, and whether a size is
                // accepted does not depend on the seed: each (application, size) is built once.
                if !accepted.contains(&(b.name, size)) {
                    b.program(size, l.seed).map_err(|e| format!("{at}: launches[{j}]: {e}"))?;
                    accepted.insert((b.name, size));
                }
            }
        }
        Ok(())
    }
}

/// A TOML basic string: quoted, with `"`, `\` and control characters escaped. (Free text
/// is written here rather than by the `toml` crate, whose writer counts runs of quotes in a
/// `u8`: 256 quotes in a row overflow it.)
fn toml_string(s: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One value in TOML's inline form (strings quoted and escaped, tables and arrays inline).
fn toml_value<T: Serialize + ?Sized>(v: &T) -> String {
    let mut s = String::new();
    v.serialize(toml::ser::ValueSerializer::new(&mut s)).unwrap_or_else(|e| panic!("workload value has no TOML form: {e}"));
    s
}

/// The library application called `name`, or an error listing the library.
pub fn find(name: &str) -> Result<Bench, String> {
    library::find(name).ok_or_else(|| {
        let names: Vec<_> = library::library().iter().map(|b| b.name).collect();
        format!("unknown kernel {} (the library has: {})", q(name), names.join(", "))
    })
}
