// sad: Parboil-style sum of absolute differences for block motion estimation.
//
// Frames are size x size pixels (one u32 of 0..255 each, row-major), size a multiple of 16.
// For every 16x16 macroblock (mx, my) of the current frame and every displacement (dx, dy) in
// -8..=8 x -8..=8 (d = (dy+8)*17 + (dx+8), 289 in all):
//   sad[(my*(size/16) + mx)*289 + d] = sum over the 16x16 pixels (x, y) of the macroblock of
//                                      |cur[y][x] - ref[clamp(y+dy)][clamp(x+dx)]|
// with coordinates clamped to the frame (edge pixels repeat).
// A block handles a 2x2 group of macroblocks (32x32 pixels from (32*ctaid.x, 32*ctaid.y)). It
// stages the group's current pixels (32x32, shared bytes 0..4095) and its reference search
// area (48x48 pixels from 8 up and left of the group; rows padded to 64 words so that a row is
// a shift: bytes 4096..16383). Then its 64 threads share the group's 4*289 SADs: thread t does
// j = t, t+64, ... (macroblock j/289, displacement j%289); macroblocks past the frame's edge
// are skipped. A SAD's 16 rows are a counted loop, each row's addresses formed from the row
// number: so every shared address is bounded by the loop's counters (bytes 0..16319), which
// the phase pass's value-range analysis proves (docs/zorua.md, "Phase specifiers").
// params: cur, ref, sad (addresses), size
//
// Phases: staging 10 regs, 16384 B; after the barrier, SADs 20 regs, 16384 B. Each phase uses
// only r0 .. r(regs-1).
.kernel sad
.regs 20
.shared 16384
.threads 64
.params 16
    phase 10, 16384
    mov.u32     r0, %tid.x
    mov.u32     r1, %ctaid.x
    shl.b32     r1, r1, 5                   // x0: the group's first column
    mov.u32     r2, %ctaid.y
    shl.b32     r2, r2, 5                   // y0
    ld.param.u32 r3, [12]                   // size
    sub.u32     r4, r3, 1                   // last row/column
    // Current pixels: word w = 32*y + x, 16 per thread.
    mov.u32     r5, r0
CUR:
    shr.u32     r6, r5, 5
    add.u32     r6, r6, r2
    min.u32     r6, r6, r4                  // rows past the frame (partial group): never used
    and.b32     r7, r5, 31
    add.u32     r7, r7, r1
    min.u32     r7, r7, r4
    mad.u32     r6, r6, r3, r7
    shl.b32     r6, r6, 2
    ld.param.u32 r7, [0]
    add.u32     r6, r6, r7
    ld.global.u32 r6, [r6]
    shl.b32     r7, r5, 2
    st.shared.u32 [r7], r6
    add.u32     r5, r5, 64
    setp.lt.u32 p1, r5, 1024
@p1 bra CUR
    // Search area: pixel w = 48*y + x is frame pixel (x0-8+x, y0-8+y), clamped, at word
    // 1024 + 64*y + x. 36 per thread.
    mov.u32     r5, r0
AREA:
    div.u32     r6, r5, 48                  // y
    rem.u32     r7, r5, 48                  // x
    shl.b32     r8, r6, 6
    add.u32     r8, r8, r7
    shl.b32     r8, r8, 2                   // shared byte offset within the area
    add.s32     r6, r6, r2
    sub.s32     r6, r6, 8
    max.s32     r6, r6, 0
    min.s32     r6, r6, r4
    add.s32     r7, r7, r1
    sub.s32     r7, r7, 8
    max.s32     r7, r7, 0
    min.s32     r7, r7, r4
    mad.u32     r6, r6, r3, r7
    shl.b32     r6, r6, 2
    ld.param.u32 r7, [4]
    add.u32     r6, r6, r7
    ld.global.u32 r6, [r6]
    st.shared.u32 [r8+4096], r6
    add.u32     r5, r5, 64
    setp.lt.u32 p1, r5, 2304
@p1 bra AREA
    bar.sync

    phase 20, 16384
    shr.u32     r4, r3, 4                   // macroblocks per row
    mov.u32     r5, r0                      // j
SAD:
    div.u32     r6, r5, 289                 // macroblock in the group
    rem.u32     r7, r5, 289                 // d
    and.b32     r8, r6, 1                   // mbx in the group
    shr.u32     r6, r6, 1                   // mby in the group
    shl.b32     r9, r8, 4
    add.u32     r9, r9, r1                  // the macroblock's first column
    shl.b32     r10, r6, 4
    add.u32     r10, r10, r2                // ... and first row
    setp.ge.u32 p1, r9, r3
    setp.ge.u32 p2, r10, r3
    or.pred     p1, p1, p2
