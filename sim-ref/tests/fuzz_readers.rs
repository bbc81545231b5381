//! Property tests of the file readers (issue 51): the assembler, the workload reader and the
//! configuration reader are fed arbitrary bytes, arbitrary sequences of their languages' own
//! tokens, and mutations of the files the project ships (`kernels/*.s`, `workloads/**/*.toml`,
//! the configuration presets): flipped bytes, deletions, repeated lines, splices of two files,
//! huge numbers, very long tokens and deep nesting. Every case must return (a panic fails it),
//! within a memory bound (a counting allocator measures each call's peak), and an error must
//! name the file and the place (line and column, or the field), quoting at most a bounded
//! number of characters of the input. An input that reads must read back the same from its
//! printed form.
//!
//! The seed is fixed and the case counts bounded: every run runs the same cases. The readers
//! are synchronous and the inputs bounded in size, so a hang shows as a test that does not end.

mod fuzzing;

use fuzzing::{apply, bytes, call, mutated, peak, run, soup, vocabulary, MIB};
use mpgpu_ref::config::{GpuConfig, MAX_FILE_BYTES, PRESETS};
use mpgpu_ref::workload::Workload;
use mpgpu_ref::{assemble, assemble_one, disassemble};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::path::Path;

const ASM_FILE: &str = "fuzz/k.s";
const TOML_FILE: &str = "fuzz/w.toml";

/// The longest message an assembly error may have: its longest wording with every quoted
/// token at the quoting limit.
const ASM_MSG_CHARS: usize = 400;
/// The longest line, and the most lines, of a workload or configuration error (a TOML error
/// quotes a window of the offending line and the parser's message).
const TOML_LINE_CHARS: usize = 400;
const TOML_LINES: usize = 12;

/// The memory a reader may take for `len` bytes of input: a fixed allowance and a multiple of
/// the input (the TOML parser's document is tens of bytes per byte of text).
fn memory_bound(len: usize) -> usize {
    8 * MIB + 64 * len
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Seeds

fn kernels() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels");
    let mut v: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "s")).collect();
    v.sort();
    assert!(v.len() >= 10, "kernels/*.s not found in {}", dir.display());
    v.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn workloads() -> Vec<Vec<u8>> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads"), &mut v);
    v.sort();
    assert!(v.len() >= 7, "workloads/**/*.toml not found");
    v.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn presets() -> Vec<Vec<u8>> {
    PRESETS.iter().map(|p| p.1.as_bytes().to_vec()).collect()
}

// ---------------------------------------------------------------------------------------------
// The properties

/// The assembler on `text`: no panic, bounded memory; every error names the file, a line of
/// the text and a column on it, says "error" once and quotes a bounded part of the input; a
/// kernel that assembles prints back to text that assembles to the same kernel.
fn check_asm(text: &str) -> Result<(), TestCaseError> {
    let (r, bytes) = call("assemble", text, || assemble(ASM_FILE, text))?;
    prop_assert!(bytes <= memory_bound(text.len()), "assembling {} bytes took {bytes} bytes of memory", text.len());
    fuzzing::tally(r.is_ok());
    match r {
        Ok(ks) => {
            for k in ks {
                let back = disassemble(&k);
                let again = assemble_one("back.s", &back).map_err(|e| TestCaseError::fail(format!("disassembly of `{}` does not assemble: {e}\n{back}", k.name)))?;
                prop_assert_eq!(&again.code, &k.code, "disassembly of `{}` assembles to other code\n{}", k.name, back);
                prop_assert_eq!((again.regs, again.shared_bytes, again.local_bytes, again.threads, again.param_bytes), (k.regs, k.shared_bytes, k.local_bytes, k.threads, k.param_bytes));
            }
        }
        Err(es) => {
            prop_assert!(!es.0.is_empty() && es.0.len() <= 100, "{} errors", es.0.len());
            let lines: Vec<&str> = text.lines().collect();
            for e in &es.0 {
                prop_assert_eq!(&e.file, ASM_FILE);
                prop_assert!(e.line >= 1 && e.line as usize <= lines.len() + 1, "line {} of a {}-line text: {}", e.line, lines.len(), e);
                let width = lines.get(e.line as usize - 1).map_or(0, |l| l.chars().count());
                prop_assert!(e.col >= 1 && e.col as usize <= width + 2, "column {} of a {width}-character line: {}", e.col, fuzzing::shown(&e.to_string()));
                let shown = e.to_string();
                prop_assert!(shown.starts_with(&format!("{ASM_FILE}:{}:{}: error: ", e.line, e.col)), "{}", fuzzing::shown(&shown));
                prop_assert!(!e.msg.to_lowercase().starts_with("error"), "\"error\" twice: {}", fuzzing::shown(&shown));
                prop_assert!(e.msg.chars().count() <= ASM_MSG_CHARS, "a {}-character message: {}", e.msg.chars().count(), fuzzing::shown(&shown));
                prop_assert!(!shown.chars().any(char::is_control), "a control character in the message: {:?}", fuzzing::shown(&shown));
            }
        }
    }
    Ok(())
}

