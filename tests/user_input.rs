//! What a new user runs into: every range, count, flag and output path checked before anything
//! is allocated or simulated, runs that stop at a budget naming where they were, waveforms
//! where the user said, and messages that name the flag and quote little.
//!
//! The commands run under resource limits (4 GiB of address space, 120 s of CPU time), so a
//! check that comes after a huge allocation or an endless run fails here instead of taking the
//! machine: the limits bound resources, not wall-clock time.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `mpgpu args` under the limits; (exit code, stdout, stderr). A process killed by a
/// signal (an abort, or the CPU limit) has code -1. `MPGPU_UNDER_TEST` names another binary
/// to run these tests against (an older build, to see them fail).
fn mpgpu(args: &[&str]) -> (i32, String, String) {
    let bin = std::env::var_os("MPGPU_UNDER_TEST").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mpgpu")), PathBuf::from);
    let mut c = Command::new(bin);
    c.args(args);
    // SAFETY: only async-signal-safe calls (setrlimit) between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let mem = libc::rlimit { rlim_cur: 4 << 30, rlim_max: 4 << 30 };
            let cpu = libc::rlimit { rlim_cur: 120, rlim_max: 120 };
            if libc::setrlimit(libc::RLIMIT_AS, &mem) != 0 || libc::setrlimit(libc::RLIMIT_CPU, &cpu) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = c.output().expect("run mpgpu");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("user_input").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn file(d: &Path, name: &str, text: &str) -> String {
    let p = d.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Refused at once: exit 2, nothing simulated (no results on stdout), the message containing
/// `want`.
#[track_caller]
fn refused(args: &[&str], want: &str) {
    let (code, out, err) = mpgpu(args);
    assert_eq!(code, 2, "mpgpu {}: expected a refusal (exit 2), got {code}\nstdout: {out}\nstderr: {err}", args.join(" "));
    assert!(err.contains(want), "mpgpu {}: the message should contain `{want}`:\n{err}", args.join(" "));
    assert!(!out.contains("cycles ") && !out.contains("PASS"), "mpgpu {}: refused only after simulating:\n{out}", args.join(" "));
}

/// Item 1: a range is checked at its ends, and the points it makes counted, before any is
/// made (these allocated 32 GB, or ran 44 s at 12.5 GB, before).
#[test]
fn ranges_and_counts_are_checked_before_anything_is_allocated() {
    refused(&["sweep", "lbm", "--threads", "32..4000000000:1"], "--threads must be a multiple of 32 in 32..=1024, not 4000000000");
    refused(&["sweep", "lbm", "--smem", "0..4000000000:1"], "its kernels use no scratchpad");
    refused(&["sweep", "sgemm", "--smem", "2048..4000000000:1"], "this would run 11999993859 simulations");
    refused(&["sweep", "lbm", "--regs", "0..400000000:1"], "--regs must be 41..=255, not 0");
    refused(&["sweep", "lbm", "--regs", "44..255:1", "--threads", "128..704:32"], "this would run 12084 simulations (specifications x schemes), more than the limit of 2000");
    // (the limit is the user's to raise, and it counts the schemes)
    refused(&["sweep", "lbm", "--regs", "44..48:4", "--alloc", "block", "--max-points", "1", "--threads", "128..128"], "this would run 2 simulations");
    let d = dir("grid");
    let k = file(&d, "exit.s", ".kernel e\n.regs 2\n.threads 32\n    exit\n");
    refused(&["exec", "--file", &k, "--grid", "65535,65535,65535"], "this would run 281462092005375 blocks (the --grid product), more than the limit of 16777216");
    refused(&["exec", "--file", &k, "--param", "buf:67108864", "--param", "buf:67108864"], "the buffers hold 134217728 words in all");
    refused(&["soak", "--workloads", "0"], "--workloads");
    refused(&["study", "--jobs", "0"], "--jobs");
    // (input files are read up to a cap, not whole: a device never ends)
    refused(&["asm", "/dev/zero"], "/dev/zero: more than 16777216 bytes");
    refused(&["exec", "--file", "/dev/zero"], "/dev/zero: more than 16777216 bytes");
    refused(&["bench", "exec", "--reps", "0"], "--reps");
}

/// Item 2: a kernel that never ends stops at the budget, naming the kernel, block, warp and PC;
/// the timing model's runs stop at --max-cycles (on by default) naming each warp's kernel,
/// block and PC.
#[test]
fn a_kernel_that_never_ends_stops_at_its_budget_naming_where_it_was() {
    let d = dir("loop");
    let k = file(&d, "loop.s", ".kernel spin\n.regs 2\n.threads 32\ntop:\n    bra top\n");
    let (code, _, err) = mpgpu(&["exec", "--file", &k, "--grid", "2", "--max-warp-insts", "100000"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("kernel `spin` executed more than 100000 warp-instructions") && err.contains("block (0,0,0), warp 0, pc 0") && err.contains("loop.s:5"), "{err}");
    // (the budget is on by default: the help gives it)
    let (_, help, _) = mpgpu(&["exec", "--help"]);
    assert!(help.contains("--max-warp-insts") && help.contains("[default: 500000000]"), "{help}");
    for cmd in [&["run"][..], &["cosim"], &["sweep"], &["faults"], &["slicing"], &["study"], &["bench", "run"]] {
        let (_, help, _) = mpgpu(&[cmd, &["--help"]].concat());
        assert!(help.contains("--max-cycles") && help.contains("[default: 50000000]"), "{cmd:?}: {help}");
    }
    let (code, out, err) = mpgpu(&["run", "--no-alone", "--max-cycles", "2000"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("stopped at --max-cycles 2000") && err.contains("kernel `sgemm`, block (0,0,0), warp 0, ready, pc "), "{err}");
    assert!(!err.contains("Some(") && !err.contains("Ready"), "Rust debug text in the report:\n{err}");
    refused(&["run", "--max-cycles", "0"], "--max-cycles");
}

/// Item 3: every output path and option value is checked before the simulation; a missing
/// folder is made; an output that could not be written is a non-zero exit.
#[test]
fn outputs_and_options_are_checked_before_the_simulation() {
    let d = dir("outputs");
    let w = file(&d, "w.toml", "description = \"small\"\n[[process]]\nname = \"v\"\nlaunches = [{ kernel = \"vecadd\", size = 4096 }]\n");
    refused(&["run", &w, "--json", "/proc/nowhere/r.json"], "--json /proc/nowhere/r.json: cannot");
    refused(&["run", &w, "--config", "thesis16", "--paging", "nvlink", "--timeline", "/proc/t.csv"], "--timeline /proc/t.csv: cannot");
    refused(&["run", &w, "--timeline", "t.csv"], "--timeline needs demand paging");
    refused(&["faults", "--oplog-sweep", "0"], "--oplog-sweep 0: 0 is out of range (expected 128..=1048576)");
    refused(&["cosim", &w, "--vcd", "/proc/c.vcd"], "--vcd /proc/c.vcd: cannot");
    refused(&["sweep", "lbm", "--regs", "44..48", "--csv", "/proc/s.csv"], "--csv /proc/s.csv: cannot");
    refused(&["slicing", "--out", "/proc/sl"], "--out /proc/sl: cannot");
    refused(&["verilog", "rq", "--out", "/proc/v"], "--out /proc/v: cannot");
    // (options that fail only for some of a command's runs are found before the first run)
    refused(&["faults", "--config", "gtx480", "--kernels", "vecadd"], "--config gtx480: scheme RQ:");
    refused(&["sweep", "lbm", "--regs", "44..47:4", "--svg", "s.svg"], "--svg plots a sweep of one dimension");
    // (the same rule everywhere: missing folders are made)
    let json = d.join("missing/deeper/r.json");
    let (code, out, err) = mpgpu(&["run", &w, "--no-alone", "--json", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(json.is_file(), "no {}", json.display());
}

/// Item 4: the per-SM blocks' waveforms go into the folder the user names (a .vcd name is
/// refused with the reason), limited to the SMs and GPU cycles asked for; the summary line
/// says what its count sums.
#[test]
fn per_sm_waveforms_go_where_the_user_says_and_the_summary_means_what_it_says() {
    let d = dir("waveforms");
    let w = file(&d, "w.toml", "description = \"small\"\n[[process]]\nname = \"v\"\nlaunches = [{ kernel = \"vecadd\", size = 32768 }]\n");
    let x = d.join("X.vcd");
    refused(&["cosim", &w, "--unit", "rq", "--config", "thesis16", "--inject", "0.02", "--vcd", x.to_str().unwrap()], "--unit rq writes one waveform per SM with the RTL: name a folder");
    let wave = d.join("rq-waves");
    let (code, out, err) = mpgpu(&["cosim", &w, "--unit", "rq", "--config", "thesis16", "--inject", "0.05", "--vcd", wave.to_str().unwrap(), "--vcd-sms", "1,2", "--vcd-from", "1000", "--vcd-to", "3000"]);
    assert_eq!(code, 0, "{out}{err}");
    let mut names: Vec<String> = std::fs::read_dir(&wave).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["sm1-rq.gtkw", "sm1-rq.vcd", "sm2-rq.gtkw", "sm2-rq.vcd"], "{out}");
    assert!(out.contains(&format!("waveforms: 2 files in {}/", wave.display())), "{out}");
    for f in ["sm1-rq.vcd", "sm2-rq.vcd"] {
        let text = std::fs::read_to_string(wave.join(f)).unwrap();
        let times: Vec<u64> = text.lines().filter_map(|l| l.strip_prefix('#')).filter_map(|t| t.parse().ok()).collect();
        assert!(!times.is_empty(), "{f}: no samples");
        // (1 ns per GPU cycle at the 1 ps timescale)
        assert!(times.iter().all(|&t| (1000 * 1000..=3000 * 1000 + 999).contains(&t)), "{f}: samples outside the window: {:?}..{:?}", times.first(), times.last());
    }
    let line = out.lines().find(|l| l.starts_with("clocked cycles checked")).unwrap_or_else(|| panic!("no summary line:\n{out}"));
    assert!(line.contains("summed over 16 SMs' slots in ") && line.contains("mismatches: 0"), "{line}");
    refused(&["cosim", &w, "--vcd-sms", "1"], "--vcd");
}

/// The scheduling framework on SMs of two kinds may give any SM to any kernel: a kernel one of
/// whose blocks does not fit on a kind is refused at its launch, naming it and the SM.
#[test]
fn a_kernel_that_does_not_fit_every_kind_is_refused_under_the_framework() {
    let d = dir("kinds");
    let hc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("sim-ref/configs/heterocore.toml")).unwrap();
    let tiny = file(&d, "tiny.toml", &hc.replace("registers = 16384", "registers = 4096").replace("name = \"heterocore\"", "name = \"tiny\""));
    refused(&["run", "--config", &tiny, "--policy", "fcfs"], "kernel `sgemm` of process `sgemm`: one block (256 threads, 32 registers/thread, 2048 B shared) does not fit on `tiny`'s SMs of 768 threads, 4096 registers, 32768 B shared, any of which the scheduling framework may give it");
}

/// Item 5: a flag that does not apply to the command's other choices is refused with the
/// reason; zero work is not a pass.
#[test]
fn flags_that_do_not_apply_are_refused() {
    refused(&["cosim", "--unit", "sched", "--sms", "3"], "--sms picks the SMs whose slot carries a per-SM unit's RTL: --unit sched is one block for the whole GPU");
    refused(&["cosim", "--unit", "rq", "--config", "thesis16", "--policy", "dss"], "--policy and --preempt choose the scheduling framework's policy");
    refused(&["cosim", "--unit", "slice", "--every-cycle"], "--every-cycle");
    refused(&["cosim", "--baud", "9600"], "--baud");
    refused(&["verilog", "rq", "--sms", "3"], "--sms sizes the GPU-wide blocks");
    refused(&["fpga", "rq", "--sms", "3"], "--sms sizes the GPU-wide blocks");
    refused(&["fpga", "zorua", "--config", "heterocore"], "block `zorua` for --config heterocore: Zorua: the physical warp slots is 72, expected 1..=64");
    refused(&["verilog", "zorua", "--config", "nosuch"], "--config: ");
    refused(&["run", "--preempt", "drain"], "--preempt chooses how the scheduling framework preempts: it needs --policy");
    refused(&["run", "--steer-warmup", "100"], "--steer-warmup and --steer-window time the profiling of --steer dynamic: they need it");
    refused(&["run", "--steer", "even", "--steer-window", "100"], "--steer-warmup and --steer-window time the profiling of --steer dynamic: they need it");
    refused(&["run", "--steer-preempt", "drain"], "--steer-preempt chooses how a steered SM changes owner: it needs --steer");
    refused(&["run", "--steer", "dynamic", "--slicing", "even"], "--steer gives kernels SMs of their own: it cannot go with --slicing, which shares SMs among them");
    refused(&["run", "--steer", "dynamic", "--policy", "dss", "--steer-preempt", "switch"], "--steer-preempt: with --policy the steering is the framework's quota controller, and a steered SM changes owner by draining");
    refused(&["run", "--steer", "dynamic", "--steer-warmup", "0"], "invalid value '0' for '--steer-warmup <STEER_WARMUP>'");
    refused(&["run", "--steer", "dynamic", "--steer-window", "262144"], "invalid value '262144' for '--steer-window <STEER_WINDOW>'");
    refused(&["cosim", "--unit", "sched", "--steer", "dynamic"], "the --steer flags choose the steering dispatcher's policy, profile and preemption: they apply to --unit steer");
    refused(&["cosim", "--unit", "steer,sched"], "--unit steer,sched: its blocks run together under steering inside the framework only: give --policy (and --steer for the steering policy, dynamic by default)");
    refused(&["run", "--config", "gtx480", "--steer", "classified"], "--steer: steering classified: the static policies give a big and a small kind of SM to two kernels; `gtx480` has one kind");
    refused(&["soak", "--unit", "sched,steer", "--slicing", "warped-slicer"], "--unit sched,steer has the steering unit, which shares no GPU with a slicing policy");
    refused(&["cosim", "--unit", "steer,wf"], "steer runs under the steering dispatcher or inside the framework, wf, prof under the slicing dispatcher: they do not share a GPU");
    refused(&["cosim", "--unit", "steer", "--config", "thesis32"], "steering: `thesis32` has 32 SMs; the steering unit's owner table serves at most 16");
    refused(&["run", "--steer", "even", "--alloc", "zorua", "--config", "fermi15"], "steering's context switch saves a block's registers and scratchpad, which under alloc = \"zorua\" live in the coordinator's sets and swap: steer with --steer-preempt drain");
    refused(&["exec", "vecadd", "--grid", "4"], "--grid describes the launch of an assembly file");
    refused(&["faults", "--timeline", "t"], "--timeline applies to the demand-paging runs");
    refused(&["faults", "--oplog-full", "hold"], "--oplog-full sets the policy of the --oplog-sweep runs");
    refused(&["faults", "--rounds", "0"], "invalid value '0' for '--rounds <ROUNDS>'");
    refused(&["slicing", "--length", "0"], "invalid value '0' for '--length <LENGTH>'");
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("length-min-runs");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("pair.toml"), "description = \"d\"\nmin_runs = 2\n[[process]]\nname = \"a\"\nlaunches = [{ kernel = \"vecadd\", size = 4096 }]\n").unwrap();
    refused(&["slicing", d.to_str().unwrap(), "--length", "30000"], "--length 30000: pair: field `min_runs`: instruction targets (--length) replay each process until it halts instead");
    refused(&["slicing", "--length", "2000000", "--max-cycles", "1000000"], "--length 2000000: the run length, 2000000 cycles alone, passes --max-cycles 1000000");
    refused(&["faults", "--rounds", "2", "--scale", "2"], "cannot be used with '--scale <SCALE>'");
    refused(&["soak", "--workloads", "0"], "0 is not in 1..=1000000");
}

/// Item 7: messages name the flag the user typed, print an assembler's error once, cap what
/// they quote, and escape control and bidirectional-override characters in names.
#[test]
fn messages_name_the_flag_escape_names_and_quote_little() {
    refused(&["run", "--faults", "rq", "--rq-entries", "0", "--config", "thesis16"], "--rq-entries: 0 is out of range (expected 1..=1024)");
    let d = dir("messages");
    let big = file(&d, "big.s", &format!(".kernel k\n.regs 4\n.threads 32\n    add.u32 r1, r2, {}\n    exit\n", "x".repeat(1 << 20)));
    let (code, _, err) = mpgpu(&["asm", &big]);
    assert_eq!(code, 2);
    assert_eq!(err.matches("error").count(), 1, "`error` more than once:\n{}", &err[..err.len().min(300)]);
    assert!(err.len() < 400 && err.contains("big.s:4:21: error:") && err.contains("(1048576 characters)"), "{}", &err[..err.len().min(600)]);
    // (a name with a right-to-left override and an escape sequence is shown escaped)
    let w = file(&d, "w.toml", "description = \"evil\\u202e name\"\n[[process]]\nname = \"a\\u001b[31mred\"\nlaunches = [{ kernel = \"vecadd\", size = 4096 }]\n");
    let (code, out, err) = mpgpu(&["run", &w, "--no-alone"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains('\u{202e}') && !out.contains('\u{1b}'), "raw control characters in:\n{out}");
    assert!(out.contains("evil\\u{202e} name") && out.contains("a\\u{1b}[31mred"), "{out}");
    // (the GTKWave save file is where the README says: `--vcd c.vcd` writes `c.vcd` and `c.gtkw`)
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(readme.contains("`--vcd c.vcd` writes `c.vcd` and `c.gtkw`"), "the README no longer states the save file's name");
    let c = d.join("c.vcd");
    let (code, out, err) = mpgpu(&["cosim", &w, "--vcd", c.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(c.is_file() && d.join("c.gtkw").is_file(), "{out}");
    assert!(out.contains(&format!("gtkwave {}", d.join("c.gtkw").display())), "{out}");
    // (slicing names the plots it wrote: one pair, so the 2-kernel ones only)
    let pairs = d.join("pairs");
    std::fs::create_dir_all(&pairs).unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/slicing/cutcp-vecadd.toml"), pairs.join("cutcp-vecadd.toml")).unwrap();
    let sl = d.join("slicing");
    let (code, out, err) = mpgpu(&["slicing", pairs.to_str().unwrap(), "--out", sl.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("the plots ipc-2.svg, min-speedup-2.svg, antt-2.svg in ") && !out.contains("{2,3}"), "{out}");
    assert!(["ipc-2.svg", "min-speedup-2.svg", "antt-2.svg"].iter().all(|f| sl.join(f).is_file()) && !sl.join("ipc-3.svg").exists());
    // (every block described in verilog --help)
    let (_, help, _) = mpgpu(&["verilog", "--help"]);
    for b in mpgpu_tb::registry::names() {
        assert!(help.contains(&format!("- {b}:")), "verilog --help does not describe {b}:\n{help}");
    }
}
