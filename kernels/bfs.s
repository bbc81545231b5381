// bfs: one level of a level-synchronous breadth-first search over a CSR graph, like the
// Parboil/Rodinia bfs. One thread per node v: if level[v] == cur, every neighbour u with
// level[u] == 0xFFFFFFFF (unvisited) gets level cur+1, and the thread sets flags[cur] = 1 so the
// host launches the next level. Concurrent writers of one level[u] all write the same value.
// params: rowptr, adj, level, flags (addresses), cur, n
.kernel bfs_level
.regs 12
.shared 0
.threads 256
.params 24
    mov.u32     r0, %ctaid.x
    mad.u32     r0, r0, %ntid.x, %tid.x     // v
    ld.param.u32 r1, [20]
    setp.ge.u32 p0, r0, r1
@p0 exit
    shl.b32     r0, r0, 2
    ld.param.u32 r1, [8]                    // level
    add.u32     r2, r1, r0
    ld.global.u32 r2, [r2]                  // level[v]
    ld.param.u32 r3, [16]                   // cur
    setp.ne.u32 p0, r2, r3
@p0 exit                                    // not in the frontier
    ld.param.u32 r2, [0]
    add.u32     r2, r2, r0
    ld.global.u32 r4, [r2]                  // first edge
    ld.global.u32 r5, [r2+4]                // end of edges
    setp.ge.u32 p0, r4, r5
@p0 exit                                    // no out-edges
    shl.b32     r4, r4, 2
    shl.b32     r5, r5, 2
    ld.param.u32 r6, [4]                    // adj
    add.u32     r7, r3, 1                   // cur + 1
    mov.u32     r8, 0                       // found an unvisited neighbour
EDGE:
    add.u32     r9, r6, r4
    ld.global.u32 r9, [r9]                  // u
    shl.b32     r9, r9, 2
    add.u32     r9, r1, r9
    ld.global.u32 r10, [r9]                 // level[u]
    setp.ne.u32 p0, r10, 0xFFFFFFFF
@p0 bra NEXT                                // already visited
    st.global.u32 [r9], r7
    mov.u32     r8, 1
NEXT:
    add.u32     r4, r4, 4
    setp.lt.u32 p0, r4, r5
@p0 bra EDGE
    setp.eq.u32 p0, r8, 0
@p0 exit
    ld.param.u32 r9, [12]                   // flags
    shl.b32     r3, r3, 2
    add.u32     r9, r9, r3
    st.global.u32 [r9], r8                  // flags[cur] = 1
    exit
