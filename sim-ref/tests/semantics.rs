//! Instruction semantics, divergence, barriers, atomics and faults of the functional GPU.

use mpgpu_ref::exec::FaultKind;
use mpgpu_ref::func::{Counts, ExecError, FuncGpu, Launch};
use mpgpu_ref::{assemble_one, disassemble};
use mpgpu_spec::isa::Space;
use std::sync::Arc;

struct Run {
    gpu: FuncGpu,
    addrs: Vec<u32>,
    counts: Counts,
}

impl Run {
    fn buf(&self, i: usize, n: usize) -> Vec<u32> {
        self.gpu.mem.read_u32s(self.addrs[i], n)
    }
    fn fbuf(&self, i: usize, n: usize) -> Vec<f32> {
        self.gpu.mem.read_f32s(self.addrs[i], n)
    }
}

fn try_run(src: &str, grid: [u32; 3], block: [u32; 3], bufs: &[Vec<u32>], extra: &[u32]) -> (Result<Counts, ExecError>, FuncGpu, Vec<u32>) {
    let k = Arc::new(assemble_one("test.s", src).unwrap_or_else(|e| panic!("{e}")));
    // The round trip through the disassembler must give the same program.
    let again = assemble_one("again.s", &disassemble(&k)).unwrap_or_else(|e| panic!("{e}\n{}", disassemble(&k)));
    assert!(again.same_program(&k), "disassembly does not round-trip:\n{}", disassemble(&k));
    let mut gpu = FuncGpu::new();
    gpu.max_warp_insts = 10_000_000;
    let addrs: Vec<u32> = bufs.iter().map(|b| gpu.mem.alloc_u32s(b)).collect();
    let mut params = addrs.clone();
    params.extend_from_slice(extra);
    let l = Launch { kernel: k, grid, block, params };
    let r = gpu.launch(&l);
    (r, gpu, addrs)
}

fn run(src: &str, grid: [u32; 3], block: [u32; 3], bufs: &[Vec<u32>], extra: &[u32]) -> Run {
    let (r, gpu, addrs) = try_run(src, grid, block, bufs, extra);
    let counts = r.unwrap_or_else(|e| panic!("{e}"));
    Run { gpu, addrs, counts }
}

/// Prologue: r0 = global thread index, r1 = &out[r0] (param 0 = out).
const PRO: &str = "
    mov.u32 r0, %ctaid.x
    mad.u32 r0, r0, %ntid.x, %tid.x
    ld.param.u32 r1, [0]
    shl.b32 r2, r0, 2
    add.u32 r1, r1, r2
";

fn kernel(body: &str, regs: u32, params: u32) -> String {
    format!(".kernel t\n.regs {regs}\n.threads 32\n.params {params}\n{PRO}\n{body}\n    exit\n")
}

#[test]
fn integer_arithmetic_edge_cases() {
    // Each lane takes a (a, b) pair from the input and writes 13 results.
    let ops = ["add.u32", "sub.u32", "mul.u32", "mul.hi.u32", "mul.hi.s32", "div.u32", "div.s32", "rem.u32", "rem.s32", "min.s32", "max.u32", "shl.b32", "shr.s32"];
    let mut body = String::from("    ld.param.u32 r3, [4]\n    shl.b32 r4, r0, 3\n    add.u32 r3, r3, r4\n    ld.global.u32 r4, [r3]\n    ld.global.u32 r5, [r3+4]\n    mul.u32 r7, r0, 52\n    ld.param.u32 r8, [0]\n    add.u32 r7, r7, r8\n");
    for (i, op) in ops.iter().enumerate() {
        body += &format!("    {op} r6, r4, r5\n    st.global.u32 [r7+{}], r6\n", i * 4);
    }
    let pairs: [(u32, u32); 6] = [(7, 3), (0xffff_fff9, 2), (0x8000_0000, 0xffff_ffff), (5, 0), (1, 33), (0xdead_beef, 0x1234_5678)];
    let input: Vec<u32> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let r = run(&kernel(&body, 9, 8), [1, 1, 1], [32, 1, 1], &[vec![0; 32 * 13], input], &[]);
    let out = r.buf(0, 6 * 13);
    for (l, &(a, b)) in pairs.iter().enumerate() {
        let (sa, sb) = (a as i32, b as i32);
        let expect = [
            a.wrapping_add(b),
            a.wrapping_sub(b),
            a.wrapping_mul(b),
            ((a as u64 * b as u64) >> 32) as u32,
            ((sa as i64 * sb as i64) >> 32) as u32,
            if b == 0 { u32::MAX } else { a / b },
            if b == 0 { u32::MAX } else { sa.wrapping_div(sb) as u32 },
            if b == 0 { a } else { a % b },
            if b == 0 { a } else { sa.wrapping_rem(sb) as u32 },
            sa.min(sb) as u32,
            a.max(b),
            if b >= 32 { 0 } else { a << b },
            (sa >> b.min(31)) as u32,
        ];
        assert_eq!(&out[l * 13..l * 13 + 13], &expect, "lane {l} with a={a:#x} b={b:#x}");
    }
    // Lanes beyond the six pairs read zero pairs: 0/0 gives all ones.
    assert_eq!(r.buf(0, 32 * 13)[31 * 13 + 5], u32::MAX);
}

