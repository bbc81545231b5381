// mriq: the Parboil MRI-Q reconstruction, two kernels as in Parboil.
//
// mriq_phimag: phiMag[k] = phiR[k]^2 + phiI[k]^2 for k < numK. One sample per thread.
// params: phiR, phiI, phiMag (addresses), numK
.kernel mriq_phimag
.regs 8
.shared 0
.threads 256
.params 16
    mov.u32     r0, %ctaid.x
    mad.u32     r0, r0, %ntid.x, %tid.x     // k
    ld.param.u32 r1, [12]
    setp.ge.u32 p0, r0, r1
@p0 exit
    shl.b32     r0, r0, 2
    ld.param.u32 r1, [0]
    add.u32     r1, r1, r0
    ld.global.f32 r2, [r1]                  // phiR
    ld.param.u32 r1, [4]
    add.u32     r1, r1, r0
    ld.global.f32 r3, [r1]                  // phiI
    mul.f32     r2, r2, r2
    mad.f32     r2, r3, r3, r2              // phiR*phiR + phiI*phiI
    ld.param.u32 r1, [8]
    add.u32     r1, r1, r0
    st.global.f32 [r1], r2
    exit

// mriq_q: for each voxel i < numX (one per thread),
//   Qr[i] = sum_k phiMag[k] * cos(2pi * (kx[k]*x[i] + ky[k]*y[i] + kz[k]*z[i]))
//   Qi[i] = sum_k phiMag[k] * sin(...)
// summed in order k = 0, 1, ... The k-space samples are staged through shared memory in tiles
// of 256 (one sample per thread, 16 bytes: kx, ky, kz, phiMag); the last tile may be partial.
// Threads past numX help stage every tile but skip the sums and the stores.
// params: numK, numX, kx, ky, kz, phiMag, x, y, z, Qr, Qi
//
// Phases: set-up (load the voxel) 8 regs, 0 B; tile loop 24 regs, 4096 B; store 8 regs, 0 B.
// Each phase uses only r0 .. r(regs-1).
.kernel mriq_q
.regs 24
.shared 4096
.threads 256
.params 44
    phase 8, 0
    mov.u32     r0, %tid.x
    mov.u32     r1, %ctaid.x
    mad.u32     r1, r1, %ntid.x, r0         // i: this thread's voxel
    ld.param.u32 r5, [4]                    // numX
    setp.lt.u32 p1, r1, r5                  // p1: the voxel exists
    shl.b32     r5, r1, 2
    mov.f32     r2, 0.0
    mov.f32     r3, 0.0
    mov.f32     r4, 0.0
    ld.param.u32 r6, [24]
    add.u32     r6, r6, r5
@p1 ld.global.f32 r2, [r6]                  // x
    ld.param.u32 r6, [28]
    add.u32     r6, r6, r5
@p1 ld.global.f32 r3, [r6]                  // y
    ld.param.u32 r6, [32]
    add.u32     r6, r6, r5
@p1 ld.global.f32 r4, [r6]                  // z

    phase 24, 4096
    mov.f32     r5, 0.0                     // Qr
    mov.f32     r6, 0.0                     // Qi
    mov.u32     r7, 0                       // k0: first sample of the tile
    ld.param.u32 r8, [0]                    // numK
    shl.b32     r9, r0, 4                   // this thread's 16-byte slot in the tile
TILE:
    // Stage sample k0 + tid (zeros past numK; they are never summed).
    add.u32     r10, r7, r0
    setp.lt.u32 p2, r10, r8
    shl.b32     r10, r10, 2
    mov.f32     r11, 0.0
    mov.f32     r12, 0.0
    mov.f32     r13, 0.0
    mov.f32     r14, 0.0
    ld.param.u32 r15, [8]
    add.u32     r15, r15, r10
@p2 ld.global.f32 r11, [r15]                // kx
    ld.param.u32 r15, [12]
    add.u32     r15, r15, r10
@p2 ld.global.f32 r12, [r15]                // ky
    ld.param.u32 r15, [16]
    add.u32     r15, r15, r10
@p2 ld.global.f32 r13, [r15]                // kz
    ld.param.u32 r15, [20]
    add.u32     r15, r15, r10
@p2 ld.global.f32 r14, [r15]                // phiMag
    st.shared.f32 [r9], r11
    st.shared.f32 [r9+4], r12
    st.shared.f32 [r9+8], r13
    st.shared.f32 [r9+12], r14
    bar.sync
    sub.u32     r15, r8, r7
    min.u32     r15, r15, 256               // samples in this tile (>= 1)
    shl.b32     r15, r15, 4                 // ... in bytes
@!p1 bra TILE_DONE
    mov.u32     r16, 0                      // byte offset of the sample
SAMPLE:
    ld.shared.f32 r17, [r16]                // kx
    ld.shared.f32 r18, [r16+4]              // ky
    ld.shared.f32 r19, [r16+8]              // kz
    ld.shared.f32 r20, [r16+12]             // phiMag
    mul.f32     r17, r17, r2
    mad.f32     r17, r18, r3, r17
    mad.f32     r17, r19, r4, r17
    mul.f32     r17, r17, 0f40C90FDB        // expArg = 2pi * (kx*x + ky*y + kz*z)
    cos.f32     r18, r17
    sin.f32     r19, r17
    mad.f32     r5, r20, r18, r5            // Qr += phiMag * cos(expArg)
    mad.f32     r6, r20, r19, r6            // Qi += phiMag * sin(expArg)
    add.u32     r16, r16, 16
    setp.lt.u32 p3, r16, r15
@p3 bra SAMPLE
TILE_DONE:
    bar.sync                                // the tile may be overwritten now
    add.u32     r7, r7, 256
    setp.lt.u32 p2, r7, r8
@p2 bra TILE

    phase 8, 0
    shl.b32     r2, r1, 2
    ld.param.u32 r3, [36]
    add.u32     r3, r3, r2
@p1 st.global.f32 [r3], r5
    ld.param.u32 r3, [40]
    add.u32     r3, r3, r2
@p1 st.global.f32 [r3], r6
    exit
