// lbm: one D2Q9 lattice-Boltzmann time step (pull streaming + BGK collision) on an n x n
// periodic grid, like Parboil's lbm. Structure of arrays: distribution q of cell (x,y) is word
// q*n*n + y*n + x. Directions q: 0 (0,0), 1 (1,0), 2 (0,1), 3 (-1,0), 4 (0,-1), 5 (1,1),
// 6 (-1,1), 7 (-1,-1), 8 (1,-1); weights 4/9, 1/9 (q1-4), 1/36 (q5-8).
// Per cell (f32, each op rounded, in this order):
//   f[q]  = src[q] at (x - cx[q], y - cy[q]) mod n                       (streaming)
//   rho   = f0+f1+...+f8 (left to right)
//   ux    = (((((f1-f3)+f5)-f6)-f7)+f8) / rho
//   uy    = (((((f2-f4)+f5)+f6)-f7)-f8) / rho
//   base  = (ux*ux + uy*uy)*(-1.5) + 1
//   cu[q] = 0, ux, uy, -ux, -uy, ux+uy, uy-ux, -(ux+uy), -(uy-ux)
//   feq   = (rho*w[q]) * ((cu*cu)*4.5 + (cu*3 + base))
//   dst[q] at (x,y) = (f - feq)*(-omega) + f
// One thread per cell, 1-D blocks of 128. Phases: index math, streaming loads, collision,
// stores; each `phase` gives the most registers live at once in the code that follows it.
// params: src, dst (addresses), n, -omega (f32 bits)
.kernel lbm_d2q9
.regs 48
.shared 0
.threads 128
.params 16
    phase 8, 0
    mov.u32     r0, %ctaid.x
    mad.u32     r0, r0, %ntid.x, %tid.x     // cell t
    ld.param.u32 r1, [8]                    // n
    mul.u32     r2, r1, r1                  // cells
    setp.ge.u32 p0, r0, r2