#[test]
fn float_arithmetic_sfu_and_conversions() {
    let body = "
    cvt.f32.u32 r3, r0          // x = lane as float
    add.f32 r3, r3, 0.5         // x = lane + 0.5
    mul.f32 r4, r3, r3
    mad.f32 r4, r4, 2.0, -1.0   // 2x^2 - 1
    st.global.f32 [r1], r4
    ld.param.u32 r5, [4]
    add.u32 r5, r5, r2
    sqrt.f32 r6, r3
    st.global.f32 [r5], r6
    ld.param.u32 r5, [8]
    add.u32 r5, r5, r2
    sin.f32 r6, r3
    cos.f32 r7, r3
    mul.f32 r6, r6, r6
    mad.f32 r6, r7, r7, r6      // sin^2 + cos^2
    st.global.f32 [r5], r6
    ld.param.u32 r5, [12]
    add.u32 r5, r5, r2
    neg.f32 r6, r3
    cvt.rmi.f32.f32 r6, r6      // floor(-x)
    cvt.s32.f32 r6, r6          // back to an integer
    st.global.s32 [r5], r6
    ld.param.u32 r5, [16]
    add.u32 r5, r5, r2
    ex2.f32 r6, r3
    lg2.f32 r6, r6
    rcp.f32 r7, r3
    mul.f32 r6, r6, r7          // lg2(ex2(x)) / x  ~ 1
    st.global.f32 [r5], r6
";
    let z = vec![0u32; 32];
    let r = run(&kernel(body, 8, 20), [1, 1, 1], [32, 1, 1], &[z.clone(), z.clone(), z.clone(), z.clone(), z], &[]);
    for l in 0..32 {
        let x = l as f32 + 0.5;
        assert_eq!(r.fbuf(0, 32)[l], (x * x) * 2.0 - 1.0);
        assert_eq!(r.fbuf(1, 32)[l], x.sqrt());
        assert!((r.fbuf(2, 32)[l] - 1.0).abs() < 1e-6);
        assert_eq!(r.buf(3, 32)[l] as i32, -(l as i32) - 1);
        assert!((r.fbuf(4, 32)[l] - 1.0).abs() < 1e-5);
    }
}

#[test]
fn conversions_saturate_and_round() {
    let vals = [1.5f32, -1.5, 2.5, -2.5, 3e9, -3e9, f32::NAN, 0.49999997];
    let body = "
    ld.param.u32 r3, [4]
    add.u32 r3, r3, r2
    ld.global.f32 r4, [r3]
    mul.u32 r7, r0, 20
    ld.param.u32 r5, [0]
    add.u32 r7, r7, r5
    cvt.s32.f32 r5, r4
    st.global.u32 [r7], r5
    cvt.u32.f32 r5, r4
    st.global.u32 [r7+4], r5
    cvt.rni.f32.f32 r5, r4
    st.global.f32 [r7+8], r5
    cvt.rpi.f32.f32 r5, r4
    st.global.f32 [r7+12], r5
    cvt.rzi.f32.f32 r5, r4
    st.global.f32 [r7+16], r5
";
    let input: Vec<u32> = vals.iter().map(|v| v.to_bits()).chain(std::iter::repeat(0).take(24)).collect();
    let r = run(&kernel(body, 8, 8), [1, 1, 1], [32, 1, 1], &[vec![0; 32 * 5], input], &[]);
    let out = r.buf(0, 8 * 5);
    for (l, v) in vals.iter().enumerate() {
        let o = &out[l * 5..l * 5 + 5];
        assert_eq!(o[0] as i32, *v as i32, "cvt.s32.f32 {v}");
        assert_eq!(o[1], *v as u32, "cvt.u32.f32 {v}");
        let same = |a: u32, b: f32| f32::from_bits(a) == b || (b.is_nan() && f32::from_bits(a).is_nan());
        assert!(same(o[2], v.round_ties_even()), "rni {v}");
        assert!(same(o[3], v.ceil()), "rpi {v}");
        assert!(same(o[4], v.trunc()), "rzi {v}");
    }
}