@p1 bra NEXT                                // past the frame's edge
    // Output address: sad + 4*((row/16 * mbw + col/16)*289 + d).
    shr.u32     r11, r10, 4
    shr.u32     r12, r9, 4
    mad.u32     r11, r11, r4, r12
    mad.u32     r11, r11, 289, r7
    shl.b32     r11, r11, 2
    ld.param.u32 r12, [8]
    add.u32     r17, r11, r12
    // Current macroblock at byte 4*(32*16*mby + 16*mbx); reference block at
    // 4096 + 4*(64*(16*mby + dy+8) + 16*mbx + dx+8).
    div.u32     r11, r7, 17                 // dy + 8
    rem.u32     r12, r7, 17                 // dx + 8
    shl.b32     r13, r6, 11
    shl.b32     r14, r8, 6
    add.u32     r13, r13, r14
    shl.b32     r6, r6, 4
    add.u32     r6, r6, r11
    shl.b32     r14, r6, 8
    shl.b32     r8, r8, 4
    add.u32     r8, r8, r12
    shl.b32     r8, r8, 2
    add.u32     r14, r14, r8
    add.u32     r14, r14, 4096
    mov.u32     r15, 0                      // the SAD
    mov.u32     r16, 0                      // the row (16 rows of 128 B of current pixels)
ROW:
    mad.u32     r0, r16, 128, r13           // the row's current pixels (tid is no longer needed)
    mad.u32     r19, r16, 256, r14          // ... and its search-area row (64 words)
    ld.shared.u32 r6, [r0]
    ld.shared.u32 r7, [r0+4]
    ld.shared.u32 r8, [r0+8]
    ld.shared.u32 r9, [r0+12]
    ld.shared.u32 r10, [r19]
    ld.shared.u32 r11, [r19+4]
    ld.shared.u32 r12, [r19+8]
    ld.shared.u32 r18, [r19+12]
    sub.s32     r6, r6, r10
    sub.s32     r7, r7, r11
    sub.s32     r8, r8, r12
    sub.s32     r9, r9, r18
    abs.s32     r6, r6
    abs.s32     r7, r7
    abs.s32     r8, r8
    abs.s32     r9, r9
    add.u32     r15, r15, r6
    add.u32     r15, r15, r7
    add.u32     r15, r15, r8
    add.u32     r15, r15, r9
    ld.shared.u32 r6, [r0+16]
    ld.shared.u32 r7, [r0+20]
    ld.shared.u32 r8, [r0+24]
    ld.shared.u32 r9, [r0+28]
    ld.shared.u32 r10, [r19+16]
    ld.shared.u32 r11, [r19+20]
    ld.shared.u32 r12, [r19+24]
    ld.shared.u32 r18, [r19+28]
    sub.s32     r6, r6, r10
    sub.s32     r7, r7, r11
    sub.s32     r8, r8, r12
    sub.s32     r9, r9, r18
    abs.s32     r6, r6
    abs.s32     r7, r7
    abs.s32     r8, r8
    abs.s32     r9, r9
    add.u32     r15, r15, r6
    add.u32     r15, r15, r7
    add.u32     r15, r15, r8
    add.u32     r15, r15, r9
    ld.shared.u32 r6, [r0+32]
    ld.shared.u32 r7, [r0+36]
    ld.shared.u32 r8, [r0+40]
    ld.shared.u32 r9, [r0+44]
    ld.shared.u32 r10, [r19+32]
    ld.shared.u32 r11, [r19+36]
    ld.shared.u32 r12, [r19+40]
    ld.shared.u32 r18, [r19+44]
    sub.s32     r6, r6, r10
    sub.s32     r7, r7, r11
    sub.s32     r8, r8, r12
    sub.s32     r9, r9, r18
    abs.s32     r6, r6
    abs.s32     r7, r7
    abs.s32     r8, r8
    abs.s32     r9, r9
    add.u32     r15, r15, r6
    add.u32     r15, r15, r7
    add.u32     r15, r15, r8
    add.u32     r15, r15, r9
    ld.shared.u32 r6, [r0+48]
    ld.shared.u32 r7, [r0+52]
    ld.shared.u32 r8, [r0+56]
    ld.shared.u32 r9, [r0+60]
    ld.shared.u32 r10, [r19+48]
    ld.shared.u32 r11, [r19+52]
    ld.shared.u32 r12, [r19+56]
    ld.shared.u32 r18, [r19+60]
    sub.s32     r6, r6, r10
    sub.s32     r7, r7, r11
    sub.s32     r8, r8, r12
    sub.s32     r9, r9, r18
    abs.s32     r6, r6
    abs.s32     r7, r7
    abs.s32     r8, r8
    abs.s32     r9, r9
    add.u32     r15, r15, r6
    add.u32     r15, r15, r7
    add.u32     r15, r15, r8
    add.u32     r15, r15, r9
    add.u32     r16, r16, 1                 // a counted loop: the addresses above are bounded
    setp.lt.u32 p1, r16, 16
@p1 bra ROW
    st.global.u32 [r17], r15
NEXT:
    add.u32     r5, r5, 64
    setp.lt.u32 p1, r5, 1156                // 4 macroblocks x 289 displacements
@p1 bra SAD
    exit