@p0 exit
    div.u32     r3, r0, r1                  // y
    mul.u32     r4, r3, r1
    sub.u32     r4, r0, r4                  // x
    sub.u32     r5, r1, 1                   // n-1
    setp.eq.u32 p0, r4, 0
    sub.u32     r6, r4, 1
    selp.u32    r6, r5, r6, p0              // xm = x-1 mod n
    setp.eq.u32 p0, r4, r5
    add.u32     r7, r4, 1
    selp.u32    r7, 0, r7, p0               // xp = x+1 mod n
    setp.eq.u32 p0, r3, 0
    sub.u32     r8, r3, 1
    selp.u32    r8, r5, r8, p0              // ym
    setp.eq.u32 p0, r3, r5
    add.u32     r9, r3, 1
    selp.u32    r9, 0, r9, p0               // yp
    mul.u32     r3, r3, r1                  // y*n
    mul.u32     r8, r8, r1                  // ym*n
    mul.u32     r9, r9, r1                  // yp*n
    shl.b32     r2, r2, 2                   // P = bytes per distribution plane
    ld.param.u32 r10, [0]                   // src plane 0
    phase 14, 0
    // streaming (pull): f[q] from (x - cx, y - cy)
    add.u32     r11, r3, r4                 // q0 (x, y)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r12, [r11]
    add.u32     r10, r10, r2
    add.u32     r11, r3, r6                 // q1 (xm, y)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r13, [r11]
    add.u32     r10, r10, r2
    add.u32     r11, r8, r4                 // q2 (x, ym)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r14, [r11]
    add.u32     r10, r10, r2
    add.u32     r11, r3, r7                 // q3 (xp, y)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r15, [r11]
    add.u32     r10, r10, r2
    add.u32     r11, r9, r4                 // q4 (x, yp)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r16, [r11]
    add.u32     r10, r10, r2
    add.u32     r11, r8, r6                 // q5 (xm, ym)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r17, [r11]
    add.u32     r10, r10, r2
    add.u32     r11, r8, r7                 // q6 (xp, ym)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r18, [r11]
    add.u32     r10, r10, r2
    add.u32     r11, r9, r7                 // q7 (xp, yp)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r19, [r11]
    add.u32     r10, r10, r2
    add.u32     r11, r9, r6                 // q8 (xm, yp)
    shl.b32     r11, r11, 2
    add.u32     r11, r11, r10
    ld.global.f32 r20, [r11]
    // output address of q0 (only r2, r3, r4 survive the streaming)
    add.u32     r11, r3, r4
    shl.b32     r11, r11, 2
    ld.param.u32 r10, [4]
    add.u32     r11, r11, r10
    phase 19, 0
    // moments
    add.f32     r21, r12, r13
    add.f32     r21, r21, r14
    add.f32     r21, r21, r15
    add.f32     r21, r21, r16
    add.f32     r21, r21, r17
    add.f32     r21, r21, r18
    add.f32     r21, r21, r19
    add.f32     r21, r21, r20               // rho
    sub.f32     r22, r13, r15
    add.f32     r22, r22, r17
    sub.f32     r22, r22, r18
    sub.f32     r22, r22, r19
    add.f32     r22, r22, r20               // jx
    sub.f32     r23, r14, r16
    add.f32     r23, r23, r17
    add.f32     r23, r23, r18
    sub.f32     r23, r23, r19
    sub.f32     r23, r23, r20               // jy
    div.f32     r22, r22, r21               // ux
    div.f32     r23, r23, r21               // uy
    mul.f32     r24, r23, r23
    mad.f32     r24, r22, r22, r24          // u.u
    mad.f32     r24, r24, -1.5, 1.0         // base
    ld.param.u32 r25, [12]                  // -omega
    mul.f32     r26, r21, 0.44444445        // rho*w0
    mul.f32     r27, r21, 0.11111111        // rho*w1
    mul.f32     r28, r21, 0.027777778       // rho*w5
    // BGK collision, q0 (cu = 0: feq = rho*w0*base)
    mul.f32     r38, r26, r24
    sub.f32     r38, r12, r38
    mad.f32     r29, r38, r25, r12
    // q1: cu = ux
    mad.f32     r38, r22, 3.0, r24
    mul.f32     r39, r22, r22
    mad.f32     r38, r39, 4.5, r38
    mul.f32     r38, r27, r38
    sub.f32     r38, r13, r38
    mad.f32     r30, r38, r25, r13
    // q2: cu = uy
    mad.f32     r38, r23, 3.0, r24
    mul.f32     r39, r23, r23
    mad.f32     r38, r39, 4.5, r38
    mul.f32     r38, r27, r38
    sub.f32     r38, r14, r38
    mad.f32     r31, r38, r25, r14
    // q3: cu = -ux
    neg.f32     r40, r22
    mad.f32     r38, r40, 3.0, r24
    mul.f32     r39, r40, r40
    mad.f32     r38, r39, 4.5, r38
    mul.f32     r38, r27, r38
    sub.f32     r38, r15, r38
    mad.f32     r32, r38, r25, r15
    // q4: cu = -uy
    neg.f32     r40, r23
    mad.f32     r38, r40, 3.0, r24
    mul.f32     r39, r40, r40
    mad.f32     r38, r39, 4.5, r38
    mul.f32     r38, r27, r38
    sub.f32     r38, r16, r38
    mad.f32     r33, r38, r25, r16
    // q5: cu = ux + uy
    add.f32     r40, r22, r23
    mad.f32     r38, r40, 3.0, r24
    mul.f32     r39, r40, r40
    mad.f32     r38, r39, 4.5, r38
    mul.f32     r38, r28, r38
    sub.f32     r38, r17, r38
    mad.f32     r34, r38, r25, r17
    // q7: cu = -(ux + uy)
    neg.f32     r40, r40
    mad.f32     r38, r40, 3.0, r24
    mul.f32     r39, r40, r40
    mad.f32     r38, r39, 4.5, r38
    mul.f32     r38, r28, r38
    sub.f32     r38, r19, r38
    mad.f32     r36, r38, r25, r19
    // q6: cu = uy - ux
    sub.f32     r40, r23, r22
    mad.f32     r38, r40, 3.0, r24
    mul.f32     r39, r40, r40
    mad.f32     r38, r39, 4.5, r38
    mul.f32     r38, r28, r38
    sub.f32     r38, r18, r38
    mad.f32     r35, r38, r25, r18
    // q8: cu = -(uy - ux)
    neg.f32     r40, r40
    mad.f32     r38, r40, 3.0, r24
    mul.f32     r39, r40, r40
    mad.f32     r38, r39, 4.5, r38
    mul.f32     r38, r28, r38
    sub.f32     r38, r20, r38
    mad.f32     r37, r38, r25, r20
    phase 11, 0
    // write the nine new distributions of this cell
    st.global.f32 [r11], r29
    add.u32     r11, r11, r2
    st.global.f32 [r11], r30
    add.u32     r11, r11, r2
    st.global.f32 [r11], r31
    add.u32     r11, r11, r2
    st.global.f32 [r11], r32
    add.u32     r11, r11, r2
    st.global.f32 [r11], r33
    add.u32     r11, r11, r2
    st.global.f32 [r11], r34
    add.u32     r11, r11, r2
    st.global.f32 [r11], r35
    add.u32     r11, r11, r2
    st.global.f32 [r11], r36
    add.u32     r11, r11, r2
    st.global.f32 [r11], r37
    exit
