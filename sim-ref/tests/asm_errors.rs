//! Malformed assembly: every case names the file, line and column and says what was expected.

use mpgpu_ref::{assemble, assemble_one, disassemble};

const HEAD: &str = ".kernel k\n.regs 8\n.threads 64\n.params 8\n";

/// Assembles `body` after a valid header (lines 1-4) and returns the first error.
fn first_error(text: &str) -> (u32, u32, String) {
    let errs = assemble("bad.s", text).expect_err("expected an assembly error");
    let e = &errs.0[0];
    assert_eq!(e.file, "bad.s");
    assert!(errs.to_string().starts_with(&format!("bad.s:{}:{}: error: ", e.line, e.col)), "{errs}");
    (e.line, e.col, e.msg.clone())
}

fn check(text: &str, line: u32, col: u32, msg: &str) {
    let (l, c, m) = first_error(text);
    assert!(m.contains(msg), "message `{m}` lacks `{msg}`\n--- source ---\n{text}");
    assert_eq!((l, c), (line, col), "location of `{m}`");
}

fn body(b: &str) -> String {
    format!("{HEAD}{b}")
}

#[test]
fn unknown_instruction() {
    check(&body("    frob.u32 r1, r2, r3\n    exit\n"), 5, 5, "unknown instruction `frob.u32`");
}

#[test]
fn missing_type_suffix() {
    check(&body("    add r1, r2, r3\n    exit\n"), 5, 5, "`add` needs a type suffix (.u32, .s32, .f32 or .b32)");
}

#[test]
fn type_not_allowed_for_operation() {
    check(&body("    mul.hi.f32 r1, r2, r3\n    exit\n"), 5, 5, "`mul.hi` does not take type .f32");
    check(&body("    sin.u32 r1, r2\n    exit\n"), 5, 5, "`sin` does not take type .u32");
}

#[test]
fn wrong_operand_count() {
    check(&body("    add.u32 r1, r2\n    exit\n"), 5, 19, "`add.u32` takes 3 operands (d, a, b), found 2");
    check(&body("    exit r1\n"), 5, 10, "`exit` takes 0 operands");
}

#[test]
fn register_outside_declaration() {
    check(&body("    add.u32 r1, r2, r9\n    exit\n"), 5, 21, "register r9 is outside the declared `.regs 8` (r0..r7)");
}

#[test]
fn predicate_out_of_range() {
    check(&body("    setp.eq.u32 p8, r1, r2\n    exit\n"), 5, 17, "predicate p8 does not exist: predicates are p0..p7");
}

#[test]
fn wrong_operand_kind() {
    check(&body("    add.u32 p1, r2, r3\n    exit\n"), 5, 13, "expected a register (rN), found `p1`");
    check(&body("    ld.global.u32 r1, r2\n    exit\n"), 5, 23, "expected an address in brackets ([rN+offset]), found `r2`");
}

#[test]
fn float_literal_in_integer_instruction() {
    check(&body("    add.u32 r1, r2, 1.5\n    exit\n"), 5, 21, "float literal `1.5` in a .u32 instruction: expected an integer");
}

#[test]
fn immediate_too_large() {
    check(&body("    mov.u32 r1, 4294967296\n    exit\n"), 5, 17, "malformed operand `4294967296`");
}

#[test]
fn undefined_and_duplicate_labels() {
    check(&body("    bra NOWHERE\n"), 5, 9, "undefined label `NOWHERE`");
    check(&body("L:\n    nop\nL:\n    exit\n"), 7, 1, "duplicate label `L` (first defined on line 5)");
}

#[test]
fn unknown_special_register() {
    check(&body("    mov.u32 r1, %tid.w\n    exit\n"), 5, 17, "unknown special register `%tid.w`");
}

#[test]
fn unterminated_address() {
    check(&body("    ld.global.u32 r1, [r2+4\n    exit\n"), 5, 28, "expected `]` to close the address");
}

