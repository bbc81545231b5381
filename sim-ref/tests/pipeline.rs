//! The thesis's SM pipeline (`thesis16`, Tanasić's thesis §2.4, Table 6.1): unified issue
//! queue, out-of-order issue within a warp under the scoreboard, early source release,
//! out-of-order commit, fetch gated by memory and control-flow instructions.

use mpgpu_ref::config::{GpuConfig, Pipeline};
use mpgpu_ref::func::Launch;
use mpgpu_ref::program::{Expected, Output, Program, StaticProgram};
use mpgpu_ref::timing::gpu::{Gpu, RunLimits, RunResult};
use mpgpu_ref::assemble_one;
use std::sync::Arc;

fn run(cfg: &GpuConfig, src: &str, blocks: u32, expect: Vec<u32>) -> RunResult {
    let k = Arc::new(assemble_one("k.s", src).unwrap_or_else(|e| panic!("{e}")));
    let p: Box<dyn Program> = Box::new(StaticProgram::new(move |mem| {
        let out = mem.alloc(4 * expect.len() as u32);
        let l = Launch::linear(&k, blocks, vec![out]);
        (vec![l], vec![Output { name: "out".into(), addr: out, expected: Expected::U32(expect) }])
    }));
    let mut g = Gpu::new(cfg);
    g.add_process("p", 0, 0, vec![("k".into(), p)]);
    g.run(RunLimits::default(), &mut |_, _, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = g.result();
    assert!(r.processes[0].verified, "{:?}", r.processes[0].failures);
    r
}

fn thesis(pipeline: Pipeline, iq: u32) -> GpuConfig {
    let mut c = GpuConfig::preset("thesis16").unwrap();
    c.sm[0].pipeline = pipeline;
    c.sm[0].iq_entries = iq;
    c.validate().unwrap();
    c
}

/// One warp: a load that misses, D instructions that need its value, then N independent
/// additions (four chains). In order, the additions wait behind the first consumer (the load's
/// latency, then D + N issue cycles); out of order they issue under the load's latency, as
/// long as the issue queue has room for them beside the D waiting consumers: with 8 entries it
/// has not, and they wait too.
#[test]
fn independent_instructions_issue_past_a_stalled_one() {
    const D: u32 = 24;
    const N: u32 = 160;
    let mut src = String::from(".kernel ooo\n.regs 40\n.threads 32\n.params 4\n mov.u32 r0, %tid.x\n shl.b32 r1, r0, 2\n ld.param.u32 r2, [0]\n add.u32 r2, r2, r1\n mov.u32 r4, 0\n mov.u32 r5, 0\n mov.u32 r6, 0\n mov.u32 r7, 0\n ld.global.u32 r3, [r2]\n");
    for i in 0..D {
        src += &format!(" add.u32 r{}, r3, {i}\n", 10 + i);
    }
    for i in 0..N {
        src += &format!(" add.u32 r{}, r{}, 1\n", 4 + i % 4, 4 + i % 4);
    }
    src += " add.u32 r3, r3, r4\n add.u32 r3, r3, r5\n add.u32 r3, r3, r6\n add.u32 r3, r3, r7\n add.u32 r3, r3, r33\n st.global.u32 [r2], r3\n exit\n";
    let expect = vec![N + D - 1; 32];
    let inorder = run(&thesis(Pipeline::Gpgpusim, 96), &src, 1, expect.clone()).cycles;
    let ooo = run(&thesis(Pipeline::Thesis, 96), &src, 1, expect.clone()).cycles;
    let small = run(&thesis(Pipeline::Thesis, 8), &src, 1, expect).cycles;
    eprintln!("in order {inorder}, out of order {ooo}, with an 8-entry queue {small}");
    assert!(ooo + 100 < inorder, "out of order {ooo} vs in order {inorder}");
    assert!(small > ooo + 100, "an 8-entry queue {small} vs 96 entries {ooo}");
}

/// The thesis's Fig. 6.3 on the thesis's pipeline: the younger `add` overwrites the load's
/// address register while the load is in flight (early source release), and so does the `sub`
/// that restores it (out of order, it need not wait for the load's consumer, as it does in
/// order); the independent `sub r9` commits before the load; the results are right.
#[test]
fn fig_6_3_on_the_thesis_pipeline() {
    let src = ".kernel fig63\n.regs 10\n.threads 32\n.params 4\n\
               mov.u32 r0, %tid.x\n shl.b32 r1, r0, 2\n ld.param.u32 r2, [0]\n add.u32 r2, r2, r1\n\
               add.u32 r4, r0, 100\n st.global.u32 [r2], r4\n membar.gl\n mov.u32 r9, 50\n\
               ld.global.u32 r3, [r2]\n add.u32 r2, r2, 8\n mul.u32 r8, r3, 3\n sub.u32 r9, r9, 4\n\
               sub.u32 r2, r2, 8\n add.u32 r8, r8, r9\n st.global.u32 [r2], r8\n exit\n";
    let r = run(&thesis(Pipeline::Thesis, 96), src, 1, (0..32).map(|t| 3 * (t + 100) + 46).collect());
    assert_eq!(r.sm.war_overwrites, 2, "the add and the sub should overwrite r2 while the load is in flight");
    let mut inorder = thesis(Pipeline::Gpgpusim, 96);
    inorder.sm[0].pipeline = Pipeline::Gpgpusim;
    let r = run(&inorder, src, 1, (0..32).map(|t| 3 * (t + 100) + 46).collect());
    assert_eq!(r.sm.war_overwrites, 1, "in order, only the add overwrites r2 while the load is in flight");
}

/// Two instructions per cycle per SM, from one warp or two: independent ALU work in every
/// warp slot comes close to 2 per SM per cycle and never above.
#[test]
fn issue_is_two_wide() {
    let iters = 100u32;
    let body = "  add.u32 r0, r0, 3\n  add.u32 r1, r1, 5\n  add.u32 r2, r2, 7\n  add.u32 r3, r3, 9\n  add.u32 r5, r5, 1\n  add.u32 r6, r6, 2\n  add.u32 r7, r7, 4\n  add.u32 r8, r8, 6\n";
    let src = format!(
        ".kernel two\n.regs 12\n.threads 256\n.params 4\n\
         mov.u32 r0, 0\n mov.u32 r1, 0\n mov.u32 r2, 0\n mov.u32 r3, 0\n mov.u32 r4, 0\n mov.u32 r5, 0\n mov.u32 r6, 0\n mov.u32 r7, 0\n mov.u32 r8, 0\n\
         L:\n{}\
         add.u32 r4, r4, 1\n setp.lt.u32 p0, r4, {iters}\n@p0 bra L\n\
         add.u32 r0, r0, r1\n add.u32 r0, r0, r2\n add.u32 r0, r0, r3\n add.u32 r0, r0, r5\n add.u32 r0, r0, r6\n add.u32 r0, r0, r7\n add.u32 r0, r0, r8\n\
         mov.u32 r9, %ctaid.x\n mad.u32 r9, r9, %ntid.x, %tid.x\n shl.b32 r9, r9, 2\n ld.param.u32 r10, [0]\n add.u32 r10, r10, r9\n\
         st.global.u32 [r10], r0\n exit\n",
        body.repeat(2)
    );
    let each = 2 * iters * (3 + 5 + 7 + 9 + 1 + 2 + 4 + 6);
    let cfg = thesis(Pipeline::Thesis, 96);
    let full = run(&cfg, &src, 16 * 8, vec![each; 16 * 8 * 256]);
    let bound = 2.0 * 16.0;
    eprintln!("every warp slot busy on thesis16: IPC {:.2} (bound {bound})", full.ipc);
    assert!(full.ipc <= bound && full.ipc >= 0.85 * bound, "IPC {} against the 2-wide bound {bound}", full.ipc);
}
