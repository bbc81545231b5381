//! The board step protocol end to end on the simulated path: the host transport
//! (`mpgpu_tb::serial`) talking to the board wrappers' own rust-hdl simulation (`SimLink`,
//! UART lines driven and sampled bit by bit), byte for byte; the DSS engine and the whole
//! framework in lockstep with their models through it; damaged, truncated and misdirected
//! frames; and the wrappers' Verilog through yosys, Icarus and Verilator, and compiled by
//! Verilator, byte for byte against the rust-hdl simulation.

use mpgpu_ref::units::dss::Dss as DssModel;
use mpgpu_rtl::board::{crc8, BoardConfig};
use mpgpu_rtl::{BoardDss, Dss, SchedFaults};
use mpgpu_spec::units::sched::dss::In as DssIn;
use mpgpu_tb::blocks::{DssPorts, PrioPorts, SchedPorts};
use mpgpu_tb::ports::{HdlBlock, Ports};
use mpgpu_tb::board_link::{self, block_id};
use mpgpu_tb::{Backend, RtlUnit};
use mpgpu_tb::serial::{frame, pack, unpack, BoardSim, Expected, HdlBoard, Line, Link, LinkError, SimLink};
use mpgpu_tb::Lockstep;
use std::io;
use std::time::{Duration, Instant};

mod common;
use common::{dss_in, prio_in, words};

const DSS: DssPorts = DssPorts { sms: 16, broken_tie: false };

fn widths<P: Ports>(p: &P) -> (Vec<u32>, Vec<u32>) {
    let b = p.block();
    (b.input_ports().iter().map(|q| q.width).collect(), b.output_ports().iter().map(|q| q.width).collect())
}

/// A simulated DSS board reporting `id`.
fn dss_board(id: u32) -> SimLink<HdlBoard<BoardDss>> {
    let config = BoardConfig::simulation(id);
    SimLink::rust_hdl(move || BoardDss::new(Dss::new(DSS.sms, DSS.broken_tie), config), config.divisor, board_link::SIM_BAUD)
}

fn dss_link(line: Box<dyn Line>) -> Link {
    let (i, o) = widths(&DSS);
    let mut l = Link::new(line, &i, &o);
    l.timeout = Duration::from_millis(20);
    l
}

fn exchange(line: &mut dyn Line, bytes: &[u8], reply_len: usize) -> Vec<u8> {
    line.send(bytes).unwrap();
    let mut r = vec![0; reply_len];
    let n = line.receive(&mut r, Duration::from_millis(20)).unwrap();
    r.truncate(n);
    r
}

/// The DSS engine's inputs used below, as the harness encodes them.
fn sample_inputs() -> Vec<u64> {
    // trigger, sm_state, sm_ksr_valid, sm_ksr, k_valid, k_count, k_has_work, k_running, count_max, count_min
    vec![1, 2, 1, 5, 1, 0x85, 1, 0, 0x90, 0x70]
}

#[test]
fn packing_puts_the_first_port_at_bit_0_and_sends_the_top_byte_first() {
    let (i, _) = widths(&DSS);
    let bytes = pack(&sample_inputs(), &i, 5);
    assert_eq!(bytes, [0x03, 0x84, 0x83, 0x0b, 0x5d]);
    assert_eq!(unpack(&bytes, &i), sample_inputs());
    assert_eq!(crc8(b"123456789"), 0xa1, "CRC-8/MAXIM check value");
}

