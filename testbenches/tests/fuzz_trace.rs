//! Property tests of the trace reader (`mpgpu replay`'s `trace::read`, issue 51): a trace
//! directory's `trace.json` and `trace.hex`, written by the trace writer, are replaced with
//! arbitrary bytes, arbitrary sequences of their own tokens, and mutations (flipped bytes,
//! deletions, repeated lines, splices, huge numbers, very long tokens, deep nesting). Every case
//! must return (a panic fails it), within a memory bound (a counting allocator measures each
//! call's peak), and an error must name the file and the place (a line and column of
//! trace.json, a port or a field, a line of trace.hex), quoting little of the input. A trace
//! that reads must make a testbench.
//!
//! The seed is fixed and the case counts bounded: every run runs the same cases.

#[path = "../../sim-ref/tests/fuzzing/mod.rs"]
mod fuzzing;

use fuzzing::{apply, bytes, call, mutated, peak, run, soup, vocabulary, MIB};
use mpgpu_tb::ports::Port;
use mpgpu_tb::trace::{read, testbench, TraceWriter, MAX_JSON_BYTES};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use rand::{Rng, SeedableRng};
use std::path::Path;

/// The longest error the reader may give, and its longest line.
const MSG_CHARS: usize = 600;

fn memory_bound(len: usize) -> usize {
    8 * MIB + 64 * len
}

/// Valid traces from the writer: (trace.json, trace.hex) of a few port layouts, in `dir`.
fn traces(dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(51);
    let layouts: [(&[(&str, usize)], &[(&str, usize)], u64); 3] = [
        (&[("cmd_valid", 1), ("cmd_op", 3), ("cmd_arg", 32)], &[("busy", 1), ("issue_valid", 1), ("issue_sm", 4), ("word", 64)], 20),
        (&[("rx", 1)], &[("tx", 1), ("led", 8), ("reset_req", 1)], 5),
        (&[("a", 64), ("b", 17)], &[("o", 1)], 1),
    ];
    layouts
        .iter()
        .enumerate()
        .map(|(k, (ins, outs, cycles))| {
            let d = dir.join(format!("seed{k}"));
            let ports = |v: &[(&str, usize)]| v.iter().map(|(n, w)| Port::new(n, *w)).collect::<Vec<_>>();
            let (ins, outs) = (ports(ins), ports(outs));
            let mut t = TraceWriter::create(&d, &format!("block{k}"), "top", "module top(); endmodule\n".into(), &ins, &outs).unwrap();
            let word = |rng: &mut rand_chacha::ChaCha8Rng, w: u32| if w == 64 { rng.gen::<u64>() } else { rng.gen::<u64>() & ((1 << w) - 1) };
            for c in 0..*cycles {
                let i: Vec<u64> = ins.iter().map(|p| word(&mut rng, p.width)).collect();
                let o: Vec<u64> = outs.iter().map(|p| word(&mut rng, p.width)).collect();
                let care: Vec<bool> = outs.iter().map(|_| rng.gen()).collect();
                t.record(100 + 3 * c, &i, &o, &care).unwrap();
            }
            t.finish().unwrap();
            let info = read(&d).unwrap();
            assert_eq!(info.cycles, *cycles);
            (std::fs::read(d.join("trace.json")).unwrap(), std::fs::read(d.join("trace.hex")).unwrap())
        })
        .collect()
}