/// What every workload or configuration error must be: `prefix` and the file first, a place
/// (a line and column, a field, a process), and a bounded size.
fn check_toml_error(shown: &str, prefix: &str, place: &[&str]) -> Result<(), TestCaseError> {
    prop_assert!(shown.starts_with(&format!("{prefix} {TOML_FILE}: ")), "the error does not name the file: {}", fuzzing::shown(shown));
    // (a file refused by its size is refused whole: its size is the place)
    let located = shown.contains("line ") && shown.contains("column ") || shown.contains(" bytes is too large: ") || place.iter().any(|p| shown.contains(p));
    prop_assert!(located, "the error names no place: {}", fuzzing::shown(shown));
    prop_assert!(shown.lines().count() <= TOML_LINES, "a {}-line error: {}", shown.lines().count(), fuzzing::shown(shown));
    for l in shown.lines() {
        prop_assert!(l.chars().count() <= TOML_LINE_CHARS, "a {}-character line in the error: {}", l.chars().count(), fuzzing::shown(shown));
    }
    prop_assert!(!shown.chars().any(|c| c.is_control() && c != '\n'), "a control character in the error: {:?}", fuzzing::shown(shown));
    Ok(())
}

/// The workload reader on `text`: no panic, bounded memory, errors as [`check_toml_error`]; a
/// workload that reads prints back (`to_toml`) to text that reads to the same workload.
fn check_workload(text: &str) -> Result<(), TestCaseError> {
    let (r, bytes) = call("Workload::parse", text, || Workload::parse(TOML_FILE, text))?;
    prop_assert!(bytes <= memory_bound(text.len()), "reading {} bytes took {bytes} bytes of memory", text.len());
    fuzzing::tally(r.is_ok());
    match r {
        Ok(w) => {
            let back = w.to_toml();
            let again = Workload::parse("back.toml", &back).map_err(|e| TestCaseError::fail(format!("the printed workload does not read: {e}\n{back}")))?;
            prop_assert_eq!(again, w);
        }
        Err(e) => {
            prop_assert_eq!(&e.file, TOML_FILE);
            check_toml_error(&e.to_string(), "workload", &["field `", "process[", "[[process]]"])?;
        }
    }
    Ok(())
}