#[test]
fn known_frames_get_the_exact_reply_bytes() {
    let mut b = dss_board(0x1234_5678);
    // INFO: protocol 1, id, 35 input bits, 27 output bits, no edges yet.
    let info = [0xa5, 0x01, 0, 0, 0, 0, 0, 0x86];
    assert_eq!(frame(1, &[0; 5]), info);
    assert_eq!(
        exchange(&mut b, &info, 17),
        [0x5a, 0x00, 0x0d, 0x01, 0x12, 0x34, 0x56, 0x78, 0x00, 0x23, 0x00, 0x1b, 0x00, 0x00, 0x00, 0x00, 0x27]
    );
    // PEEK at reset: every output 0.
    let peek = [0xa5, 0x03, 0x03, 0x84, 0x83, 0x0b, 0x5d, 0xf2];
    let (i, o) = widths(&DSS);
    assert_eq!(frame(3, &pack(&sample_inputs(), &i, 5)), peek);
    let reply = exchange(&mut b, &peek, 8);
    assert_eq!(reply, [0x5a, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, crc8(&[0x5a, 0x00, 0x04, 0, 0, 0, 0])]);
    // STEP with a trigger: before the edge all 0, after it the engine is busy scanning.
    let step = [0xa5, 0x04, 0x03, 0x84, 0x83, 0x0b, 0x5d, 0x77];
    let reply = exchange(&mut b, &step, 12);
    assert_eq!(reply[..3], [0x5a, 0x00, 0x08]);
    assert_eq!(reply[11], crc8(&reply[..11]));
    // The same inputs on rust-hdl's simulation of the block alone give the same outputs.
    let mut rtl = RtlUnit::rust_hdl(DSS);
    let (before, after) = {
        use mpgpu_spec::Unit;
        let i = DssIn { trigger: true, sm_state: 2, sm_ksr_valid: true, sm_ksr: 5, k_valid: true, k_count: 5, k_has_work: true, k_running: false, count_max: 16, count_min: -16 };
        rtl.outputs(&i);
        let before = rtl.output_words();
        rtl.clock(&i);
        (before, rtl.output_words())
    };
    assert_eq!(rtl.input_words(), sample_inputs(), "the harness encodes these inputs as the frame carries them");
    assert_eq!(unpack(&reply[3..7], &o), before);
    assert_eq!(unpack(&reply[7..11], &o), after);
    assert_eq!(after[0], 1, "busy after the trigger's edge");
    assert_eq!(after[1], 1, "the scan reads entry 0 after the trigger's edge and names entry 1 for the next cycle");
    assert_eq!(reply, [0x5a, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, crc8(&[0x5a, 0, 8, 0, 0, 0, 0, 0, 0, 0, 3])]);
    // INFO counts the edge.
    let reply = exchange(&mut b, &info, 17);
    assert_eq!(reply[12..16], [0, 0, 0, 1]);
    // The status LEDs: frames toggled 4 times, no error, 1 step.
    assert_eq!(b.board().led() & 0b1111_1110, 0b0000_1000);
}

#[test]
fn the_dss_engine_in_lockstep_with_its_model_through_the_simulated_board() {
    // The harness's FPGA backend on the default target, the simulated board.
    let t = Instant::now();
    let rtl = RtlUnit::with_backend(DssPorts { sms: 13, broken_tie: false }, Backend::Fpga).unwrap();
    assert!(!rtl.observes_state());
    let mut ls = Lockstep::new(DssModel::new(13), rtl, 16);
    let mut acts = 0;
    for r in words(0x2545_f491_4f6c_dd1d, 300) {
        let i = dss_in(r, 11);
        let o = ls.step(&i).unwrap_or_else(|m| panic!("{m}"));
        acts += (o.act != mpgpu_spec::units::sched::dss::Act::None) as u32;
    }
    assert!(acts > 3, "the stimulus reached only {acts} decisions with an action");
    eprintln!("300 lockstep cycles through the simulated board in {:.1} s", t.elapsed().as_secs_f64());
}

#[test]
fn the_priority_engine_in_lockstep_with_its_model_through_the_simulated_board() {
    use mpgpu_ref::units::prio::Prio as PrioModel;
    use mpgpu_spec::units::sched::PolicyCode;
    let mode = PolicyCode::PpqShared;
    let rtl = RtlUnit::with_backend(PrioPorts { sms: 13, mode, broken_victim: false }, Backend::Fpga).unwrap();
    let mut ls = Lockstep::new(PrioModel::new(13, mode), rtl, 16);
    for r in words(0x9e37_79b9_7f4a_7c15, 150) {
        let i = prio_in(r);
        ls.step(&i).unwrap_or_else(|m| panic!("{m}"));
    }
}