#[test]
fn bad_directives() {
    check(".kernel k\n.regs 300\n.threads 32\n    exit\n", 2, 7, "`.regs` value 300 is out of range: expected 0..=255");
    check(".kernel k\n.regs 8\n.threads 32\n.shared 6\n    exit\n", 4, 9, "`.shared` must be a multiple of 4 bytes, found 6");
    check(".kernel k\n.regz 8\n", 2, 1, "unknown directive `.regz`");
    check(".kernel k\n.threads 32\n    exit\n", 1, 1, "kernel `k` has no `.regs` directive");
    check("    exit\n", 1, 5, "instruction outside a kernel: expected `.kernel NAME` first");
    check("\n// nothing here\n", 1, 1, "no kernel in file");
}

#[test]
fn resource_checks_against_declaration() {
    check(&body("    ld.shared.u32 r1, [64]\n    exit\n"), 5, 23, "shared access at byte 64 is outside the declared `.shared 0`");
    check(&body("    ld.param.u32 r1, [8]\n    exit\n"), 5, 22, "parameter access at byte 8 is outside the declared `.params 8`");
    check(&body("    phase 12, 0\n    exit\n"), 5, 11, "phase needs 12 registers but the kernel declares `.regs 8`");
    check(&body("    phase 4, 1024\n    exit\n"), 5, 11, "phase needs 1024 scratchpad bytes but the kernel declares `.shared 0`");
    check(&body("    st.param.u32 [0], r1\n    exit\n"), 5, 5, "parameter space is read-only");
}

#[test]
fn kernel_must_not_run_off_its_end() {
    check(&body("    add.u32 r1, r1, 1\n"), 5, 1, "can run off its end: the last instruction must be `exit` or an unconditional `bra`");
    check(&body("@p0 exit\n"), 5, 1, "can run off its end");
}

#[test]
fn misaligned_constant_address_and_bad_cvt() {
    check(&body("    ld.global.u32 r1, [6]\n    exit\n"), 5, 23, "constant address 6 is not 4-byte aligned");
    check(&body("    cvt.f32.f32 r1, r2\n    exit\n"), 5, 5, "`cvt.f32.f32` needs a rounding modifier");
    check(&body("    cvt.rmi.s32.f32 r1, r2\n    exit\n"), 5, 5, "rounding `.rmi` does not apply to a conversion from .f32 to .s32");
}

#[test]
fn stray_characters_and_guards() {
    check(&body("    add.u32 r1, r2, r3 }\n    exit\n"), 5, 24, "unexpected character `}`");
    check(&body("@r1 bra L\nL:\n    exit\n"), 5, 2, "expected a guard predicate (pN) after `@`, found `r1`");
}

#[test]
fn every_error_in_a_file_is_reported_in_order() {
    let text = body("    frob r1\n    add.u32 r1, r2, r99\n    bra MISSING\n");
    let errs = assemble("many.s", &text).unwrap_err();
    let lines: Vec<u32> = errs.0.iter().map(|e| e.line).collect();
    assert_eq!(lines, vec![5, 6, 7], "{errs}");
}

#[test]
fn duplicate_kernel_names() {
    let text = format!("{HEAD}    exit\n{HEAD}    exit\n");
    check(&text, 6, 1, "duplicate kernel `k` (first defined on line 1)");
}

#[test]
fn a_valid_file_round_trips_through_the_disassembler() {
    let text = body(
        "    mov.u32 r0, %tid.x\n    setp.lt.s32 p1, r0, -3\n@!p1 bra SKIP\n    mad.f32 r1, r2, 0.5, 1e3\n    atom.global.cas.b32 r3, [r4-8], r5, 0x10\nSKIP:\n    cvt.rni.f32.f32 r6, r1\n    phase 8, 0\n    membar.gl\n    bar.sync\n    exit\n",
    );
    let k = assemble_one("ok.s", &text).unwrap();
    let d = disassemble(&k);
    let k2 = assemble_one("ok2.s", &d).unwrap();
    assert!(k2.same_program(&k), "{d}");
    assert_eq!(disassemble(&k2), d, "disassembly is not a fixed point");
    assert!(d.contains("SKIP:") && d.contains("@!p1 bra SKIP"), "{d}");
}
