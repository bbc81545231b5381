// cutcp: Parboil-style cutoff Coulombic potential on a 2-D lattice (the plane z = 0).
//
// Lattice point (ix, iy), 0 <= ix, iy < size, sits at (ix*h, iy*h, 0). A block of n threads
// covers 32 x n/8 points (32 x 16 at its 128): thread t takes the 4 consecutive points
// ix0 .. ix0+3 with ix0 = 32*ctaid.x + 4*(t&7) and iy = (n/8)*ctaid.y + (t>>3). The host gives each block a list of the atoms (x, y, z, q:
// 16 bytes each, in increasing atom order) that may lie within the cutoff of its points:
// atoms[start[b] .. start[b]+count[b]] with b = ctaid.y*nctaid.x + ctaid.x. The block stages
// the list through shared memory in tiles of up to 768 atoms (12288 B), and every point sums,
// over the atoms with r^2 < cutoff^2 in list order,
//   e += q * rsqrt(r^2) * s * s,  s = 1 - r^2/cutoff^2,
// where r^2 = dx*dx + (dy*dy + z*z). Points past the lattice edge are computed by nobody:
// their threads help stage tiles and skip the sums; out[iy*size + ix] = e for the others.
// params: atoms, start, count, out (addresses), size, h, cutoff^2, 1/cutoff^2 (f32)
//
// Phases: set-up 8 regs, 0 B; tile loop 28 regs, 12288 B; store 8 regs, 0 B. Each phase uses
// only r0 .. r(regs-1).
.kernel cutcp
.regs 28
.shared 12288
.threads 128
.params 32
    phase 8, 0
    mov.u32     r0, %tid.x
    and.b32     r4, r0, 7
    shl.b32     r4, r4, 2
    mov.u32     r1, %ctaid.x
    shl.b32     r2, r1, 5
    add.u32     r4, r4, r2                  // ix0
    shr.u32     r5, r0, 3
    mov.u32     r2, %ctaid.y
    mov.u32     r3, %ntid.x
    shr.u32     r3, r3, 3                   // rows per block
    mul.u32     r3, r2, r3
    add.u32     r5, r5, r3                  // iy
    mad.u32     r1, r2, %nctaid.x, r1       // block index b
    shl.b32     r1, r1, 2
    ld.param.u32 r2, [4]
    add.u32     r2, r2, r1
    ld.global.u32 r6, [r2]                  // start[b]
    ld.param.u32 r2, [8]
    add.u32     r2, r2, r1
    ld.global.u32 r7, [r2]                  // count[b]
    ld.param.u32 r2, [16]                   // size
    setp.lt.u32 p1, r4, r2
    setp.lt.u32 p2, r5, r2
    and.pred    p1, p1, p2                  // p1: the thread has at least one point

    phase 28, 12288
    mov.u32     r8, r0                      // tid
    mov.u32     r25, %ntid.x
    shl.b32     r25, r25, 2                 // the staging stride: n threads x 4 bytes
    ld.param.f32 r9, [20]                   // h
    cvt.f32.u32 r10, r5
    mul.f32     r10, r10, r9                // py
    cvt.f32.u32 r11, r4
    mul.f32     r11, r11, r9                // px of point 0
    add.u32     r0, r4, 1
    cvt.f32.u32 r12, r0
    mul.f32     r12, r12, r9                // px of point 1
    add.u32     r0, r4, 2
    cvt.f32.u32 r13, r0
    mul.f32     r13, r13, r9                // px of point 2
    add.u32     r0, r4, 3
    cvt.f32.u32 r14, r0
    mul.f32     r14, r14, r9                // px of point 3
    mov.f32     r0, 0.0                     // e0 .. e3
    mov.f32     r1, 0.0
    mov.f32     r2, 0.0
    mov.f32     r3, 0.0
    ld.param.f32 r15, [24]                  // cutoff^2
    ld.param.f32 r9, [28]                   // 1/cutoff^2
    mov.u32     r16, 0                      // t: first list entry of the tile
    setp.eq.u32 p2, r7, 0