#[test]
fn predicates_select_and_guards() {
    let body = "
    setp.lt.u32 p1, r0, 16       // lower half
    and.b32 r3, r0, 1
    setp.eq.u32 p2, r3, 1        // odd
    and.pred p3, p1, p2
    or.pred p4, p1, p2
    xor.pred p5, p1, p2
    not.pred p6, p1
    selp.u32 r4, 1, 0, p3
    selp.u32 r5, 2, 0, p4
    add.u32 r4, r4, r5
    selp.u32 r5, 4, 0, p5
    add.u32 r4, r4, r5
    selp.u32 r5, 8, 0, p6
    add.u32 r4, r4, r5
    mov.u32 r6, 100
@p2 mov.u32 r6, 200              // guarded write: odd lanes only
@!p1 add.u32 r4, r4, r6          // upper half adds 100 or 200
    st.global.u32 [r1], r4
";
    let r = run(&kernel(body, 8, 4), [1, 1, 1], [32, 1, 1], &[vec![0; 32]], &[]);
    for (l, v) in r.buf(0, 32).iter().enumerate() {
        let (lo, odd) = (l < 16, l % 2 == 1);
        let mut e = (lo && odd) as u32 + 2 * (lo || odd) as u32 + 4 * (lo ^ odd) as u32 + 8 * (!lo) as u32;
        if !lo {
            e += if odd { 200 } else { 100 };
        }
        assert_eq!(*v, e, "lane {l}");
    }
}

#[test]
fn float_compares_with_nan() {
    let body = "
    cvt.f32.u32 r3, r0
    div.f32 r4, r3, 0.0          // lane 0: 0/0 = NaN; others +inf
    setp.ne.f32 p1, r4, r4       // NaN != NaN
    setp.eq.f32 p2, r4, r4
    selp.u32 r5, 1, 0, p1
    selp.u32 r6, 2, 0, p2
    add.u32 r5, r5, r6
    st.global.u32 [r1], r5
";
    let r = run(&kernel(body, 8, 4), [1, 1, 1], [32, 1, 1], &[vec![9; 32]], &[]);
    let out = r.buf(0, 32);
    assert_eq!(out[0], 1);
    assert!(out[1..].iter().all(|&v| v == 2));
}

/// Nested if/else: each lane records the path it took, and the code after each join must run
/// once per warp with all lanes (reconvergence), which the instruction count shows.
#[test]
fn nested_divergence_reconverges() {
    let body = "
    mov.u32 r3, 0
    and.b32 r4, r0, 1
    setp.eq.u32 p1, r4, 0
@p1 bra EVEN
    add.u32 r3, r3, 1            // odd lanes
    and.b32 r4, r0, 2
    setp.eq.u32 p2, r4, 0
@p2 bra ODD_A
    add.u32 r3, r3, 10           // lanes 3 mod 4
    bra ODD_JOIN
ODD_A:
    add.u32 r3, r3, 20           // lanes 1 mod 4
ODD_JOIN:
    add.u32 r3, r3, 100          // all odd lanes, together
    bra JOIN
EVEN:
    add.u32 r3, r3, 1000         // even lanes
    setp.lt.u32 p3, r0, 8
@!p3 bra JOIN
    add.u32 r3, r3, 5000         // even lanes below 8
JOIN:
    popc.b32 r5, r3              // executed once, by all 32 lanes
    mov.u32 r6, %laneid
    add.u32 r3, r3, r6
    st.global.u32 [r1], r3
";
    let r = run(&kernel(body, 8, 4), [1, 1, 1], [32, 1, 1], &[vec![0; 32]], &[]);
    for (l, v) in r.buf(0, 32).iter().enumerate() {
        let e = if l % 2 == 1 {
            1 + if l % 4 == 3 { 10 } else { 20 } + 100
        } else {
            1000 + if l < 8 { 5000 } else { 0 }
        } + l as u32;
        assert_eq!(*v, e, "lane {l}");
    }
    // Counted exactly: prologue 5; mov,and,setp,bra = 4; odd: add,and,setp,bra(p2) = 4, then lanes 3mod4: add,bra = 2,
    // lanes 1mod4: add = 1, join: add, bra = 2; even: add,setp,bra = 3, add = 1; JOIN: 5; exit 1.
    assert_eq!(r.counts.warp_insts, 5 + 4 + 4 + 2 + 1 + 2 + 3 + 1 + 4 + 1);
    // Thread instructions show the masks: the JOIN block runs with all 32 lanes.
    let t = 32 * (5 + 4) + 16 * 4 + 8 * 2 + 8 + 16 * 2 + 16 * 3 + 4 + 32 * 4 + 32;
    assert_eq!(r.counts.thread_insts, t);
}