#[test]
#[cfg_attr(not(feature = "long"), ignore = "long tier: scripts/test --long (the engines run through the board in the default suite)")]
fn the_whole_framework_in_lockstep_with_its_model_through_the_simulated_board() {
    use mpgpu_ref::units::framework::{Framework, Mechanism, Policy};
    use mpgpu_spec::units::sched::fw::{In, KernelCmd, TbDone};
    use mpgpu_spec::units::sched::SchedParams;
    // Two launches on 4 SMs under DSS, preempted SMs drained, a block finishing every third
    // cycle on an SM that holds one: the outputs compared every cycle (the registers cannot
    // be read over the link).
    let t = Instant::now();
    let ports = SchedPorts { sms: 4, mode: Policy::Dss.code(), faults: SchedFaults::default(), sharing: false };
    let rtl = RtlUnit::with_backend(ports, Backend::Fpga).unwrap();
    let model = Framework::new(SchedParams::new(4, 2).unwrap(), Policy::Dss, Mechanism::Drain);
    let mut ls = Lockstep::new(model, rtl, 16);
    let cmds = [KernelCmd { handle: 7, tbs: 6, tk: 2, priority: 0, tokens: 2 }, KernelCmd { handle: 9, tbs: 3, tk: 1, priority: 0, tokens: 2 }];
    let (mut next, mut resident, mut issued, mut retired) = (0usize, Vec::<TbDone>::new(), 0, 0);
    for cycle in 0..80 {
        let tb_done = if cycle % 3 == 2 { resident.pop() } else { None };
        // (SM 0 reports itself full for a while: the board carries the input)
        let full = if (10..30).contains(&cycle) { 1 } else { 0 };
        let i = In { cmd: cmds.get(next).copied(), tb_done, tb_saved: None, full, quota: None };
        let o = ls.step(&i).unwrap_or_else(|m| panic!("{m}"));
        next += o.cmd_taken as usize;
        if let Some(t) = o.issue {
            resident.push(TbDone { sm: t.sm, kernel: t.kernel });
            issued += 1;
        }
        retired += o.retired.is_some() as u32;
    }
    assert_eq!((next, issued, retired), (2, 9, 2), "both launches admitted, every block issued, both retired");
    eprintln!("80 lockstep cycles of Sched through the simulated board in {:.1} s", t.elapsed().as_secs_f64());
}

#[test]
fn a_corrupted_frame_is_refused_with_both_checksums_and_the_next_frame_works() {
    let mut link = dss_link(Box::new(dss_board(block_id(&DSS))));
    let good = link.frame(mpgpu_rtl::board::CMD_PEEK, Some(&sample_inputs()));
    let mut bad = good.clone();
    bad[4] ^= 0x10;
    let carried = bad[bad.len() - 1];
    let computed = crc8(&bad[..bad.len() - 1]);
    match link.request("PEEK", &bad) {
        Err(LinkError::Refused { status: 1, detail, .. }) => {
            assert_eq!(detail, format!("its checksum is wrong: the board computed {computed:#04x}, the frame carried {carried:#04x}"))
        }
        r => panic!("expected a checksum refusal, got {r:?}"),
    }
    // An unknown command is refused too.
    let unknown = frame(0x42, &good[2..good.len() - 1]);
    let e = link.request("command 0x42", &unknown).unwrap_err();
    assert!(e.to_string().contains("unknown command 0x42"), "{e}");
    // The next frames work, and nothing was clocked.
    assert_eq!(link.peek(&sample_inputs()).unwrap(), vec![0; 8]);
    assert_eq!(link.info().unwrap().steps, 0);
    assert_eq!(link.step(&sample_inputs()).unwrap().1[0], 1);
}

/// A line that flips one bit of the `n`th byte the board sends.
struct Damage<L: Line> {
    inner: L,
    at: usize,
    seen: usize,
}