/// The reader on a directory holding `json` and `hex`: no panic, bounded memory; an error names
/// trace.json or trace.hex and a place in it and is short; a trace that reads makes a
/// testbench with every port in it.
fn check(dir: &Path, json: &[u8], hex: &[u8]) -> Result<(), TestCaseError> {
    std::fs::write(dir.join("trace.json"), json).unwrap();
    std::fs::write(dir.join("trace.hex"), hex).unwrap();
    let input = format!("trace.json:\n{}\ntrace.hex:\n{}", String::from_utf8_lossy(json), String::from_utf8_lossy(hex));
    let (r, bytes) = call("trace::read", &input, || read(dir))?;
    prop_assert!(bytes <= memory_bound(json.len() + hex.len()), "reading {} bytes took {bytes} bytes of memory", json.len() + hex.len());
    fuzzing::tally(r.is_ok());
    match r {
        Ok(info) => {
            prop_assert_eq!(info.fields, 1 + info.inputs.len() + info.outputs.len() + mpgpu_tb::trace::care_words(info.outputs.len()));
            let (tb, _) = call("testbench", &input, || testbench(&info, mpgpu_tb::trace::REPLAY))?;
            for (n, _) in info.inputs.iter().chain(&info.outputs) {
                prop_assert!(tb.contains(&format!(".{n}({n})")), "port `{}` not connected in the testbench", n);
            }
        }
        Err(e) => {
            let json_at = dir.join("trace.json").display().to_string();
            let hex_at = dir.join("trace.hex").display().to_string();
            let place = if let Some(rest) = e.strip_prefix(&json_at) {
                // a line and column, or a port or a field
                let lc = rest.strip_prefix(':').and_then(|r| r.split_once(": ")).is_some_and(|(p, _)| p.split(':').all(|n| n.parse::<u64>().is_ok_and(|n| n > 0)));
                lc || rest.starts_with(": port `") || rest.starts_with(": `") || rest.contains(" bytes is too large: ")
            } else if let Some(rest) = e.strip_prefix(&hex_at) {
                // a line, or the record count
                rest.strip_prefix(':').and_then(|r| r.split_once(": ")).is_some_and(|(n, _)| n.parse::<u64>().is_ok_and(|n| n > 0)) || rest.contains(" records; trace.json says ")
            } else {
                false
            };
            prop_assert!(place, "the error does not name the file and the place: {}", fuzzing::shown(&e));
            prop_assert!(e.chars().count() <= MSG_CHARS, "a {}-character error: {}", e.chars().count(), fuzzing::shown(&e));
            prop_assert!(!e.chars().any(char::is_control), "a control character in the error: {:?}", fuzzing::shown(&e));
        }
    }
    Ok(())
}

/// A temporary folder (kept while the handle lives), the writer-made traces in it, and the
/// folder each case's trace is written to.
fn setup() -> (tempfile::TempDir, Vec<(Vec<u8>, Vec<u8>)>, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let seeds = traces(tmp.path());
    let dir = tmp.path().join("case");
    std::fs::create_dir_all(&dir).unwrap();
    (tmp, seeds, dir)
}

#[test]
fn the_trace_reader_survives_arbitrary_bytes_and_token_soup() {
    let (_tmp, seeds, dir) = setup();
    let (json, hex) = (&seeds[0].0, &seeds[0].1);
    let a = run("trace reader, arbitrary trace.json", 11, 1500, bytes(2048), |b| check(&dir, &b, hex));
    let b = run("trace reader, arbitrary trace.hex", 12, 1500, bytes(2048), |b| check(&dir, json, &b));
    let jsons: Vec<Vec<u8>> = seeds.iter().map(|s| s.0.clone()).collect();
    let hexes: Vec<Vec<u8>> = seeds.iter().map(|s| s.1.clone()).collect();
    let c = run("trace reader, trace.json token soup", 13, 1500, soup(vocabulary(&jsons), 200), |s| check(&dir, s.as_bytes(), hex));
    let d = run("trace reader, trace.hex token soup", 14, 1500, soup(vocabulary(&hexes), 300), |s| check(&dir, json, s.as_bytes()));
    assert_eq!((a, b, c, d), (1500, 1500, 1500, 1500));
}