#[test]
fn loops_with_divergent_trip_counts() {
    // Lane l sums 1..=l, then all lanes meet after the loop.
    let body = "
    mov.u32 r3, 0                // sum
    mov.u32 r4, 0                // i
LOOP:
    setp.ge.u32 p1, r4, r0
@p1 bra DONE
    add.u32 r4, r4, 1
    add.u32 r3, r3, r4
    bra LOOP
DONE:
    mul.u32 r3, r3, 2            // once per warp, all lanes
    st.global.u32 [r1], r3
";
    let r = run(&kernel(body, 8, 4), [2, 1, 1], [32, 1, 1], &[vec![0; 64]], &[]);
    for (i, v) in r.buf(0, 64).iter().enumerate() {
        let l = i as u32;
        assert_eq!(*v, l * (l + 1), "thread {i}");
    }
    // Per warp: 5 prologue + 2 + loop; the loop body runs until the longest lane is done.
    // Warp 0: max trip 31 -> 32 tests of (setp, bra) + 31 x (add, add, bra); warp 1: 63.
    let loop_insts = |trips: u64| (trips + 1) * 2 + trips * 3;
    assert_eq!(r.counts.warp_insts, 2 * (5 + 2 + 3) + loop_insts(31) + loop_insts(63));
}

#[test]
fn predicated_exit_of_some_lanes() {
    let body = "
    and.b32 r3, r0, 1
    setp.eq.u32 p1, r3, 1
@p1 exit                         // odd lanes leave
    st.global.u32 [r1], r0
    // the surviving lanes still diverge and reconverge correctly
    setp.lt.u32 p2, r0, 10
@p2 bra SMALL
    st.global.u32 [r1], 7777
    bra END
SMALL:
    add.u32 r4, r0, 1000
    st.global.u32 [r1], r4
END:
    bar.sync                     // exited lanes do not block the barrier
";
    let r = run(&kernel(body, 8, 4), [1, 1, 1], [32, 1, 1], &[vec![0xAAAA; 32]], &[]);
    for (l, v) in r.buf(0, 32).iter().enumerate() {
        let e = if l % 2 == 1 { 0xAAAA } else if l < 10 { 1000 + l as u32 } else { 7777 };
        assert_eq!(*v, e, "lane {l}");
    }
}

#[test]
fn whole_warp_exit_inside_divergence() {
    // Warp 1 exits entirely inside a branch; warp 0 waits at a barrier which must still release.
    let src = "
.kernel t
.regs 8
.threads 64
.params 4
    mov.u32 r0, %tid.x
    ld.param.u32 r1, [0]
    shl.b32 r2, r0, 2
    add.u32 r1, r1, r2
    setp.ge.u32 p1, r0, 32
@p1 bra LEAVE
    bar.sync
    st.global.u32 [r1], 1
    exit
LEAVE:
    st.global.u32 [r1], 2
    exit
";
    let r = run(src, [1, 1, 1], [64, 1, 1], &[vec![0; 64]], &[]);
    let out = r.buf(0, 64);
    assert!(out[..32].iter().all(|&v| v == 1));
    assert!(out[32..].iter().all(|&v| v == 2));
}