impl<L: Line> Line for Damage<L> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.send(bytes)
    }
    fn receive(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        let n = self.inner.receive(buf, timeout)?;
        for (k, b) in buf[..n].iter_mut().enumerate() {
            if self.seen + k == self.at {
                *b ^= 0x04;
            }
        }
        self.seen += n;
        Ok(n)
    }
    fn quiet(&mut self, t: Duration) -> io::Result<()> {
        self.inner.quiet(t)
    }
    fn name(&self) -> String {
        "damaged line".into()
    }
}

#[test]
fn a_damaged_reply_is_an_error_that_names_both_checksums() {
    // The 6th byte of the first reply (INFO's id) is damaged on the way.
    let mut link = dss_link(Box::new(Damage { inner: dss_board(0x1234_5678), at: 5, seen: 0 }));
    let e = link.info().unwrap_err();
    assert_eq!(
        e.to_string(),
        "damaged line: the reply to INFO is damaged: its checksum is 0x27, its bytes give 0x58 (5a 00 0d 01 12 30 56 78 00 23 00 1b 00 00 00 00 27)"
    );
    assert!(matches!(e, LinkError::BadChecksum { computed: 0x58, received: 0x27, .. }));
    let msg = link.info().map(|i| i.block_id);
    assert_eq!(msg.unwrap(), 0x1234_5678, "the next reply arrives whole");
    // A damaged sync byte.
    let mut link = dss_link(Box::new(Damage { inner: dss_board(1), at: 0, seen: 0 }));
    let e = link.info().unwrap_err();
    assert!(e.to_string().contains("does not start with the board's sync byte 5a: got 5e 00 0d"), "{e}");
}

#[test]
fn a_truncated_frame_times_out_on_the_host_and_the_board_drops_it() {
    let mut link = dss_link(Box::new(dss_board(block_id(&DSS))));
    let step = link.frame(mpgpu_rtl::board::CMD_STEP, Some(&sample_inputs()));
    let t = Instant::now();
    let e = link.request("a truncated STEP", &step[..4]).unwrap_err();
    assert!(matches!(e, LinkError::Timeout { ref got, .. } if got.is_empty()), "{e:?}");
    assert_eq!(e.to_string(), "simulated board: timeout after 20 ms waiting for the reply to a truncated STEP: 0 of 3 bytes arrived (nothing)");
    assert!(t.elapsed() < Duration::from_secs(10));
    // The board dropped the partial frame after its idle timeout: the next frames work and
    // the truncated STEP gave no edge.
    link.recover().unwrap();
    let info = link.info().unwrap();
    assert_eq!(info.steps, 0);
    let (before, after) = link.step(&sample_inputs()).unwrap();
    assert_eq!((before[0], after[0]), (0, 1));
    // A frame cut short and followed at once by a whole one: the board reads on into the next
    // frame, so the checksum fails (or the reply never comes); after recovering, all is well.
    link.line().send(&step[..3]).unwrap();
    assert!(link.info().is_err());
    link.recover().unwrap();
    assert_eq!(link.info().unwrap().steps, 1);
}

#[test]
fn a_board_holding_another_block_or_configuration_is_refused() {
    // Built for 16 SMs; the host asks for 13.
    let mut link = dss_link(Box::new(dss_board(block_id(&DSS))));
    let want = Expected::of(&DssPorts { sms: 13, broken_tie: false });
    let e = link.connect(&want).unwrap_err();
    let LinkError::WrongBlock { ref got, .. } = e else { panic!("expected a wrong-block error, got {e:?}") };
    assert_eq!(got.block_id, block_id(&DSS));
    let msg = e.to_string();
    assert!(msg.contains("dss:DssPorts { sms: 13, broken_tie: false }") && msg.contains("35 input and 27 output bits"), "{msg}");
    // The right one connects.
    assert_eq!(link.connect(&Expected::of(&DSS)).unwrap().steps, 0);
    // Another block's wrapper on the line.
    let sched = SchedPorts { sms: 16, mode: mpgpu_spec::units::sched::PolicyCode::Dss, faults: SchedFaults::default(), sharing: false };
    let mut link = dss_link(Box::new(dss_board(block_id(&DSS))));
    let e = link.connect(&Expected::of(&sched)).unwrap_err();
    assert!(e.to_string().contains("expected") && e.to_string().contains("214 and 78 bits"), "{e}");
}

