// histo (Parboil-histo-like): bins[v % nbins] += 1 for every value v of in[0..n), with
// atom.global.add.u32 on a global histogram. Grid-stride loop: thread i handles i, i+S, i+2S,
// ... (S = threads in the grid), four at a time while four remain (loads first, then four
// atomics), then one at a time.
// params: in, bins (addresses), n, nbins
//
// Phases: prologue (index and parameter set-up, 7 live registers), the unrolled loop
// (16 live registers); no scratchpad.
.kernel histo
.regs 16
.shared 0
.threads 512
.params 16
    phase 7, 0
    mov.u32     r0, %ctaid.x
    mov.u32     r1, %ntid.x
    mad.u32     r0, r0, r1, %tid.x      // i
    mov.u32     r2, %nctaid.x
    mul.u32     r1, r1, r2              // S = threads in the grid
    ld.param.u32 r2, [8]                // n
    ld.param.u32 r3, [0]                // in
    ld.param.u32 r4, [4]                // bins
    ld.param.u32 r5, [12]               // nbins
    shl.b32     r6, r1, 2               // S*4: the byte stride, also 4*S elements
    phase 16, 0
QUAD:
    mad.u32     r7, r1, 3, r0           // i + 3S, the last of four
    setp.ge.u32 p0, r7, r2
@p0 bra ONE                             // fewer than four left
    shl.b32     r7, r0, 2
    add.u32     r7, r3, r7              // &in[i]
    add.u32     r8, r7, r6              // &in[i+S]
    add.u32     r9, r8, r6              // &in[i+2S]
    add.u32     r10, r9, r6             // &in[i+3S]
    ld.global.u32 r11, [r7]
    ld.global.u32 r12, [r8]
    ld.global.u32 r13, [r9]
    ld.global.u32 r14, [r10]
    rem.u32     r11, r11, r5
    rem.u32     r12, r12, r5
    rem.u32     r13, r13, r5
    rem.u32     r14, r14, r5
    shl.b32     r11, r11, 2
    shl.b32     r12, r12, 2
    shl.b32     r13, r13, 2
    shl.b32     r14, r14, 2
    add.u32     r11, r4, r11
    add.u32     r12, r4, r12
    add.u32     r13, r4, r13
    add.u32     r14, r4, r14
    atom.global.add.u32 r15, [r11], 1
    atom.global.add.u32 r15, [r12], 1
    atom.global.add.u32 r15, [r13], 1
    atom.global.add.u32 r15, [r14], 1
    add.u32     r0, r0, r6              // i += 4S
    bra QUAD
ONE:
    setp.ge.u32 p0, r0, r2
@p0 bra DONE
    shl.b32     r7, r0, 2
    add.u32     r7, r3, r7
    ld.global.u32 r11, [r7]
    rem.u32     r11, r11, r5
    shl.b32     r11, r11, 2
    add.u32     r11, r4, r11
    atom.global.add.u32 r15, [r11], 1
    add.u32     r0, r0, r1              // i += S
    bra ONE
DONE:
    exit