#[test]
fn atomics_under_contention() {
    // 4 blocks x 128 threads hit one counter; every old value is seen exactly once.
    let src = "
.kernel t
.regs 8
.threads 128
.params 12
    mov.u32 r0, %ctaid.x
    mad.u32 r0, r0, %ntid.x, %tid.x
    ld.param.u32 r1, [0]
    atom.global.add.u32 r2, [r1], 1
    ld.param.u32 r3, [4]
    shl.b32 r4, r0, 2
    add.u32 r3, r3, r4
    st.global.u32 [r3], r2
    ld.param.u32 r3, [8]
    atom.global.max.s32 r5, [r3], r0
    atom.global.min.u32 r5, [r3+4], r0
    atom.global.exch.b32 r5, [r3+8], r0
    atom.global.add.f32 r5, [r3+12], 0.5
    // a CAS loop: increment [r3+16] by 3 without atom.add
RETRY:
    ld.global.u32 r5, [r3+16]
    add.u32 r6, r5, 3
    atom.global.cas.b32 r7, [r3+16], r5, r6
    setp.ne.u32 p1, r7, r5
@p1 bra RETRY
    exit
";
    let r = run(src, [4, 1, 1], [128, 1, 1], &[vec![0], vec![0; 512], vec![0, u32::MAX, 0, 0, 0]], &[]);
    assert_eq!(r.buf(0, 1)[0], 512);
    let mut olds = r.buf(1, 512);
    olds.sort_unstable();
    assert_eq!(olds, (0..512).collect::<Vec<u32>>());
    let s = r.buf(2, 5);
    assert_eq!(s[0], 511);
    assert_eq!(s[1], 0);
    assert!(s[2] < 512);
    assert_eq!(f32::from_bits(s[3]), 256.0);
    assert_eq!(s[4], 3 * 512);
}

#[test]
fn shared_atomics_and_barrier_across_warps() {
    // Each of 4 warps writes its slice of shared memory; after the barrier every thread reads a
    // value written by a different warp. Without the barrier the read would see zero, because a
    // warp runs until it blocks.
    let src = "
.kernel t
.regs 8
.shared 516
.threads 128
.params 4
    mov.u32 r0, %tid.x
    shl.b32 r1, r0, 2
    add.u32 r2, r0, 1000
    st.shared.u32 [r1], r2
    atom.shared.add.u32 r3, [512], 1
    bar.sync
    add.u32 r4, r0, 32           // a thread of the next warp
    and.b32 r4, r4, 127
    shl.b32 r4, r4, 2
    ld.shared.u32 r5, [r4]
    ld.shared.u32 r6, [512]
    add.u32 r5, r5, r6
    mov.u32 r7, %ctaid.x
    mad.u32 r7, r7, 128, r0
    shl.b32 r7, r7, 2
    ld.param.u32 r6, [0]
    add.u32 r7, r7, r6
    st.global.u32 [r7], r5
    exit
";
    let r = run(src, [2, 1, 1], [128, 1, 1], &[vec![0; 256]], &[]);
    let out = r.buf(0, 256);
    for (i, v) in out.iter().enumerate() {
        let t = (i % 128) as u32;
        assert_eq!(*v, 1000 + (t + 32) % 128 + 128, "thread {i}");
    }
    // The same program without the barrier reads stale shared memory.
    let (res, gpu, addrs) = try_run(&src.replace("    bar.sync\n", ""), [1, 1, 1], [128, 1, 1], &[vec![0; 128]], &[]);
    res.unwrap();
    let out = gpu.mem.read_u32s(addrs[0], 128);
    assert_ne!(out[0], 1000 + 32 + 128, "the barrier test cannot tell a missing barrier");
}