#[test]
fn reset_returns_the_block_and_the_wrapper_to_their_initial_state() {
    let mut sim = dss_board(block_id(&DSS));
    let reset = frame(mpgpu_rtl::board::CMD_RESET, &[0; 5]);
    let step = frame(mpgpu_rtl::board::CMD_STEP, &pack(&sample_inputs(), &widths(&DSS).0, 5));
    for _ in 0..3 {
        assert_eq!(exchange(&mut sim, &step, 12).len(), 12);
    }
    assert_eq!(exchange(&mut sim, &reset, 4), [0x5a, 0x00, 0x00, crc8(&[0x5a, 0, 0])]);
    sim.quiet(Duration::from_millis(1)).unwrap();
    assert_eq!(sim.resets, 1, "the wrapper asked for the global reset");
    let mut link = dss_link(Box::new(sim));
    assert_eq!(link.info().unwrap().steps, 0);
    let (before, after) = link.step(&sample_inputs()).unwrap();
    assert_eq!((before, after[0]), (vec![0; 8], 1), "the block starts again from its initial state");
}

#[test]
fn the_board_wrappers_pass_yosys_icarus_and_verilator() {
    let sched = SchedPorts { sms: 16, mode: mpgpu_spec::units::sched::PolicyCode::Dss, faults: SchedFaults::default(), sharing: false };
    let prio = PrioPorts { sms: 16, mode: mpgpu_spec::units::sched::PolicyCode::PpqShared, broken_victim: false };
    for (name, v) in [
        ("board_dss", board_link::board_verilog(&DSS, BoardConfig::ulx3s(block_id(&DSS), 115_200)).unwrap()),
        ("board_prio", board_link::board_verilog(&prio, BoardConfig::ulx3s(block_id(&prio), 115_200)).unwrap()),
        ("board_sched", board_link::board_verilog(&sched, BoardConfig::ulx3s(block_id(&sched), 115_200)).unwrap()),
    ] {
        let dir = mpgpu_rtl::check::check_dir(name);
        mpgpu_rtl::check::check_verilog(&dir, &mpgpu_rtl::board::waive_state_codes(&v)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// The frames of a session: INFO, then PEEKs and STEPs of seeded random inputs, a damaged
/// frame, an unknown command, RESET and INFO again.
fn session(in_widths: &[u32], seed: u64, steps: usize) -> Vec<Vec<u8>> {
    let bytes = mpgpu_rtl::board::bytes_for(in_widths.iter().sum::<u32>() as usize);
    let mut x = seed | 1;
    let mut frames = vec![frame(1, &vec![0; bytes])];
    for k in 0..steps {
        let words: Vec<u64> = in_widths
            .iter()
            .map(|&w| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x & ((1u64 << w) - 1)
            })
            .collect();
        let payload = pack(&words, in_widths, bytes);
        if k % 4 == 0 {
            frames.push(frame(3, &payload));
        }
        frames.push(frame(4, &payload));
    }
    let mut bad = frame(4, &vec![0; bytes]);
    bad[2] ^= 1;
    frames.push(bad);
    frames.push(frame(9, &vec![0; bytes]));
    frames.push(frame(2, &vec![0; bytes]));
    frames.push(frame(1, &vec![0; bytes]));
    frames
}

/// Every reply of `frames` on `line`, the line left quiet for 1 ms after each.
fn replies(line: &mut dyn Line, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    frames
        .iter()
        .map(|f| {
            line.send(f).unwrap();
            let mut head = [0u8; 3];
            assert_eq!(line.receive(&mut head, Duration::from_millis(20)).unwrap(), 3, "no reply to {f:02x?}");
            let mut rest = vec![0u8; head[2] as usize + 1];
            assert_eq!(line.receive(&mut rest, Duration::from_millis(20)).unwrap(), rest.len());
            line.quiet(Duration::from_millis(1)).unwrap();
            [head.to_vec(), rest].concat()
        })
        .collect()
}

#[test]
fn the_generated_verilog_answers_byte_for_byte_as_the_rust_hdl_simulation() {
    // The wrapper's Verilog (what scripts/board synthesizes, at the simulation's divisor),
    // compiled by Verilator and driven through the same host transport.
    let (i, _) = widths(&DSS);
    let frames = session(&i, 7, 120);
    let expected = replies(&mut dss_board(block_id(&DSS)), &frames);
    let mut verilated = board_link::verilated_board(&DSS).unwrap();
    let got = replies(verilated.as_mut(), &frames);
    for (k, (e, g)) in expected.iter().zip(&got).enumerate() {
        assert_eq!(g, e, "reply {k} to {:02x?}", frames[k]);
    }
    assert_eq!(got.len(), frames.len());
    assert_eq!(got[got.len() - 1][12..16], [0, 0, 0, 0], "RESET acted on the Verilated board too");
    // The whole framework's wrapper too (214 input, 78 output bits: wider than a word), in the
    // long tier (a Verilator model of its own).
    if cfg!(feature = "long") {
        let sched = SchedPorts { sms: 16, mode: mpgpu_spec::units::sched::PolicyCode::Dss, faults: SchedFaults::default(), sharing: false };
        let frames = session(&widths(&sched).0, 11, 12);
        let expected = replies(board_link::simulated_board(&sched).unwrap().as_mut(), &frames);
        assert_eq!(replies(board_link::verilated_board(&sched).unwrap().as_mut(), &frames), expected);
    }
    // The STEPs' outputs are the rust-hdl block's.
    let mut link = dss_link(board_link::verilated_board(&DSS).unwrap());
    let mut rtl = RtlUnit::rust_hdl(DSS);
    for f in frames.iter().filter(|f| f[1] == 4).take(60) {
        let words = unpack(&f[2..7], &i);
        let (before, after) = link.step(&words).unwrap();
        let i = DssIn {
            trigger: words[0] != 0,
            sm_state: words[1] as u8,
            sm_ksr_valid: words[2] != 0,
            sm_ksr: words[3] as u8,
            k_valid: words[4] != 0,
            k_count: (words[5] as i16 - 128) as i8,
            k_has_work: words[6] != 0,
            k_running: words[7] != 0,
            count_max: (words[8] as i16 - 128) as i8,
            count_min: (words[9] as i16 - 128) as i8,
        };
        use mpgpu_spec::Unit;
        rtl.outputs(&i);
        assert_eq!(rtl.input_words(), words);
        assert_eq!(before, rtl.output_words());
        rtl.clock(&i);
        assert_eq!(after, rtl.output_words());
    }
}

#[test]
fn the_wrappers_port_lists_are_the_harness_s() {
    let names = |v: Vec<mpgpu_tb::ports::Port>| v.into_iter().map(|p| (p.name, p.width as usize)).collect::<Vec<_>>();
    let owned = |v: &[(&str, usize)]| v.iter().map(|(n, w)| (n.to_string(), *w)).collect::<Vec<_>>();
    let d = DSS.block();
    assert_eq!(owned(BoardDss::INPUTS), names(d.input_ports()));
    assert_eq!(owned(BoardDss::OUTPUTS), names(d.output_ports()));
    let s = SchedPorts { sms: 16, mode: mpgpu_spec::units::sched::PolicyCode::Dss, faults: SchedFaults::default(), sharing: false }.block();
    assert_eq!(owned(mpgpu_rtl::BoardSched::INPUTS), names(s.input_ports()));
    assert_eq!(owned(mpgpu_rtl::BoardSched::OUTPUTS), names(s.output_ports()));
    let p = PrioPorts { sms: 16, mode: mpgpu_spec::units::sched::PolicyCode::Npq, broken_victim: false }.block();
    assert_eq!(owned(mpgpu_rtl::BoardPrio::INPUTS), names(p.input_ports()));
    assert_eq!(owned(mpgpu_rtl::BoardPrio::OUTPUTS), names(p.output_ports()));
}