/// The configuration reader on `text`: as [`check_workload`] (the printed form is serde's).
fn check_config(text: &str) -> Result<(), TestCaseError> {
    let (r, bytes) = call("GpuConfig::parse", text, || GpuConfig::parse(TOML_FILE, text))?;
    prop_assert!(bytes <= memory_bound(text.len()), "reading {} bytes took {bytes} bytes of memory", text.len());
    fuzzing::tally(r.is_ok());
    match r {
        Ok(mut c) => {
            // (printed by the `toml` crate, whose writer overflows a `u8` on 256 quotes in a
            // row in a string: the free-text fields are left out of the round trip)
            (c.name, c.description) = ("n".into(), "d".into());
            let back = toml::to_string(&c).map_err(|e| TestCaseError::fail(format!("the configuration has no TOML form: {e}")))?;
            let again = GpuConfig::parse("back.toml", &back).map_err(|e| TestCaseError::fail(format!("the printed configuration does not read: {e}\n{back}")))?;
            prop_assert_eq!(again, c);
        }
        Err(e) => {
            prop_assert_eq!(&e.file, TOML_FILE);
            check_toml_error(&e.to_string(), "config", &["field `"])?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The property tests

#[test]
fn the_assembler_survives_arbitrary_bytes_and_token_soup() {
    let n = run("assembler, arbitrary bytes", 1, 2000, bytes(4096), |b| check_asm(&lossy(&b)));
    let m = run("assembler, token soup", 2, 3000, soup(vocabulary(&kernels()), 300), |s| check_asm(&s));
    assert_eq!((n, m), (2000, 3000));
}

/// Every shipped file `seeds` passes `check` as it is, and then 5,000 mutations of them do
/// (stream `seed` of the fixed generator).
fn survives_mutations(name: &str, seed: u8, seeds: &[Vec<u8>], check: fn(&str) -> Result<(), TestCaseError>) {
    for s in seeds {
        check(&lossy(s)).unwrap();
    }
    let n = run(name, seed, 5000, mutated(seeds.len()), |(base, ms)| check(&lossy(&apply(seeds, base, &ms))));
    assert_eq!(n, 5000);
}

#[test]
fn the_assembler_survives_mutated_kernels() {
    survives_mutations("assembler, mutated kernels", 3, &kernels(), check_asm);
}

#[test]
fn the_workload_reader_survives_arbitrary_bytes_and_token_soup() {
    let n = run("workload reader, arbitrary bytes", 4, 2000, bytes(4096), |b| check_workload(&lossy(&b)));
    let m = run("workload reader, token soup", 5, 3000, soup(vocabulary(&workloads()), 200), |s| check_workload(&s));
    assert_eq!((n, m), (2000, 3000));
}

#[test]
fn the_workload_reader_survives_mutated_workloads() {
    survives_mutations("workload reader, mutated workloads", 6, &workloads(), check_workload);
}

#[test]
fn the_config_reader_survives_arbitrary_bytes_and_token_soup() {
    let n = run("config reader, arbitrary bytes", 7, 2000, bytes(4096), |b| check_config(&lossy(&b)));
    let m = run("config reader, token soup", 8, 3000, soup(vocabulary(&presets()), 300), |s| check_config(&s));
    assert_eq!((n, m), (2000, 3000));
}

#[test]
fn the_config_reader_survives_mutated_presets() {
    survives_mutations("config reader, mutated presets", 9, &presets(), check_config);
}

// ---------------------------------------------------------------------------------------------
// The cases the issue names, and the limits

/// A workload of `n` processes (each valid on its own).
fn processes(n: usize) -> String {
    let mut s = String::from("description = \"many\"\n");
    for i in 0..n {
        s.push_str(&format!("\n[[process]]\nname = \"p{i}\"\nlaunches = [{{ kernel = \"vecadd\", size = 4096 }}]\n"));
    }
    s
}

fn temp(name: &str, text: &[u8]) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz_readers");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The issue's case: a 10 MB workload (150,000 processes) peaked at 503 MB before saying "at
/// most 64 processes". It is refused by its size, naming the file and the limit, without being
/// parsed (or, from a file, read).
#[test]
fn a_ten_megabyte_workload_is_refused_by_its_size_before_it_is_parsed() {
    let text = processes(150_000);
    assert!(text.len() > 10_000_000);
    let (r, bytes) = peak(|| Workload::parse(TOML_FILE, &text));
    let e = r.unwrap_err().to_string();
    assert!(e.starts_with(&format!("workload {TOML_FILE}: {} bytes is too large", text.len())) && e.contains(&format!("at most {MAX_FILE_BYTES} bytes")), "{e}");
    assert!(bytes < 64 * 1024, "refusing it took {bytes} bytes");
    let p = temp("ten-mb.toml", text.as_bytes());
    let (r, bytes) = peak(|| Workload::load(&p));
    let e = r.unwrap_err().to_string();
    assert!(e.starts_with(&format!("workload {}: ", p.display())) && e.contains("too large"), "{e}");
    assert!(bytes < 64 * 1024, "refusing the file took {bytes} bytes");
}

/// Within the size limit, the 65th process stops the reader (before it is read, and before any
/// is validated): the error says so and where, in bounded memory.
#[test]
fn a_workload_of_thousands_of_processes_stops_at_the_65th() {
    let mut text = processes(1);
    let one = processes(2)[text.len()..].to_string();
    while text.len() + one.len() <= MAX_FILE_BYTES {
        text.push_str(&one);
    }
    let (r, bytes) = peak(|| Workload::parse(TOML_FILE, &text));
    let e = r.unwrap_err().to_string();
    assert!(e.contains("more than 64 processes"), "{e}");
    check_toml_error(&e, "workload", &[]).unwrap();
    eprintln!("a {}-byte workload of {} processes: refused in at most {} MB: {e}", text.len(), text.matches("[[process]]").count(), bytes / MIB);
    assert!(bytes <= memory_bound(text.len()), "{bytes} bytes");
    // and 64 read (each launch validated)
    assert_eq!(Workload::parse(TOML_FILE, &processes(64)).unwrap().processes.len(), 64);
}

#[test]
fn a_ten_megabyte_config_is_refused_by_its_size_and_a_special_file_is_not_read_past_the_limit() {
    let good = PRESETS[0].1;
    let text = format!("{good}\n{}", "# padding\n".repeat(1_000_000));
    let (r, bytes) = peak(|| GpuConfig::parse(TOML_FILE, &text));
    let e = r.unwrap_err().to_string();
    assert!(e.starts_with(&format!("config {TOML_FILE}: {} bytes is too large", text.len())) && e.contains(&format!("at most {MAX_FILE_BYTES} bytes")), "{e}");
    assert!(bytes < 64 * 1024, "{bytes} bytes");
    let p = temp("ten-mb-config.toml", text.as_bytes());
    let e = GpuConfig::load(&p).unwrap_err().to_string();
    assert!(e.starts_with(&format!("config {}: ", p.display())) && e.contains("too large"), "{e}");
    let e = GpuConfig::from_arg(p.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("too large"), "{e}");
    // /dev/zero has no length to check first: it is read up to the limit and refused.
    if Path::new("/dev/zero").exists() {
        let (r, bytes) = peak(|| Workload::load(Path::new("/dev/zero")));
        let e = r.unwrap_err().to_string();
        assert!(e.starts_with("workload /dev/zero: more than 1048576 bytes"), "{e}");
        assert!(bytes <= 4 * MIB, "{bytes} bytes");
        assert!(GpuConfig::load(Path::new("/dev/zero")).unwrap_err().to_string().contains("more than 1048576 bytes"));
    }
    // Bytes that are not UTF-8 are refused at their line and column.
    let p = temp("latin1.toml", b"description = \"d\"\nname = \"caf\xe9\"\n");
    let e = Workload::load(&p).unwrap_err().to_string();
    assert!(e.ends_with("line 2, column 12: not UTF-8 text"), "{e}");
}

/// The case: `asm` echoed a 1 MB operand in full. Every quoted token is cut to 40
/// characters, whatever the token is (an operand, a mnemonic, a label, a directive, a kernel
/// name), and the message says how long it was.
#[test]
fn a_megabyte_token_is_quoted_in_forty_characters() {
    let long = "x".repeat(1 << 20);
    let head = ".kernel k\n.regs 8\n.threads 32\n";
    for (text, want) in [
        (format!("{head}    mov.u32 r1, 9{long}\n    exit\n"), "malformed operand `9xxxxxxx"),
        (format!("{head}    mov.u32 r1, {long}\n    exit\n"), "expected a register or an immediate, found `xxx"),
        (format!("{head}    {long} r1\n    exit\n"), "unknown instruction `xxx"),
        (format!("{head}    add.{long} r1, r1, r1\n    exit\n"), "unknown type `.xxx"),
        (format!("{head}    bra {long}\n    exit\n"), "undefined label `xxx"),
        (format!("{head}.{long} 4\n    exit\n"), "unknown directive `.xxx"),
        (format!(".kernel k{long}\n.regs 8\n"), "kernel `kxxx"),
        (format!("{head}    mov.u32 r1, [r1{}]\n    exit\n", "+1".repeat(1 << 19)), "found address `[r1+1+1"),
    ] {
        let e = assemble(ASM_FILE, &text).unwrap_err();
        let shown = e.to_string();
        assert!(shown.contains(want), "{}", fuzzing::shown(&shown));
        assert!(shown.chars().count() < 300, "a {}-character message: {}", shown.chars().count(), fuzzing::shown(&shown));
        if shown.contains('…') {
            assert!(shown.contains("characters)"), "{shown}");
        }
    }
}

/// A kernel of 65,536 instructions (the most: pcs are 16 bits) assembles in memory linear in
/// its length (the reconvergence analysis kept a bitset per instruction: 512 MB here); one
/// more instruction is an error at its line.
#[test]
fn the_longest_kernel_assembles_in_linear_memory_and_a_longer_one_is_refused() {
    let max = mpgpu_ref::asm::MAX_KERNEL_INSTS;
    let mut text = String::from(".kernel k\n.regs 8\n.threads 32\nTOP:\n");
    for i in 0..max - 1 {
        text.push_str(match i % 7 {
            3 => "@p0 bra TOP\n",
            5 => "@p0 exit\n",
            _ => "    add.u32 r1, r1, 1\n",
        });
    }
    text.push_str("    exit\n");
    let (r, bytes) = peak(|| assemble_one(ASM_FILE, &text));
    let k = r.unwrap();
    assert_eq!(k.code.len(), max);
    eprintln!("a kernel of {max} instructions ({} bytes) assembled in at most {} MB", text.len(), bytes / MIB);
    assert!(bytes <= memory_bound(text.len()), "{bytes} bytes for {} bytes of text", text.len());
    text.push_str("    exit\n");
    let e = assemble(ASM_FILE, &text).unwrap_err();
    assert_eq!((e.0[0].line, e.0[0].col), (max as u32 + 5, 5), "{e}");
    assert!(e.0[0].msg.contains("more than 65536 instructions"), "{e}");
}

/// Numbers past the width that holds them are errors at their place, not wrapped (and, with
/// overflow checks, not panics): a hexadecimal immediate of more than 32 bits (was read as
/// 64 bits and wrapped, `0xffffffffffffffff` taken as `0xffffffff`, its negation overflowing),
/// and SM counts whose sum passes 2^32 (was summed in 32 bits).
#[test]
fn numbers_past_their_width_are_errors_at_their_place() {
    let head = ".kernel k\n.regs 8\n.threads 32\n";
    for (op, col) in [("0xffffffffffffffff", 17), ("0x100000000", 17), ("-0x8000000000000000", 18), ("[r1+0x8000000000000000]", 21)] {
        let e = assemble(ASM_FILE, &format!("{head}    mov.u32 r1, {op}\n    exit\n")).unwrap_err();
        assert_eq!((e.0[0].line, e.0[0].col), (4, col), "{op}: {e}");
    }
    let k = assemble_one(ASM_FILE, &format!("{head}    mov.u32 r1, 0xffffffff\n    add.s32 r1, r1, -0x80000000\n    exit\n")).unwrap();
    assert_eq!(disassemble(&k), disassemble(&assemble_one(ASM_FILE, &format!("{head}    mov.u32 r1, 4294967295\n    add.s32 r1, r1, -2147483648\n    exit\n")).unwrap()));
    let hetero = PRESETS.iter().find(|p| p.0 == "heterocore").unwrap().1;
    assert_eq!(hetero.matches("count = 8").count(), 2);
    let text = hetero.replacen("count = 8", "count = 4294967295", 1);
    let e = GpuConfig::parse(TOML_FILE, &text).unwrap_err().to_string();
    assert!(e.ends_with("field `sm (total SM count)`: 4294967303 is out of range (expected 1..=256)"), "{e}");
}

/// Checking a launch's size must not make its data: the reader validates every launch by
/// building its host program, so an application that drew its inputs there (histo and reduction did: 64 MB
/// and 0.3 s for size 16,777,216; sad up to 2 x 512 x 512) made a 1 MiB workload of ~25,000
/// such launches of distinct sizes take hours to read. Every application draws its inputs in
/// the program's set-up.
#[test]
fn checking_a_launch_does_not_make_its_data() {
    for (kernel, size) in [("histo", 16_777_216), ("sad", 512), ("reduction", 16_777_216), ("vecadd", 16_777_216), ("sgemm", 1024), ("mriq", 65_536)] {
        let text = format!("description = \"d\"\n[[process]]\nname = \"a\"\nlaunches = [{{ kernel = \"{kernel}\", size = {size} }}]\n");
        let (r, bytes) = peak(|| Workload::parse(TOML_FILE, &text));
        r.unwrap();
        assert!(bytes <= memory_bound(text.len()), "{kernel} of size {size}: reading the workload took {} MB", bytes / MIB);
    }
}
