// reduction (CUDA-sample-like tree sum, "reduce3"): each block sums 1024 consecutive f32 of
// in[0..n) into out[ctaid.x]. Thread t first adds in[base+t] and in[base+t+512] (0.0 for
// indices past n) and stores the pair sum in sdata[t]; then a tree of strided adds with a
// barrier between levels: for s = 256, 128, ..., 1: threads t < s do
// sum = sum + sdata[t+s]; sdata[t] = sum. Thread 0 then holds the block's sum and writes it.
// The host launches the kernel again on the partial sums until one value is left.
// params: in, out (addresses), n
//
// Phases: load (index arithmetic and two global loads: 7 live registers, no scratchpad), tree
// (6 registers, 2048 B), final write (4 registers, no scratchpad: the sum is in a register).
.kernel reduce
.regs 10
.shared 2048
.threads 512
.params 12
    phase 7, 0
    mov.u32     r0, %tid.x
    mov.u32     r1, %ctaid.x
    shl.b32     r1, r1, 10
    add.u32     r1, r1, r0              // i = ctaid.x*1024 + tid
    ld.param.u32 r2, [8]                // n
    ld.param.u32 r3, [0]
    shl.b32     r4, r1, 2
    add.u32     r3, r3, r4              // &in[i]
    mov.f32     r4, 0.0
    mov.f32     r5, 0.0
    setp.lt.u32 p0, r1, r2
@p0 ld.global.f32 r4, [r3]              // in[i]
    add.u32     r6, r1, 512
    setp.lt.u32 p1, r6, r2
@p1 ld.global.f32 r5, [r3+2048]         // in[i+512]
    add.f32     r4, r4, r5              // sum
    shl.b32     r1, r0, 2               // r1 = &sdata[tid]
    phase 6, 2048
    st.shared.f32 [r1], r4
    bar.sync
    mov.u32     r2, 256                 // s
TREE:
    setp.lt.u32 p0, r0, r2
    shl.b32     r3, r2, 2
    add.u32     r3, r1, r3              // &sdata[tid+s]
@p0 ld.shared.f32 r5, [r3]
@p0 add.f32     r4, r4, r5
@p0 st.shared.f32 [r1], r4
    bar.sync
    shr.u32     r2, r2, 1
    setp.ne.u32 p1, r2, 0
@p1 bra TREE
    phase 4, 0
    setp.ne.u32 p0, r0, 0
@p0 exit                                // only thread 0 writes
    ld.param.u32 r2, [4]
    mov.u32     r3, %ctaid.x
    shl.b32     r3, r3, 2
    add.u32     r2, r2, r3
    st.global.f32 [r2], r4              // out[ctaid.x] = block sum
    exit
