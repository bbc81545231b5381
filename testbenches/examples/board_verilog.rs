//! Writes a block's board wrapper for the ULX3S: the rust-hdl wrapper's Verilog (module `top`,
//! `OUT/top.v`), the board's top level (`OUT/board_top.v`) and what the host will expect of it
//! (`OUT/board.txt`), and makes sure the FPGA tools are installed (the pinned versions of
//! `mpgpu fpga`, `mpgpu_tb::fpga::Tools::ensure`), writing their environment's path to
//! `OUT/venv`. `scripts/board` runs it, then yosys, nextpnr and ecppack from that environment.
//!
//! ```text
//! cargo run --release -p mpgpu-tb --example board_verilog -- dss OUT [--sms 16] [--baud 115200]
//! cargo run --release -p mpgpu-tb --example board_verilog -- prio OUT [--sms 16] [--policy ppq-excl] [--baud 115200]
//! cargo run --release -p mpgpu-tb --example board_verilog -- sched OUT [--sms 16] [--policy equal] [--baud 115200]
//! ```
//!
//! The block's configuration must be the one `mpgpu cosim` asks for (its id is a hash of it):
//! the SM count of the GPU configuration (`gtx480`: 16, `k20c`: 13) and, for `sched` and
//! `prio`, the policy (`dss` and `equal` share one bitstream; every other policy has its own;
//! `prio` takes the four priority policies).

use mpgpu_ref::units::framework::Policy;
use mpgpu_rtl::board::BoardConfig;
use mpgpu_rtl::SchedFaults;
use mpgpu_tb::blocks::{DssPorts, PrioPorts, SchedPorts};
use mpgpu_tb::fpga::{default_venv, Tools};
use mpgpu_tb::ports::Ports;
use mpgpu_tb::board_link::board_verilog;
use mpgpu_tb::serial::Expected;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: board_verilog <dss|prio|sched> <out-dir> [--sms N] [--policy fcfs|npq|ppq-excl|ppq-shared|dss|equal] [--baud B]");
    ExitCode::from(2)
}

fn write<P: Ports>(p: &P, baud: u32, out: &PathBuf) -> Result<(), String> {
    let e = Expected::of(p);
    let config = BoardConfig::ulx3s(e.block_id, baud);
    let v = board_verilog(p, config)?;
    std::fs::create_dir_all(out).map_err(|err| format!("cannot create {}: {err}", out.display()))?;
    let put = |name: &str, text: &str| std::fs::write(out.join(name), text).map_err(|err| format!("cannot write {}: {err}", out.join(name).display()));
    put("top.v", &v)?;
    put("board_top.v", &mpgpu_rtl::board::ulx3s_top_verilog())?;
    put(
        "board.txt",
        &format!(
            "block {}\nid {:#010x}\ninput bits {}\noutput bits {}\nbaud {baud} (divisor {} at 25 MHz)\nsettle {} cycles\n",
            e.description, e.block_id, e.in_bits, e.out_bits, config.divisor, config.settle
        ),
    )?;
    println!("{}: id {:#010x}, {} input and {} output bits, {baud} baud -> {}", e.description, e.block_id, e.in_bits, e.out_bits, out.display());
    let tools = Tools::ensure(&default_venv(Path::new(".")), |m| eprintln!("board: {m}"))?;
    put("venv", &tools.venv.display().to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return usage();
    }
    let (block, out) = (args[0].as_str(), PathBuf::from(&args[1]));
    let (mut sms, mut policy, mut baud) = (16usize, if block == "prio" { Policy::PpqExclusive } else { Policy::Equal }, 115_200u32);
    let mut it = args[2..].iter();
    while let Some(flag) = it.next() {
        let Some(value) = it.next() else { return usage() };
        let ok = match flag.as_str() {
            "--sms" => value.parse().map(|v| sms = v).is_ok() && (1..=16).contains(&sms),
            "--policy" => Policy::parse(value).map(|p| policy = p).is_some(),
            "--baud" => value.parse().map(|v| baud = v).is_ok() && (400..=6_250_000).contains(&baud),
            _ => false,
        };
        if !ok {
            eprintln!("bad option {flag} {value}");
            return usage();
        }
    }
    let r = match block {
        "dss" => write(&DssPorts { sms, broken_tie: false }, baud, &out),
        "prio" if policy.uses_dss() => {
            eprintln!("prio runs the priority policies (fcfs, npq, ppq-excl, ppq-shared), not {}", policy.name());
            return usage();
        }
        "prio" => write(&PrioPorts { sms, mode: policy.code(), broken_victim: false }, baud, &out),
        "sched" => write(&SchedPorts { sms, mode: policy.code(), faults: SchedFaults::default(), sharing: false }, baud, &out),
        _ => return usage(),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
