// sgemm (Parboil-like): C = alpha * A x B + beta * C for square row-major f32 matrices of
// size N x N, N a multiple of 16. One thread per element of C; a 16x16 block computes a 16x16
// tile of C, walking along the shared dimension one 16x16 tile of A and of B at a time. Each
// tile is staged in shared memory (As at bytes 0..1023, Bs at 1024..2047, both row-major),
// with a barrier after the load and another after the compute. The inner product over a tile
// is unrolled in two halves of eight: eight values of the As row and eight of the Bs column are
// loaded into registers, then eight multiply-adds accumulate in k order (mad.f32 is not
// fused: acc = rn(rn(a*b) + acc)).
// params: A, B, C (addresses), N, alpha (f32 bits), beta (f32 bits)
// launch: block [16,16,1], grid [N/16, N/16, 1]
//
// Phases: prologue (index arithmetic, <= 10 live registers, no scratchpad), the tiled main
// loop (25 live registers: 9 carried + 16 operands, 2048 B), the epilogue (6 registers, 0 B).
.kernel sgemm
.regs 32
.shared 2048
.threads 256
.params 24
    phase 10, 0
    mov.u32     r0, %tid.x
    mov.u32     r1, %tid.y
    ld.param.u32 r2, [12]           // N
    mov.u32     r3, %ctaid.y
    mad.u32     r3, r3, 16, r1      // row = ctaid.y*16 + ty
    mov.u32     r4, %ctaid.x
    mad.u32     r4, r4, 16, r0      // col = ctaid.x*16 + tx
    mad.u32     r5, r3, r2, r4
    shl.b32     r5, r5, 2
    ld.param.u32 r6, [8]
    add.u32     r5, r5, r6          // r5 = &C[row][col]
    mad.u32     r6, r3, r2, r0
    shl.b32     r6, r6, 2
    ld.param.u32 r7, [0]
    add.u32     r6, r6, r7          // r6 = &A[row][tx], advances one tile (64 B) per step
    mad.u32     r7, r1, r2, r4
    shl.b32     r7, r7, 2
    ld.param.u32 r8, [4]
    add.u32     r7, r7, r8          // r7 = &B[ty][col], advances 16 rows per step
    shl.b32     r8, r2, 6           // r8 = 16 rows * N * 4 bytes
    shl.b32     r9, r1, 6           // r9 = ty*64: row ty of As
    shl.b32     r10, r0, 2          // r10 = tx*4: column tx of Bs (plus 1024)
    add.u32     r11, r9, r10        // r11 = ty*64 + tx*4: this thread's slot in As and Bs
    shr.u32     r12, r2, 4          // r12 = tiles left
    mov.f32     r13, 0.0            // r13 = acc
    phase 25, 2048
TILE:
    ld.global.f32 r14, [r6]
    ld.global.f32 r15, [r7]
    st.shared.f32 [r11], r14        // As[ty][tx] = A[row][t*16+tx]
    st.shared.f32 [r11+1024], r15   // Bs[ty][tx] = B[t*16+ty][col]
    bar.sync
    // k = 0..7
    ld.shared.f32 r14, [r9]       // As[ty][0]
    ld.shared.f32 r15, [r9+4]
    ld.shared.f32 r16, [r9+8]
    ld.shared.f32 r17, [r9+12]
    ld.shared.f32 r18, [r9+16]
    ld.shared.f32 r19, [r9+20]
    ld.shared.f32 r20, [r9+24]
    ld.shared.f32 r21, [r9+28]
    ld.shared.f32 r22, [r10+1024]   // Bs[0][tx]
    ld.shared.f32 r23, [r10+1088]
    ld.shared.f32 r24, [r10+1152]
    ld.shared.f32 r25, [r10+1216]
    ld.shared.f32 r26, [r10+1280]
    ld.shared.f32 r27, [r10+1344]
    ld.shared.f32 r28, [r10+1408]
    ld.shared.f32 r29, [r10+1472]
    mad.f32     r13, r14, r22, r13
    mad.f32     r13, r15, r23, r13
    mad.f32     r13, r16, r24, r13
    mad.f32     r13, r17, r25, r13
    mad.f32     r13, r18, r26, r13
    mad.f32     r13, r19, r27, r13
    mad.f32     r13, r20, r28, r13
    mad.f32     r13, r21, r29, r13
    // k = 8..15
    ld.shared.f32 r14, [r9+32]       // As[ty][8]
    ld.shared.f32 r15, [r9+36]
    ld.shared.f32 r16, [r9+40]
    ld.shared.f32 r17, [r9+44]
    ld.shared.f32 r18, [r9+48]
    ld.shared.f32 r19, [r9+52]
    ld.shared.f32 r20, [r9+56]
    ld.shared.f32 r21, [r9+60]
    ld.shared.f32 r22, [r10+1536]   // Bs[8][tx]
    ld.shared.f32 r23, [r10+1600]
    ld.shared.f32 r24, [r10+1664]
    ld.shared.f32 r25, [r10+1728]
    ld.shared.f32 r26, [r10+1792]
    ld.shared.f32 r27, [r10+1856]
    ld.shared.f32 r28, [r10+1920]
    ld.shared.f32 r29, [r10+1984]
    mad.f32     r13, r14, r22, r13
    mad.f32     r13, r15, r23, r13
    mad.f32     r13, r16, r24, r13
    mad.f32     r13, r17, r25, r13
    mad.f32     r13, r18, r26, r13
    mad.f32     r13, r19, r27, r13
    mad.f32     r13, r20, r28, r13
    mad.f32     r13, r21, r29, r13
    bar.sync
    add.u32     r6, r6, 64
    add.u32     r7, r7, r8
    sub.u32     r12, r12, 1
    setp.ne.u32 p0, r12, 0
@p0 bra TILE
    phase 6, 0
    ld.param.u32 r14, [16]          // alpha
    ld.param.u32 r15, [20]          // beta
    ld.global.f32 r16, [r5]
    mul.f32     r16, r16, r15       // beta * C
    mul.f32     r17, r13, r14       // alpha * acc
    add.f32     r16, r16, r17
    st.global.f32 [r5], r16
    exit
