// stencil: one Jacobi sweep of the 3-D 7-point stencil on an n*n*n f32 grid
// (element (i,j,k) at word (k*n + j)*n + i, i fastest), like Parboil's stencil.
//   interior: out[i,j,k] = c0*in[i,j,k] + c1*(in[i-1] + in[i+1] + in[j-1] + in[j+1] + in[k-1] + in[k+1])
//             (f32, summed in exactly that order, then (c0*centre) + (c1*sum), each op rounded)
//   boundary (i, j or k equal to 0 or n-1): out = in (copied).
// Launch: block [32,4,1], grid [ceil(n/32), ceil(n/4), 1]; each thread owns one (i,j) column
// and marches along k, keeping the below / centre / above values in registers (register
// tiling), two planes per loop trip. Needs n >= 3.
// params: in, out (addresses), n, c0 (f32 bits), c1 (f32 bits)
.kernel stencil7
.regs 40
.shared 0
.threads 128
.params 20
    mov.u32     r0, %ctaid.x
    mad.u32     r0, r0, %ntid.x, %tid.x     // i
    mov.u32     r1, %ctaid.y
    mad.u32     r1, r1, %ntid.y, %tid.y     // j
    ld.param.u32 r2, [8]                    // n
    setp.ge.u32 p0, r0, r2
@p0 exit
    setp.ge.u32 p0, r1, r2
@p0 exit
    mul.u32     r3, r2, r2
    shl.b32     r3, r3, 2                   // P = plane bytes
    shl.b32     r4, r2, 2                   // R = row bytes
    mad.u32     r5, r1, r2, r0              // j*n + i
    shl.b32     r5, r5, 2
    ld.param.u32 r6, [0]
    add.u32     r6, r6, r5                  // &in[i,j,0]
    ld.param.u32 r7, [4]
    add.u32     r7, r7, r5                  // &out[i,j,0]
    sub.u32     r8, r2, 1                   // n-1
    setp.eq.u32 p0, r0, 0
    setp.eq.u32 p1, r1, 0
    or.pred     p0, p0, p1
    setp.eq.u32 p1, r0, r8
    or.pred     p0, p0, p1
    setp.eq.u32 p1, r1, r8
    or.pred     p0, p0, p1
@p0 bra COPY                                // boundary column: copy all n planes

    // interior column
    ld.param.u32 r11, [12]                  // c0
    ld.param.u32 r12, [16]                  // c1
    ld.global.f32 r9, [r6]                  // below = in[k=0]
    st.global.f32 [r7], r9                  // k = 0 is boundary
    add.u32     r6, r6, r3                  // -> plane 1
    add.u32     r7, r7, r3
    ld.global.f32 r10, [r6]                 // centre = in[k=1]
    sub.u32     r13, r2, 2                  // interior planes left (>= 1)
    setp.lt.u32 p0, r13, 2
@p0 bra TAIL
PAIR:                                       // planes k and k+1; r6 = &in[k], r7 = &out[k]
    add.u32     r15, r6, r3                 // &in[k+1]
    add.u32     r16, r15, r3                // &in[k+2]
    sub.u32     r17, r6, r4
    add.u32     r18, r6, r4
    sub.u32     r19, r15, r4
    add.u32     r20, r15, r4
    ld.global.f32 r21, [r15]                // in[k+1]
    ld.global.f32 r22, [r16]                // in[k+2]
    ld.global.f32 r23, [r6-4]
    ld.global.f32 r24, [r6+4]
    ld.global.f32 r25, [r17]
    ld.global.f32 r26, [r18]
    ld.global.f32 r27, [r15-4]
    ld.global.f32 r28, [r15+4]
    ld.global.f32 r29, [r19]
    ld.global.f32 r30, [r20]
    add.f32     r23, r23, r24
    add.f32     r23, r23, r25
    add.f32     r23, r23, r26
    add.f32     r23, r23, r9                // + below
    add.f32     r23, r23, r21               // + above
    mul.f32     r23, r12, r23
    mad.f32     r23, r11, r10, r23
    st.global.f32 [r7], r23
    add.f32     r27, r27, r28
    add.f32     r27, r27, r29
    add.f32     r27, r27, r30
    add.f32     r27, r27, r10               // + below (in[k])
    add.f32     r27, r27, r22               // + above (in[k+2])
    mul.f32     r27, r12, r27
    mad.f32     r27, r11, r21, r27
    add.u32     r31, r7, r3
    st.global.f32 [r31], r27
    mov.u32     r9, r21                     // below = in[k+1]
    mov.u32     r10, r22                    // centre = in[k+2]
    mov.u32     r6, r16
    add.u32     r7, r31, r3
    sub.u32     r13, r13, 2
    setp.ge.u32 p0, r13, 2
@p0 bra PAIR
TAIL:
    setp.eq.u32 p0, r13, 0
@p0 bra LAST
    add.u32     r15, r6, r3
    sub.u32     r17, r6, r4
    add.u32     r18, r6, r4
    ld.global.f32 r21, [r15]                // above
    ld.global.f32 r23, [r6-4]
    ld.global.f32 r24, [r6+4]
    ld.global.f32 r25, [r17]
    ld.global.f32 r26, [r18]
    add.f32     r23, r23, r24
    add.f32     r23, r23, r25
    add.f32     r23, r23, r26
    add.f32     r23, r23, r9
    add.f32     r23, r23, r21
    mul.f32     r23, r12, r23
    mad.f32     r23, r11, r10, r23
    st.global.f32 [r7], r23
    mov.u32     r10, r21
    mov.u32     r6, r15
    add.u32     r7, r7, r3
LAST:
    st.global.f32 [r7], r10                 // k = n-1 is boundary: centre now holds in[n-1]
    exit

COPY:
    mov.u32     r13, r2
CLOOP:
    ld.global.f32 r9, [r6]
    st.global.f32 [r7], r9
    add.u32     r6, r6, r3
    add.u32     r7, r7, r3
    sub.u32     r13, r13, 1
    setp.ne.u32 p0, r13, 0
@p0 bra CLOOP
    exit
