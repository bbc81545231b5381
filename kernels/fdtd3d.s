// fdtd3d (CUDA SDK FDTD3d-like): one sweep of a radius-10 star stencil on an n*n*n f32 grid
// (element (i,j,k) at word (k*n + j)*n + i, i fastest), register-heavy as the unified
// allocation paper's FDTD3d (its Table 1 demand: 48-57 registers).
//   interior (i, j and k all in 10..n-10-1):
//     out = c0*in[i,j,k] + sum over r = 1..10 of c_r * s_r, with
//     s_r = ((((in[k-r] + in[k+r]) + in[i-r]) + in[i+r]) + in[j-r]) + in[j+r]
//     (f32, each op rounded, the terms added to c0*centre in r order by non-fused mad.f32)
//   the other cells: out = in (copied).
// Launch: block [32,4,1], grid [ceil(n/32), ceil(n/4), 1]; each thread owns one (i,j) column
// and marches along k, keeping the 21 values in[k-10..k+10] of its column in registers
// r0..r20 (shifted down one per plane) and the 11 coefficients in r21..r31.
// Needs n >= 21.
// params: in, out (addresses), n, then c0..c10 (f32 bits)
.kernel fdtd3d
.regs 44
.shared 0
.threads 128
.params 56
    mov.u32     r32, %ctaid.x
    mad.u32     r32, r32, %ntid.x, %tid.x   // i
    mov.u32     r33, %ctaid.y
    mad.u32     r33, r33, %ntid.y, %tid.y   // j
    ld.param.u32 r43, [8]                   // n
    setp.ge.u32 p0, r32, r43
@p0 exit
    setp.ge.u32 p0, r33, r43
@p0 exit
    sub.u32     r37, r43, 10                // n-10
    setp.lt.u32 p0, r32, 10
    setp.ge.u32 p1, r32, r37
    or.pred     p0, p0, p1
    setp.lt.u32 p1, r33, 10
    or.pred     p0, p0, p1
    setp.ge.u32 p1, r33, r37
    or.pred     p0, p0, p1                  // p0: a boundary column
    mad.u32     r40, r33, r43, r32          // j*n + i
    shl.b32     r40, r40, 2
    ld.param.u32 r32, [0]
    add.u32     r32, r32, r40               // &in[i,j,0]
    ld.param.u32 r33, [4]
    add.u32     r33, r33, r40               // &out[i,j,0]
    shl.b32     r35, r43, 2                 // row bytes
    mul.u32     r34, r35, r43               // plane bytes
@p0 bra COPY

    // interior column: planes 0..19 into the queue, 0..9 copied
    ld.global.f32 r0, [r32]                 // in[k=0]
    st.global.f32 [r33], r0
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r1, [r32]                 // in[k=1]
    st.global.f32 [r33], r1
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r2, [r32]                 // in[k=2]
    st.global.f32 [r33], r2
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r3, [r32]                 // in[k=3]
    st.global.f32 [r33], r3
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r4, [r32]                 // in[k=4]
    st.global.f32 [r33], r4
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r5, [r32]                 // in[k=5]
    st.global.f32 [r33], r5
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r6, [r32]                 // in[k=6]
    st.global.f32 [r33], r6
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r7, [r32]                 // in[k=7]
    st.global.f32 [r33], r7
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r8, [r32]                 // in[k=8]
    st.global.f32 [r33], r8
    add.u32     r33, r33, r34
    add.u32     r32, r32, r34
    ld.global.f32 r9, [r32]                 // in[k=9]
    st.global.f32 [r33], r9
    add.u32     r33, r33, r34
    mov.u32     r40, r32                    // (&in[k=9])
    add.u32     r32, r32, r34
    ld.global.f32 r10, [r32]                // in[k=10]
    add.u32     r32, r32, r34
    ld.global.f32 r11, [r32]                // in[k=11]
    add.u32     r32, r32, r34
    ld.global.f32 r12, [r32]                // in[k=12]
    add.u32     r32, r32, r34
    ld.global.f32 r13, [r32]                // in[k=13]
    add.u32     r32, r32, r34
    ld.global.f32 r14, [r32]                // in[k=14]
    add.u32     r32, r32, r34
    ld.global.f32 r15, [r32]                // in[k=15]
    add.u32     r32, r32, r34
    ld.global.f32 r16, [r32]                // in[k=16]
    add.u32     r32, r32, r34
    ld.global.f32 r17, [r32]                // in[k=17]
    add.u32     r32, r32, r34
    ld.global.f32 r18, [r32]                // in[k=18]
    add.u32     r32, r32, r34
    ld.global.f32 r19, [r32]                // in[k=19]
    add.u32     r32, r32, r34
    add.u32     r32, r40, r34               // &in[i,j,10]: the centre
    ld.param.u32 r21, [12]                  // c0
    ld.param.u32 r22, [16]                  // c1
    ld.param.u32 r23, [20]                  // c2
    ld.param.u32 r24, [24]                  // c3
    ld.param.u32 r25, [28]                  // c4
    ld.param.u32 r26, [32]                  // c5
    ld.param.u32 r27, [36]                  // c6
    ld.param.u32 r28, [40]                  // c7
    ld.param.u32 r29, [44]                  // c8
    ld.param.u32 r30, [48]                  // c9
    ld.param.u32 r31, [52]                  // c10
    mov.u32     r36, 10                     // k
