// blur: a 5-tap 1-D convolution staged through a large shared-memory tile, the library's
// kernel of HeteroCore's thick class (heavy blocks, few of them per SM, latency-bound at a
// baseline SM's occupancy; the HeteroCore paper, §2, Table 3).
// out[i] = w0*in[i-2] + w1*in[i-1] + w2*in[i] + w3*in[i+1] + w4*in[i+2] for i < n, in[]
// outside 0..n-1 reading as 0, accumulated in that order (mad.f32 is not fused).
// Each 256-thread block computes 4096 outputs. Its threads first copy the block's 4100
// inputs (its outputs' and two more each side) into the tile, a word at a time each (the
// load, then its store: one load in flight per warp), wait at a barrier, then each computes
// 16 outputs from the tile. The block declares 20 KB of shared memory (the 16.4 KB tile and
// room), so that 2 blocks fit a GTX480 SM, 3 a HeteroCore big SM and 1 a small one.
// params: in, out (addresses), n, w0..w4 (f32 bits)
// launch: block [256,1,1], grid [ceil(n / 4096), 1, 1]
.kernel blur
.regs 20
.shared 20480
.threads 256
.params 32
    mov.u32     r0, %tid.x
    mov.u32     r1, %ctaid.x
    shl.b32     r1, r1, 12          // r1 = base = ctaid.x * 4096
    ld.param.u32 r2, [8]            // r2 = n
    ld.param.u32 r3, [0]            // r3 = in
    mov.u32     r4, r0              // r4 = t, the tile index
    mov.u32     r8, 17              // 17 rounds of 256 cover the 4100 words
LOAD:
    setp.lt.u32 p2, r4, 4100        // in the tile
    add.u32     r5, r1, r4
    sub.u32     r5, r5, 2           // g = base - 2 + t (below 0 wraps past n)
    setp.lt.u32 p0, r5, r2
    and.pred    p0, p0, p2
    shl.b32     r5, r5, 2
    add.u32     r5, r5, r3
    mov.f32     r6, 0.0
@p0 ld.global.f32 r6, [r5]
    shl.b32     r7, r4, 2
@p2 st.shared.f32 [r7], r6          // tile[t] = in[g], or 0
    add.u32     r4, r4, 256
    sub.u32     r8, r8, 1
    setp.ne.u32 p1, r8, 0
@p1 bra LOAD
    bar.sync
    ld.param.f32 r9, [12]           // w0..w4
    ld.param.f32 r10, [16]
    ld.param.f32 r11, [20]
    ld.param.f32 r12, [24]
    ld.param.f32 r13, [28]
    ld.param.u32 r3, [4]            // r3 = out
    mov.u32     r4, r0              // r4 = o, the output within the block
    mov.u32     r8, 16
OUT:
    shl.b32     r7, r4, 2           // tile[o..o+4] = in[base+o-2 .. base+o+2]
    ld.shared.f32 r14, [r7]
    mul.f32     r15, r9, r14
    ld.shared.f32 r14, [r7+4]
    mad.f32     r15, r10, r14, r15
    ld.shared.f32 r14, [r7+8]
    mad.f32     r15, r11, r14, r15
    ld.shared.f32 r14, [r7+12]
    mad.f32     r15, r12, r14, r15
    ld.shared.f32 r14, [r7+16]
    mad.f32     r15, r13, r14, r15
    add.u32     r5, r1, r4          // i = base + o
    setp.lt.u32 p0, r5, r2
    shl.b32     r5, r5, 2
    add.u32     r5, r5, r3
@p0 st.global.f32 [r5], r15
    add.u32     r4, r4, 256
    sub.u32     r8, r8, 1
    setp.ne.u32 p1, r8, 0
@p1 bra OUT
    exit