#[test]
fn special_registers_in_3d() {
    let src = "
.kernel t
.regs 12
.threads 96
.params 4
    // linear block id and thread id
    mov.u32 r0, %ctaid.z
    mad.u32 r0, r0, %nctaid.y, %ctaid.y
    mad.u32 r0, r0, %nctaid.x, %ctaid.x
    mov.u32 r1, %tid.z
    mad.u32 r1, r1, %ntid.y, %tid.y
    mad.u32 r1, r1, %ntid.x, %tid.x
    mad.u32 r2, r0, 96, r1
    shl.b32 r2, r2, 4
    ld.param.u32 r3, [0]
    add.u32 r3, r3, r2
    st.global.u32 [r3], r1
    mov.u32 r4, %laneid
    st.global.u32 [r3+4], r4
    mov.u32 r4, %warpid
    st.global.u32 [r3+8], r4
    mov.u32 r5, %tid.x
    mov.u32 r6, %tid.y
    shl.b32 r6, r6, 8
    or.b32 r5, r5, r6
    mov.u32 r6, %tid.z
    shl.b32 r6, r6, 16
    or.b32 r5, r5, r6
    st.global.u32 [r3+12], r5
    exit
";
    let (grid, block) = ([2, 3, 2], [4, 6, 4]);
    let n = 12 * 96;
    let r = run(src, grid, block, &[vec![0; n * 4]], &[]);
    let out = r.buf(0, n * 4);
    for b in 0..12 {
        for t in 0..96u32 {
            let o = &out[(b * 96 + t as usize) * 4..][..4];
            assert_eq!(o[0], t);
            assert_eq!(o[1], t % 32);
            assert_eq!(o[2], t / 32);
            let (x, y, z) = (t % 4, (t / 4) % 6, t / 24);
            assert_eq!(o[3], x | y << 8 | z << 16);
        }
    }
}

#[test]
fn local_memory_is_per_thread() {
    let body = "
    mov.u32 r3, 0
FILL:
    shl.b32 r4, r3, 2
    add.u32 r5, r0, r3
    st.local.u32 [r4], r5
    add.u32 r3, r3, 1
    setp.lt.u32 p1, r3, 8
@p1 bra FILL
    ld.local.u32 r6, [28]
    ld.local.u32 r7, [0]
    add.u32 r6, r6, r7
    st.global.u32 [r1], r6
";
    let src = kernel(body, 8, 4).replace(".threads 32", ".threads 32\n.local 32");
    let r = run(&src, [2, 1, 1], [32, 1, 1], &[vec![0; 64]], &[]);
    for (i, v) in r.buf(0, 64).iter().enumerate() {
        assert_eq!(*v, 2 * i as u32 + 7);
    }
}

#[test]
fn partial_last_warp() {
    // 40 threads: the second warp has 8 lanes; lanes past the block never run.
    let src = "
.kernel t
.regs 4
.threads 40
.params 4
    ld.param.u32 r1, [0]
    atom.global.add.u32 r2, [r1], 1
    exit
";
    let r = run(src, [3, 1, 1], [40, 1, 1], &[vec![0]], &[]);
    assert_eq!(r.buf(0, 1)[0], 120);
    assert_eq!(r.counts.thread_insts, 3 * 3 * 40);
    assert_eq!(r.counts.warp_insts, 3 * 2 * 3);
}

fn fault_of(src: &str, bufs: &[Vec<u32>], extra: &[u32]) -> ExecError {
    let (res, _, _) = try_run(src, [2, 1, 1], [64, 1, 1], bufs, extra);
    res.expect_err("expected a fault")
}