PLANE:
    mul.u32     r40, r34, 10
    add.u32     r40, r32, r40
    ld.global.f32 r20, [r40]                // in[k+10]: the queue's front
    mul.f32     r38, r21, r10               // c0 * centre
    sub.u32     r41, r32, r35
    add.u32     r42, r32, r35
    add.f32     r39, r9, r11                // r = 1: k-1 + k+1
    ld.global.f32 r40, [r32-4]
    add.f32     r39, r39, r40               // + i-1
    ld.global.f32 r40, [r32+4]
    add.f32     r39, r39, r40               // + i+1
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-1
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+1
    mad.f32     r38, r22, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r8, r12                // r = 2: k-2 + k+2
    ld.global.f32 r40, [r32-8]
    add.f32     r39, r39, r40               // + i-2
    ld.global.f32 r40, [r32+8]
    add.f32     r39, r39, r40               // + i+2
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-2
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+2
    mad.f32     r38, r23, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r7, r13                // r = 3: k-3 + k+3
    ld.global.f32 r40, [r32-12]
    add.f32     r39, r39, r40               // + i-3
    ld.global.f32 r40, [r32+12]
    add.f32     r39, r39, r40               // + i+3
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-3
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+3
    mad.f32     r38, r24, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r6, r14                // r = 4: k-4 + k+4
    ld.global.f32 r40, [r32-16]
    add.f32     r39, r39, r40               // + i-4
    ld.global.f32 r40, [r32+16]
    add.f32     r39, r39, r40               // + i+4
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-4
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+4
    mad.f32     r38, r25, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r5, r15                // r = 5: k-5 + k+5
    ld.global.f32 r40, [r32-20]
    add.f32     r39, r39, r40               // + i-5
    ld.global.f32 r40, [r32+20]
    add.f32     r39, r39, r40               // + i+5
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-5
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+5
    mad.f32     r38, r26, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r4, r16                // r = 6: k-6 + k+6
    ld.global.f32 r40, [r32-24]
    add.f32     r39, r39, r40               // + i-6
    ld.global.f32 r40, [r32+24]
    add.f32     r39, r39, r40               // + i+6
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-6
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+6
    mad.f32     r38, r27, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r3, r17                // r = 7: k-7 + k+7
    ld.global.f32 r40, [r32-28]
    add.f32     r39, r39, r40               // + i-7
    ld.global.f32 r40, [r32+28]
    add.f32     r39, r39, r40               // + i+7
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-7
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+7
    mad.f32     r38, r28, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r2, r18                // r = 8: k-8 + k+8
    ld.global.f32 r40, [r32-32]
    add.f32     r39, r39, r40               // + i-8
    ld.global.f32 r40, [r32+32]
    add.f32     r39, r39, r40               // + i+8
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-8
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+8
    mad.f32     r38, r29, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r1, r19                // r = 9: k-9 + k+9
    ld.global.f32 r40, [r32-36]
    add.f32     r39, r39, r40               // + i-9
    ld.global.f32 r40, [r32+36]
    add.f32     r39, r39, r40               // + i+9
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-9
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+9
    mad.f32     r38, r30, r39, r38
    sub.u32     r41, r41, r35
    add.u32     r42, r42, r35
    add.f32     r39, r0, r20                // r = 10: k-10 + k+10
    ld.global.f32 r40, [r32-40]
    add.f32     r39, r39, r40               // + i-10
    ld.global.f32 r40, [r32+40]
    add.f32     r39, r39, r40               // + i+10
    ld.global.f32 r40, [r41]
    add.f32     r39, r39, r40               // + j-10
    ld.global.f32 r40, [r42]
    add.f32     r39, r39, r40               // + j+10
    mad.f32     r38, r31, r39, r38
    st.global.f32 [r33], r38
    mov.u32     r0, r1
    mov.u32     r1, r2
    mov.u32     r2, r3
    mov.u32     r3, r4
    mov.u32     r4, r5
    mov.u32     r5, r6
    mov.u32     r6, r7
    mov.u32     r7, r8
    mov.u32     r8, r9
    mov.u32     r9, r10
    mov.u32     r10, r11
    mov.u32     r11, r12
    mov.u32     r12, r13
    mov.u32     r13, r14
    mov.u32     r14, r15
    mov.u32     r15, r16
    mov.u32     r16, r17
    mov.u32     r17, r18
    mov.u32     r18, r19
    mov.u32     r19, r20
    add.u32     r32, r32, r34
    add.u32     r33, r33, r34
    add.u32     r36, r36, 1
    setp.lt.u32 p0, r36, r37
@p0 bra PLANE
    // planes n-10..n-1 copied: the queue's r10..r19 hold them
    st.global.f32 [r33], r10
    add.u32     r33, r33, r34
    st.global.f32 [r33], r11
    add.u32     r33, r33, r34
    st.global.f32 [r33], r12
    add.u32     r33, r33, r34
    st.global.f32 [r33], r13
    add.u32     r33, r33, r34
    st.global.f32 [r33], r14
    add.u32     r33, r33, r34
    st.global.f32 [r33], r15
    add.u32     r33, r33, r34
    st.global.f32 [r33], r16
    add.u32     r33, r33, r34
    st.global.f32 [r33], r17
    add.u32     r33, r33, r34
    st.global.f32 [r33], r18
    add.u32     r33, r33, r34
    st.global.f32 [r33], r19
    exit

COPY:
    mov.u32     r36, r43
CLOOP:
    ld.global.f32 r40, [r32]
    st.global.f32 [r33], r40
    add.u32     r32, r32, r34
    add.u32     r33, r33, r34
    sub.u32     r36, r36, 1
    setp.ne.u32 p0, r36, 0
@p0 bra CLOOP
    exit
