//! Host programs: what runs on the CPU side of a GPU application. A program allocates and fills
//! its inputs, hands the GPU one launch at a time (the next launch may depend on results, as in
//! BFS), and finally checks the outputs against a plain-Rust computation.

use crate::kernel::Launch;
use crate::mem::GlobalMem;
use rand::SeedableRng;
use std::collections::VecDeque;
use std::fmt;

/// The seeded generator every program draws its inputs from.
pub type Rng = rand_chacha::ChaCha8Rng;

pub fn rng(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

/// A GPU application as seen from the host.
pub trait Program: Send {
    /// Allocates and initialises the inputs.
    fn setup(&mut self, mem: &mut GlobalMem);
    /// The next launch, given memory after the previous launches; `None` when done.
    fn next_launch(&mut self, mem: &GlobalMem) -> Option<Launch>;
    /// The output buffers and what they must hold.
    fn outputs(&self) -> &[Output];
    /// Checks the outputs.
    fn verify(&self, mem: &GlobalMem) -> Result<(), VerifyError> {
        for o in self.outputs() {
            o.check(mem)?;
        }
        Ok(())
    }
}

/// What an output buffer must hold.
#[derive(Clone, Debug)]
pub enum Expected {
    /// Exact words.
    U32(Vec<u32>),
    /// Floats within `abs` or `rel` of the reference (both as in `approx::relative_eq!`).
    F32 { vals: Vec<f32>, abs: f32, rel: f32 },
}

impl Expected {
    pub fn len(&self) -> usize {
        match self {
            Expected::U32(v) => v.len(),
            Expected::F32 { vals, .. } => vals.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One output buffer in global memory.
#[derive(Clone, Debug)]
pub struct Output {
    pub name: String,
    pub addr: u32,
    pub expected: Expected,
}

impl Output {
    pub fn check(&self, mem: &GlobalMem) -> Result<(), VerifyError> {
        let got = mem.read_u32s(self.addr, self.expected.len());
        let mut first = None;
        let mut count = 0;
        for (i, g) in got.iter().enumerate() {
            let ok = match &self.expected {
                Expected::U32(v) => v[i] == *g,
                Expected::F32 { vals, abs, rel } => approx::relative_eq!(f32::from_bits(*g), vals[i], epsilon = *abs, max_relative = *rel),
            };
            if !ok {
                count += 1;
                if first.is_none() {
                    let (exp, gs) = match &self.expected {
                        Expected::U32(v) => (v[i].to_string(), g.to_string()),
                        Expected::F32 { vals, .. } => (vals[i].to_string(), f32::from_bits(*g).to_string()),
                    };
                    first = Some((i, exp, gs));
                }
            }
        }
        match first {
            None => Ok(()),
            Some((index, expected, got)) => Err(VerifyError { output: self.name.clone(), index, expected, got, mismatches: count }),
        }
    }
}

/// The first wrong word of an output, and how many are wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub output: String,
    pub index: usize,
    pub expected: String,
    pub got: String,
    pub mismatches: usize,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "output `{}`[{}]: expected {}, got {} ({} word{} wrong)",
            self.output,
            self.index,
            self.expected,
            self.got,
            self.mismatches,
            if self.mismatches == 1 { "" } else { "s" }
        )
    }
}

impl std::error::Error for VerifyError {}

type Build = Box<dyn FnOnce(&mut GlobalMem) -> (Vec<Launch>, Vec<Output>) + Send>;

/// A program whose launches are all known once its inputs are in memory.
pub struct StaticProgram {
    build: Option<Build>,
    launches: VecDeque<Launch>,
    outputs: Vec<Output>,
}

impl StaticProgram {
    /// `build` allocates the inputs and returns the launches and the expected outputs.
    pub fn new(build: impl FnOnce(&mut GlobalMem) -> (Vec<Launch>, Vec<Output>) + Send + 'static) -> StaticProgram {
        StaticProgram { build: Some(Box::new(build)), launches: VecDeque::new(), outputs: Vec::new() }
    }
}

impl Program for StaticProgram {
    fn setup(&mut self, mem: &mut GlobalMem) {
        let build = self.build.take().expect("setup called twice");
        let (l, o) = build(mem);
        self.launches = l.into();
        self.outputs = o;
    }
    fn next_launch(&mut self, _mem: &GlobalMem) -> Option<Launch> {
        self.launches.pop_front()
    }
    fn outputs(&self) -> &[Output] {
        &self.outputs
    }
}
