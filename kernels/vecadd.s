// vecadd: c[i] = a[i] + b[i] for i < n (f32). One element per thread.
// params: a, b, c (addresses), n
.kernel vecadd
.regs 8
.shared 0
.threads 256
.params 16
    mov.u32     r0, %ctaid.x
    mov.u32     r1, %ntid.x
    mad.u32     r0, r0, r1, %tid.x      // i = ctaid.x * ntid.x + tid.x
    ld.param.u32 r1, [12]
    setp.ge.u32 p0, r0, r1
@p0 exit                                // threads past the end leave
    shl.b32     r0, r0, 2               // byte offset
    ld.param.u32 r1, [0]
    add.u32     r1, r1, r0
    ld.global.f32 r2, [r1]
    ld.param.u32 r1, [4]
    add.u32     r1, r1, r0
    ld.global.f32 r3, [r1]
    add.f32     r2, r2, r3
    ld.param.u32 r1, [8]
    add.u32     r1, r1, r0
    st.global.f32 [r1], r2
    exit