#[test]
fn out_of_range_accesses_are_reported_not_panics() {
    let head = ".kernel bad\n.regs 8\n.shared 256\n.local 8\n.threads 64\n.params 8\n    mov.u32 r0, %tid.x\n    ld.param.u32 r1, [0]\n";
    // Global: lane 37 of block 1 (warp 1, lane 5) reads one word past a 100-word buffer's
    // last page.
    let src = format!(
        "{head}    mov.u32 r2, %ctaid.x\n    mad.u32 r3, r2, 64, r0\n    setp.eq.u32 p1, r3, 101\n    shl.b32 r4, r3, 2\n    add.u32 r4, r4, r1\n@p1 add.u32 r4, r4, 4096\n    ld.global.u32 r5, [r4]\n    exit\n"
    );
    let e = fault_of(&src, &[vec![0; 100]], &[0]);
    match &e {
        ExecError::Fault { kernel, block, warp, fault, line, .. } => {
            assert_eq!(kernel, "bad");
            assert_eq!(*block, [1, 0, 0]);
            assert_eq!(*warp, 1);
            assert_eq!(fault.lane, 5);
            assert_eq!(fault.space, Space::Global);
            assert_eq!(fault.kind, FaultKind::Unmapped);
            assert_eq!(*line, Some(15));
        }
        e => panic!("wrong error {e:?}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("kernel `bad`, block (1,0,0), warp 1, lane 5") && msg.contains("unmapped address"), "{msg}");

    // Shared out of range.
    let src = format!("{head}    shl.b32 r2, r0, 3\n    ld.shared.u32 r3, [r2]\n    exit\n");
    match fault_of(&src, &[vec![0]], &[0]) {
        ExecError::Fault { block, warp, fault, .. } => {
            assert_eq!((block, warp, fault.lane), ([0, 0, 0], 1, 0));
            assert_eq!(fault.kind, FaultKind::OutOfRange { limit: 256 });
            assert_eq!(fault.addr, 256);
        }
        e => panic!("wrong error {e:?}"),
    }
    // Local out of range (a negative offset).
    let src = format!("{head}    st.local.u32 [r0-4], r0\n    exit\n");
    match fault_of(&src, &[vec![0]], &[0]) {
        ExecError::Fault { fault, .. } => {
            assert_eq!(fault.space, Space::Local);
            assert!(matches!(fault.kind, FaultKind::OutOfRange { limit: 8 }));
        }
        e => panic!("wrong error {e:?}"),
    }
    // Misaligned global store.
    let src = format!("{head}    st.global.u32 [r1+2], r0\n    exit\n");
    match fault_of(&src, &[vec![0]], &[0]) {
        ExecError::Fault { fault, .. } => assert_eq!(fault.kind, FaultKind::Misaligned),
        e => panic!("wrong error {e:?}"),
    }
    // A bad launch: wrong block size and parameter count.
    let k = Arc::new(assemble_one("x.s", &format!("{head}    exit\n")).unwrap());
    let mut gpu = FuncGpu::new();
    let e = gpu.launch(&Launch { kernel: k.clone(), grid: [1, 1, 1], block: [32, 1, 1], params: vec![0, 0] }).unwrap_err();
    assert!(e.to_string().contains("has 32 threads but the kernel declares `.threads 64`"), "{e}");
    let e = gpu.launch(&Launch { kernel: k, grid: [1, 1, 1], block: [64, 1, 1], params: vec![0] }).unwrap_err();
    assert!(e.to_string().contains("1 parameter words given"), "{e}");
}

#[test]
fn watchdog_stops_endless_loops() {
    let src = ".kernel spin\n.regs 2\n.threads 32\nTOP:\n    add.u32 r0, r0, 1\n    bra TOP\n";
    let k = Arc::new(assemble_one("spin.s", src).unwrap());
    let mut gpu = FuncGpu::new();
    gpu.max_warp_insts = 100_000;
    let e = gpu.launch(&Launch::linear(&k, 1, vec![])).unwrap_err();
    assert!(matches!(e, ExecError::Watchdog { limit: 100_000, .. }), "{e:?}");
    assert!(e.to_string().contains("endless loop"));
}

#[test]
fn divergent_barrier_is_warp_granular() {
    // Documented semantics: a warp arrives at bar.sync with whatever lanes are active; the
    // barrier counts warps. Here half of warp 0 skips the barrier; the block still completes
    // and both halves finish.
    let src = "
.kernel t
.regs 6
.threads 64
.params 4
    mov.u32 r0, %tid.x
    ld.param.u32 r1, [0]
    shl.b32 r2, r0, 2
    add.u32 r1, r1, r2
    setp.lt.u32 p1, r0, 16
@p1 bra SKIP
    bar.sync
SKIP:
    st.global.u32 [r1], 1
    exit
";
    let r = run(src, [1, 1, 1], [64, 1, 1], &[vec![0; 64]], &[]);
    assert!(r.buf(0, 64).iter().all(|&v| v == 1));
}

#[test]
fn reconvergence_points_are_immediate_post_dominators() {
    let k = assemble_one(
        "r.s",
        ".kernel r\n.regs 2\n.threads 32\n\
         @p0 bra A\n\
         nop\n\
         @p1 bra B\n\
         nop\n\
         B:\n nop\n\
         bra C\n\
         A:\n nop\n\
         C:\n nop\n\
         @p2 exit\n\
         L:\n nop\n\
         @p3 bra L\n\
         exit\n",
    )
    .unwrap();
    let reconv: Vec<(u32, u32)> = k
        .code
        .iter()
        .enumerate()
        .filter_map(|(pc, i)| match i.op {
            mpgpu_spec::isa::Op::Bra { reconv, .. } if i.guard.is_some() => Some((pc as u32, reconv)),
            _ => None,
        })
        .collect();
    // 0: @p0 bra A -> joins at C (7); 2: @p1 bra B -> joins at B (4); 10: @p3 bra L -> 11.
    assert_eq!(reconv, vec![(0, 7), (2, 4), (10, 11)]);
}