@p2 bra DONE                                // no atom near this block
TILE:
    sub.u32     r17, r7, r16
    min.u32     r17, r17, 768
    shl.b32     r17, r17, 4                 // tile bytes
    add.u32     r18, r6, r16
    shl.b32     r18, r18, 4
    ld.param.u32 r19, [0]
    add.u32     r18, r18, r19               // global address of the tile
    shl.b32     r19, r8, 2                  // this thread's first word (bytes)
    setp.ge.u32 p2, r19, r17
@p2 bra STAGED
STAGE:
    add.u32     r20, r18, r19
    ld.global.u32 r20, [r20]
    st.shared.u32 [r19], r20
    add.u32     r19, r19, r25
    setp.lt.u32 p2, r19, r17
@p2 bra STAGE
STAGED:
    bar.sync
@!p1 bra COMPUTED
    mov.u32     r19, 0                      // byte offset of the atom in the tile
ATOM:
    ld.shared.f32 r20, [r19]                // x
    ld.shared.f32 r21, [r19+4]              // y
    ld.shared.f32 r22, [r19+8]              // z
    ld.shared.f32 r23, [r19+12]             // q
    sub.f32     r21, r21, r10               // dy
    mul.f32     r21, r21, r21
    mad.f32     r21, r22, r22, r21          // dy*dy + z*z, shared by the 4 points
    sub.f32     r22, r20, r11
    mad.f32     r22, r22, r22, r21          // r^2 to point 0
    setp.lt.f32 p2, r22, r15
@!p2 bra SKIP0
    mul.f32     r24, r22, r9
    sub.f32     r24, 1.0, r24               // s
    rsqrt.f32   r22, r22
    mul.f32     r22, r23, r22
    mul.f32     r22, r22, r24
    mad.f32     r0, r22, r24, r0
SKIP0:
    sub.f32     r22, r20, r12
    mad.f32     r22, r22, r22, r21          // point 1
    setp.lt.f32 p2, r22, r15
@!p2 bra SKIP1
    mul.f32     r24, r22, r9
    sub.f32     r24, 1.0, r24
    rsqrt.f32   r22, r22
    mul.f32     r22, r23, r22
    mul.f32     r22, r22, r24
    mad.f32     r1, r22, r24, r1
SKIP1:
    sub.f32     r22, r20, r13
    mad.f32     r22, r22, r22, r21          // point 2
    setp.lt.f32 p2, r22, r15
@!p2 bra SKIP2
    mul.f32     r24, r22, r9
    sub.f32     r24, 1.0, r24
    rsqrt.f32   r22, r22
    mul.f32     r22, r23, r22
    mul.f32     r22, r22, r24
    mad.f32     r2, r22, r24, r2
SKIP2:
    sub.f32     r22, r20, r14
    mad.f32     r22, r22, r22, r21          // point 3
    setp.lt.f32 p2, r22, r15
@!p2 bra SKIP3
    mul.f32     r24, r22, r9
    sub.f32     r24, 1.0, r24
    rsqrt.f32   r22, r22
    mul.f32     r22, r23, r22
    mul.f32     r22, r22, r24
    mad.f32     r3, r22, r24, r3
SKIP3:
    add.u32     r19, r19, 16
    setp.lt.u32 p2, r19, r17
@p2 bra ATOM
COMPUTED:
    bar.sync                                // the tile may be overwritten now
    add.u32     r16, r16, 768
    setp.lt.u32 p2, r16, r7
@p2 bra TILE

DONE:
    phase 8, 0
    ld.param.u32 r6, [16]                   // size
    setp.lt.u32 p2, r5, r6                  // the row exists
    mad.u32     r5, r5, r6, r4
    shl.b32     r5, r5, 2
    ld.param.u32 r7, [12]
    add.u32     r5, r5, r7                  // &out[iy*size + ix0]
    setp.lt.u32 p3, r4, r6
    and.pred    p3, p3, p2
@p3 st.global.f32 [r5], r0
    add.u32     r4, r4, 1
    setp.lt.u32 p3, r4, r6
    and.pred    p3, p3, p2
@p3 st.global.f32 [r5+4], r1
    add.u32     r4, r4, 1
    setp.lt.u32 p3, r4, r6
    and.pred    p3, p3, p2
@p3 st.global.f32 [r5+8], r2
    add.u32     r4, r4, 1
    setp.lt.u32 p3, r4, r6
    and.pred    p3, p3, p2
@p3 st.global.f32 [r5+12], r3
    exit
