//! What the readers' property tests share (`sim-ref/tests/fuzz_readers.rs` and
//! `testbenches/tests/fuzz_trace.rs`): a runner with a fixed seed and a bounded case count,
//! mutations of valid files, a counting allocator that measures each call's peak memory, and
//! catching a panic as a failure that shows the input.

#![allow(dead_code)]

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

// ---------------------------------------------------------------------------------------------
// Memory

/// Counts the bytes allocated by each thread (a reader runs on the test's thread), and the peak.
struct Counting;

thread_local! {
    static NOW: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = NOW.try_with(|n| {
        let v = n.get() + delta;
        n.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            count(l.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            count(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        count(-(l.size() as isize));
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            count(new as isize - l.size() as isize);
        }
        q
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Runs `f` and returns what it returned and the most bytes it held allocated at once (on this
/// thread, over what was allocated before the call).
pub fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = NOW.with(|n| n.get());
    PEAK.with(|p| p.set(base));
    let r = f();
    let top = PEAK.with(|p| p.get());
    (r, (top - base).max(0) as usize)
}

pub const MIB: usize = 1 << 20;

// ---------------------------------------------------------------------------------------------
// Running

/// A runner with a fixed seed (ChaCha; `seed` picks one of 256) and `cases` cases; failures
/// are not persisted and shrinking is bounded, so every run runs the same cases.
pub fn runner(seed: u8, cases: u32) -> TestRunner {
    let config = Config { cases, failure_persistence: None, max_shrink_iters: 2000, max_shrink_time: 60_000, ..Config::default() };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]))
}

/// Runs `f` on `input`, turning a panic into a failure that shows the input (cut to 2000
/// characters) and the panic's message; also returns the call's peak memory.
pub fn call<T>(what: &str, input: &str, f: impl FnOnce() -> T) -> Result<(T, usize), TestCaseError> {
    let (r, bytes) = peak(|| catch_unwind(AssertUnwindSafe(f)));
    match r {
        Ok(v) => Ok((v, bytes)),
        Err(p) => {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
            Err(TestCaseError::fail(format!("{what} panicked ({msg}) on {:?}", shown(input))))
        }
    }
}

/// `input` cut to 2000 characters, for a failure message.
pub fn shown(input: &str) -> String {
    match input.char_indices().nth(2000) {
        None => input.to_string(),
        Some((at, _)) => format!("{}… ({} bytes)", &input[..at], input.len()),
    }
}

/// Runs `cases` of `strategy` through `test` and panics with proptest's report (the smallest
/// failing input it found) on a failure; returns the number of cases that ran.
pub fn run<S: Strategy>(name: &str, seed: u8, cases: u32, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) -> u32 {
    let mut r = runner(seed, cases);
    TALLY.with(|t| t.set((0, 0)));
    let ran = Cell::new(0u32);
    let out = r.run(&strategy, |v| {
        ran.set(ran.get() + 1);
        test(v)
    });
    if let Err(e) = out {
        panic!("{name}: {e}");
    }
    let (read, refused) = TALLY.with(|t| t.replace((0, 0)));
    eprintln!("{name}: {cases} cases passed ({read} read, {refused} refused with an error)");
    ran.get()
}

thread_local! {
    static TALLY: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
}

/// Counts a case's outcome (read, or refused) for [`run`]'s report.
pub fn tally(read: bool) {
    TALLY.with(|t| {
        let (a, b) = t.get();
        t.set(if read { (a + 1, b) } else { (a, b + 1) });
    });
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// Numbers at and past the edges of every integer and float width a reader might hold.
pub const HUGE: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "4294967295",
    "4294967296",
    "2147483648",
    "-2147483649",
    "65536",
    "0x7fffffff",
    "0xffffffff",
    "0x100000000",
    "0xffffffffffffffff",
    "0x8000000000000000",
    "0xfffffffffffffffffffff",
    "1e308",
    "1e400",
    "-1e400",
    "1e-400",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "-0",
    "0",
    "-1",
    "340282366920938463463374607431768211456",
    "0f7fc00000",
    "0fffffffff",
];

/// Bytes a long token is made of: letters, digits, the punctuation that opens a nested value
/// or a string in the readers' languages, and a few that end one.
pub const LONG_BYTES: &[u8] = b"ar9x_.%$[{(\"'-+,=:@!#\\ \t\n]}";

/// One change to a file.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// A byte xor-ed with a mask.
    Flip(Index, u8),
    /// Up to n bytes deleted.
    Delete(Index, usize),
    /// A line repeated n more times.
    DupLine(Index, usize),
    /// Up to n bytes of another file (index into the seed files) from the given place inserted.
    Splice(Index, usize, Index, usize),
    /// The number at (or after) the place replaced with one of [`HUGE`].
    Huge(Index, usize),
    /// n copies of one byte inserted: a very long token, or deep nesting.
    Long(Index, u8, usize),
    /// Arbitrary bytes inserted.
    Insert(Index, Vec<u8>),
}

pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<Index>(), 1u8..=255).prop_map(|(i, m)| Mutation::Flip(i, m)),
        2 => (any::<Index>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        2 => (any::<Index>(), prop_oneof![4 => 1usize..4, 1 => 50usize..2000]).prop_map(|(i, n)| Mutation::DupLine(i, n)),
        2 => (any::<Index>(), any::<usize>(), any::<Index>(), 1usize..400).prop_map(|(i, f, j, n)| Mutation::Splice(i, f, j, n)),
        3 => (any::<Index>(), 0..HUGE.len()).prop_map(|(i, h)| Mutation::Huge(i, h)),
        2 => (any::<Index>(), proptest::sample::select(LONG_BYTES), prop_oneof![3 => 1usize..300, 1 => 1000usize..70_000]).prop_map(|(i, b, n)| Mutation::Long(i, b, n)),
        2 => (any::<Index>(), proptest::collection::vec(any::<u8>(), 1..16)).prop_map(|(i, b)| Mutation::Insert(i, b)),
    ]
}

/// One of `seeds` (by index) and 1 to 6 mutations.
pub fn mutated(seeds: usize) -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    (0..seeds, proptest::collection::vec(mutation(), 1..=6))
}

/// `seeds[base]` with `ms` applied in turn.
pub fn apply(seeds: &[Vec<u8>], base: usize, ms: &[Mutation]) -> Vec<u8> {
    let mut b = seeds[base].clone();
    let at = |i: &Index, len: usize| i.index(len + 1); // a place 0..=len
    for m in ms {
        match m {
            Mutation::Flip(i, mask) => {
                if !b.is_empty() {
                    let k = i.index(b.len());
                    b[k] ^= mask;
                }
            }
            Mutation::Delete(i, n) => {
                if !b.is_empty() {
                    let k = i.index(b.len());
                    let end = (k + n).min(b.len());
                    b.drain(k..end);
                }
            }
            Mutation::DupLine(i, n) => {
                let k = at(i, b.len());
                let start = b[..k].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1);
                let end = b[k..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| k + p + 1);
                let mut line = b[start..end].to_vec();
                if line.last() != Some(&b'\n') {
                    line.push(b'\n');
                }
                let copies: Vec<u8> = line.iter().copied().cycle().take(line.len() * n).collect();
                b.splice(end..end, copies);
            }
            Mutation::Splice(i, f, j, n) => {
                let other = &seeds[f % seeds.len()];
                let s = at(j, other.len());
                let piece = other[s..(s + n).min(other.len())].to_vec();
                let k = at(i, b.len());
                b.splice(k..k, piece);
            }
            Mutation::Huge(i, h) => {
                let k = at(i, b.len());
                let new = HUGE[*h].as_bytes().to_vec();
                match b[k..].iter().position(|c| c.is_ascii_digit()) {
                    Some(p) => {
                        let s = k + p;
                        let e = b[s..].iter().position(|c| !(c.is_ascii_alphanumeric() || *c == b'.')).map_or(b.len(), |q| s + q);
                        b.splice(s..e, new);
                    }
                    None => {
                        b.splice(k..k, new);
                    }
                }
            }
            Mutation::Long(i, c, n) => {
                let k = at(i, b.len());
                b.splice(k..k, std::iter::repeat_n(*c, *n));
            }
            Mutation::Insert(i, bytes) => {
                let k = at(i, b.len());
                b.splice(k..k, bytes.iter().copied());
            }
        }
    }
    b
}

/// The words of `seeds` (split at whitespace) and the punctuation of the readers' languages:
/// the vocabulary of "token soup" inputs, arbitrary sequences of a language's own tokens.
pub fn vocabulary(seeds: &[Vec<u8>]) -> Vec<String> {
    let mut v: Vec<String> = seeds.iter().flat_map(|s| String::from_utf8_lossy(s).split_whitespace().map(str::to_string).collect::<Vec<_>>()).collect();
    v.extend(["\n", "\n", "\n", " ", " ", "\t", "\r\n", ",", "[", "]", "{", "}", "=", "\"", "'", "\"\"\"", "#", ":", ";", "@", "!", "+", "-", ".", "//"].map(str::to_string));
    v.extend(HUGE.iter().map(|h| h.to_string()));
    v.sort();
    v.dedup();
    v
}

/// Sequences of 0 to `max` words of `vocab`, joined (with a space after each one half the time).
pub fn soup(vocab: Vec<String>, max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec((proptest::sample::select(vocab), any::<bool>()), 0..max).prop_map(|ws| {
        let mut s = String::new();
        for (w, space) in ws {
            s.push_str(&w);
            if space {
                s.push(' ');
            }
        }
        s
    })
}

/// Arbitrary bytes, 0 to `max` of them.
pub fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}