#[test]
fn the_trace_reader_survives_mutated_traces() {
    let (_tmp, seeds, dir) = setup();
    for (json, hex) in &seeds {
        check(&dir, json, hex).unwrap();
    }
    let jsons: Vec<Vec<u8>> = seeds.iter().map(|s| s.0.clone()).collect();
    let hexes: Vec<Vec<u8>> = seeds.iter().map(|s| s.1.clone()).collect();
    let a = run("trace reader, mutated trace.json", 15, 3000, mutated(seeds.len()), |(k, ms)| check(&dir, &apply(&jsons, k, &ms), &hexes[k]));
    let b = run("trace reader, mutated trace.hex", 16, 3000, mutated(seeds.len()), |(k, ms)| check(&dir, &jsons[k], &apply(&hexes, k, &ms)));
    let c = run("trace reader, both mutated", 17, 2000, (mutated(seeds.len()), proptest::collection::vec(fuzzing::mutation(), 1..=4)), |((k, ms), mh)| {
        check(&dir, &apply(&jsons, k, &ms), &apply(&hexes, k, &mh))
    });
    assert_eq!((a, b, c), (3000, 3000, 2000));
}

/// A trace.json past the limit is refused by its size without being read; a long trace.hex is
/// checked a line at a time (the reader kept the whole file in memory); a line longer than any
/// record is refused without being read whole; port names that would write other Verilog into
/// the testbench are refused.
#[test]
fn the_trace_reader_bounds_what_it_reads() {
    let (_tmp, seeds, dir) = setup();
    let (json, hex) = (&seeds[0].0, &seeds[0].1);
    let at = |f: &str| dir.join(f).display().to_string();
    // trace.json of 2 MiB (a valid one, padded with spaces)
    let mut big = json.clone();
    big.resize(2 * MIB, b' ');
    std::fs::write(dir.join("trace.json"), &big).unwrap();
    std::fs::write(dir.join("trace.hex"), hex).unwrap();
    let (r, bytes) = peak(|| read(&dir));
    let e = r.unwrap_err();
    assert!(e.starts_with(&format!("{}: 2097152 bytes is too large", at("trace.json"))) && e.contains(&format!("at most {MAX_JSON_BYTES} bytes")), "{e}");
    assert!(bytes < 64 * 1024, "{bytes} bytes");
    // 400,000 records (about 29 MB) in at most 1 MiB
    std::fs::write(dir.join("trace.json"), String::from_utf8_lossy(json).replace("\"cycles\": 20", "\"cycles\": 400000")).unwrap();
    let line = hex.split(|&b| b == b'\n').next().unwrap();
    let mut long = Vec::with_capacity(400_000 * (line.len() + 1));
    for _ in 0..400_000 {
        long.extend_from_slice(line);
        long.push(b'\n');
    }
    std::fs::write(dir.join("trace.hex"), &long).unwrap();
    let (r, bytes) = peak(|| read(&dir));
    assert_eq!(r.unwrap().cycles, 400_000);
    assert!(bytes < MIB, "checking a {}-byte trace.hex took {bytes} bytes", long.len());
    // one line of 16 MiB
    std::fs::write(dir.join("trace.hex"), vec![b'f'; 16 * MIB]).unwrap();
    let (r, bytes) = peak(|| read(&dir));
    let e = r.unwrap_err();
    assert!(e.starts_with(&format!("{}:1: a line of more than", at("trace.hex"))), "{e}");
    assert!(bytes < MIB, "{bytes} bytes");
    // ports and block names that are not Verilog names
    std::fs::write(dir.join("trace.hex"), hex).unwrap();
    let text = String::from_utf8_lossy(json).into_owned();
    for (from, to, want) in [
        ("\"cmd_op\"", "\"a; initial $finish; reg b\"", "port `a; initial $finish; reg b` is not a Verilog identifier"),
        ("\"cmd_op\"", "\"cmd_valid\"", "port `cmd_valid` is named twice"),
        ("\"cmd_op\"", "\"clock\"", "port `clock` takes the name of the testbench's own `clock`"),
        ("\"block0\"", "\"a\\\"); $finish; //\"", "`block` `a\"); $finish; //` must be"),
        ("\"cmd_op\"", &format!("\"{}\"", "x".repeat(5000)), "port `xxxxxxxx"),
    ] {
        assert!(text.contains(from));
        std::fs::write(dir.join("trace.json"), text.replacen(from, to, 1)).unwrap();
        let e = read(&dir).unwrap_err();
        assert!(e.starts_with(&format!("{}: ", at("trace.json"))) && e.contains(want) && e.len() < 400, "{e}");
    }
}
