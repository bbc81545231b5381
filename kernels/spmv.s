// spmv: y = A*x for a CSR sparse f32 matrix A (rows x cols) and dense f32 vector x, like
// Parboil's spmv. Scalar CSR: one thread per row loops over its nonzeros, so trip counts differ
// between the lanes of a warp and the x[col] loads are irregular gathers.
//   y[row] = sum over k in rowptr[row]..rowptr[row+1] of val[k]*x[col[k]]
//            (f32, in k order: s = (val*x) + s, starting from s = 0)
// params: rowptr, col, val, x, y (addresses), rows
.kernel spmv_csr
.regs 14
.shared 0
.threads 128
.params 24
    mov.u32     r0, %ctaid.x
    mad.u32     r0, r0, %ntid.x, %tid.x     // row
    ld.param.u32 r1, [20]
    setp.ge.u32 p0, r0, r1
@p0 exit
    shl.b32     r0, r0, 2
    ld.param.u32 r1, [0]
    add.u32     r1, r1, r0
    ld.global.u32 r2, [r1]                  // start
    ld.global.u32 r3, [r1+4]                // end
    mov.u32     r4, 0                       // sum = 0.0 (same bits)
    setp.ge.u32 p0, r2, r3
@p0 bra DONE
    shl.b32     r2, r2, 2                   // k as a byte offset
    shl.b32     r3, r3, 2
    ld.param.u32 r5, [4]                    // col
    ld.param.u32 r6, [8]                    // val
    ld.param.u32 r7, [12]                   // x
LOOP:
    add.u32     r8, r5, r2
    ld.global.u32 r9, [r8]                  // c = col[k]
    add.u32     r8, r6, r2
    ld.global.f32 r10, [r8]                 // v = val[k]
    shl.b32     r9, r9, 2
    add.u32     r9, r7, r9
    ld.global.f32 r11, [r9]                 // x[c]
    mad.f32     r4, r10, r11, r4
    add.u32     r2, r2, 4
    setp.lt.u32 p0, r2, r3
@p0 bra LOOP
DONE:
    ld.param.u32 r1, [16]
    add.u32     r1, r1, r0
    st.global.f32 [r1], r4
    exit
