//! The generated Verilog of a block, compiled by Verilator and stepped from Rust.
//!
//! For a block's Verilog (its packaged module, as `mpgpu verilog` writes it) the harness generates a
//! wrapper module `mpgpu_shim` that instantiates it and brings its registers out as ports
//! (hierarchical references, by the Verilog names [`HdlBlock`](crate::ports::HdlBlock) lists),
//! and a C ABI shim (`api.cpp`: create, set inputs, set the clock, evaluate, read outputs and
//! registers as 64-bit words in port-list order). Verilator compiles both into a shared library
//! that is loaded with `libloading`. Built models are cached under `target/verilator/`, keyed
//! by a SHA-256 of everything that goes into the build (Verilog, wrapper, shim, Verilator's
//! version), so a block is compiled once per configuration; the build runs in a private
//! directory that is renamed into place, so concurrent builders never see a half-built model.

use crate::wire::Port;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type SetFn = unsafe extern "C" fn(*mut c_void, *const u64);
type ClockFn = unsafe extern "C" fn(*mut c_void, i32);
type EvalFn = unsafe extern "C" fn(*mut c_void);
type GetFn = unsafe extern "C" fn(*mut c_void, *mut u64);

/// A compiled and loaded model; instances share it.
pub struct Library {
    _lib: libloading::Library,
    new: NewFn,
    free: FreeFn,
    set_inputs: SetFn,
    set_clock: ClockFn,
    eval: EvalFn,
    get_outputs: GetFn,
    get_registers: GetFn,
    pub inputs: usize,
    pub outputs: usize,
    pub registers: usize,
    /// Where the model was built.
    pub dir: PathBuf,
}

// The function pointers are plain C functions; every instance has its own Verilator context.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

/// One instance of a compiled model.
pub struct Model {
    lib: Arc<Library>,
    handle: *mut c_void,
}

impl Model {
    pub fn new(lib: Arc<Library>) -> Model {
        let handle = unsafe { (lib.new)() };
        assert!(!handle.is_null(), "the Verilated model could not be created");
        Model { lib, handle }
    }
    pub fn set_inputs(&mut self, v: &[u64]) {
        assert_eq!(v.len(), self.lib.inputs);
        unsafe { (self.lib.set_inputs)(self.handle, v.as_ptr()) }
    }
    pub fn set_clock(&mut self, high: bool) {
        unsafe { (self.lib.set_clock)(self.handle, high as i32) }
    }
    pub fn eval(&mut self) {
        unsafe { (self.lib.eval)(self.handle) }
    }
    pub fn outputs(&self, v: &mut [u64]) {
        assert_eq!(v.len(), self.lib.outputs);
        unsafe { (self.lib.get_outputs)(self.handle, v.as_mut_ptr()) }
    }
    pub fn registers(&self, v: &mut [u64]) {
        assert_eq!(v.len(), self.lib.registers);
        unsafe { (self.lib.get_registers)(self.handle, v.as_mut_ptr()) }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        unsafe { (self.lib.free)(self.handle) }
    }
}

/// The project's `target/` directory: `CARGO_TARGET_DIR`, else the `target` folder the running
/// executable sits in (cargo's binaries and test binaries), else `./target`.
pub fn target_dir() -> PathBuf {
    if let Ok(d) = std::env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(d);
    }
    if let Ok(exe) = std::env::current_exe() {
        for a in exe.ancestors() {
            if a.file_name().is_some_and(|n| n == "target") {
                return a.to_path_buf();
            }
        }
    }
    PathBuf::from("target")
}

fn check_ports(ports: &[Port], what: &str) -> Result<(), String> {
    for p in ports {
        if p.width == 0 || p.width > 64 {
            return Err(format!("{what} `{}` is {} bits wide; the Verilator shim moves 1..=64", p.name, p.width));
        }
    }
    Ok(())
}

/// A port's name in the wrapper and the C++ API: `$` (rust-hdl's array entries, `reg_set$3`)
/// becomes `_d_`, which C++ can name (Verilator would mangle `$`).
fn shim_name(n: &str) -> String {
    n.replace('$', "_d_")
}

/// The wrapper module around the block's module `module`: the block's ports (its reset, if it
/// has one, held low), and its registers as outputs `reg_<k>`.
pub fn shim_verilog(module: &str, reset: bool, inputs: &[Port], outputs: &[Port], registers: &[Port]) -> String {
    let decl = |dir: &str, p: &Port, name: &str| if p.width == 1 { format!("    {dir} wire {name}") } else { format!("    {dir} wire [{}:0] {name}", p.width - 1) };
    let mut ports = vec![decl("input", &Port::new("clock", 1), "clock")];
    ports.extend(inputs.iter().map(|p| decl("input", p, &shim_name(&p.name))));
    ports.extend(outputs.iter().map(|p| decl("output", p, &shim_name(&p.name))));
    ports.extend(registers.iter().enumerate().map(|(k, p)| decl("output", p, &format!("reg_{k}"))));
    let mut s = String::from("// Generated by mpgpu: the block with its registers brought out for co-simulation.\nmodule mpgpu_shim(\n");
    s += &ports.join(",\n");
    s += &format!("\n);\n    {module} u(\n        .clock(clock)");
    if reset {
        s += &format!(",\n        .{}(1'b0)", crate::ip::RESET);
    }
    for p in inputs.iter().chain(outputs) {
        s += &format!(",\n        .{}({})", p.name, shim_name(&p.name));
    }
    s += "\n    );\n";
    for (k, p) in registers.iter().enumerate() {
        s += &format!("    assign reg_{k} = u.{};\n", p.name);
    }
    s += "endmodule\n";
    s
}

fn shim_cpp(inputs: &[Port], outputs: &[Port], registers: &[Port]) -> String {
    let mut s = String::from(
        "// Generated by mpgpu: a C ABI over the Verilated block.\n\
         #include \"Vmpgpu_shim.h\"\n#include \"verilated.h\"\n#include <cstdint>\n\
         struct M { VerilatedContext ctx; Vmpgpu_shim *top; M() { top = new Vmpgpu_shim(&ctx); } ~M() { top->final(); delete top; } };\n\
         extern \"C\" {\n\
         void* mp_new() { return new M(); }\n\
         void mp_free(void* p) { delete (M*)p; }\n\
         void mp_set_clock(void* p, int c) { ((M*)p)->top->clock = c; }\n\
         void mp_eval(void* p) { ((M*)p)->top->eval(); }\n",
    );
    s += "void mp_set_inputs(void* p, const uint64_t* v) {\n    Vmpgpu_shim* t = ((M*)p)->top;\n";
    for (k, p) in inputs.iter().enumerate() {
        s += &format!("    t->{} = v[{k}];\n", shim_name(&p.name));
    }
    s += "}\nvoid mp_get_outputs(void* p, uint64_t* v) {\n    Vmpgpu_shim* t = ((M*)p)->top;\n";
    for (k, p) in outputs.iter().enumerate() {
        s += &format!("    v[{k}] = t->{};\n", shim_name(&p.name));
    }
    s += "}\nvoid mp_get_registers(void* p, uint64_t* v) {\n    Vmpgpu_shim* t = ((M*)p)->top;\n";
    for k in 0..registers.len() {
        s += &format!("    v[{k}] = t->reg_{k};\n");
    }
    s += "}\n}\n";
    s
}

fn verilator_version() -> Result<String, String> {
    static V: OnceLock<Result<String, String>> = OnceLock::new();
    V.get_or_init(|| {
        let out = Command::new("verilator").arg("--version").output().map_err(|e| format!("cannot run verilator ({e}); scripts/setup-eda installs it"))?;
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    })
    .clone()
}

/// Verilator's flags for the co-simulation models. rust-hdl writes each module as one
/// `always @(*)` block, so Verilator sees false combinational loops (UNOPTFLAT) and iterates
/// them to a fixed point; its 32-bit literals give WIDTH warnings. The lint is done by
/// `mpgpu-rtl`'s checks (`verilator --lint-only -Wall`); here warnings are only noise.
const FLAGS: &[&str] = &["--cc", "--exe", "-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert", "-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wno-UNOPTFLAT"];

/// The C++ compiler's flags for the models (a shared library, loaded by `libloading`).
const CFLAGS: &str = "-fPIC -O2";

fn cache() -> &'static Mutex<HashMap<String, Arc<Library>>> {
    static C: OnceLock<Mutex<HashMap<String, Arc<Library>>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// The compiled model of `verilog` (module `module` with these ports and registers, and a
/// reset input if [`crate::ip::top_has_reset`]), built on first use and cached under
/// `target/verilator/<name>-<hash>/`.
pub fn model(name: &str, module: &str, verilog: &str, inputs: &[Port], outputs: &[Port], registers: &[Port]) -> Result<Arc<Library>, String> {
    check_ports(inputs, "input")?;
    check_ports(outputs, "output")?;
    check_ports(registers, "register")?;
    let shim = shim_verilog(module, crate::ip::top_has_reset(verilog), inputs, outputs, registers);
    let cpp = shim_cpp(inputs, outputs, registers);
    let version = verilator_version()?;
    let key = format!("{name}-{}", short_hash(&[verilog, &shim, &cpp, &version, &FLAGS.join(" "), CFLAGS]));
    if let Some(l) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(l.clone());
    }
    // One builder per model: in this process the model's own lock (threads wanting other
    // models go on building them), across processes a lock file beside it (so that two test
    // binaries run side by side build it once; the rename below keeps a reader from a
    // half-built model either way).
    let one = {
        let mut b = builders().lock().unwrap_or_else(|e| e.into_inner());
        b.entry(key.clone()).or_default().clone()
    };
    let _one = one.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(l) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(l.clone());
    }
    let dir = target_dir().join("verilator").join(&key);
    let so = dir.join("libmpgpu_shim.so");
    if !so.exists() {
        let _file = lock_file(&dir)?;
        if !so.exists() {
            build(&dir, verilog, &shim, &cpp)?;
        }
    }
    let lib = Arc::new(load(&so, dir.clone(), inputs.len(), outputs.len(), registers.len())?);
    cache().lock().unwrap_or_else(|e| e.into_inner()).insert(key, lib.clone());
    Ok(lib)
}

/// Each model's builder lock in this process, by cache key.
fn builders() -> &'static Mutex<HashMap<String, Arc<Mutex<()>>>> {
    static B: OnceLock<Mutex<HashMap<String, Arc<Mutex<()>>>>> = OnceLock::new();
    B.get_or_init(Default::default)
}

/// An exclusive lock on `<dir>.lock`, held until the file is dropped: the builders of one
/// model in several processes take turns.
fn lock_file(dir: &Path) -> Result<std::fs::File, String> {
    let parent = dir.parent().expect("a model directory has a parent");
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let path = parent.join(format!("{}.lock", dir.file_name().unwrap().to_string_lossy()));
    let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    f.lock().map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    Ok(f)
}

fn build(dir: &Path, verilog: &str, shim: &str, cpp: &str) -> Result<(), String> {
    let parent = dir.parent().expect("a model directory has a parent");
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let tmp = parent.join(format!(".{}.{}", dir.file_name().unwrap().to_string_lossy(), std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let w = |f: &str, t: &str| std::fs::write(tmp.join(f), t).map_err(|e| format!("cannot write {f}: {e}"));
    w("block.v", verilog)?;
    w("shim.v", shim)?;
    w("api.cpp", cpp)?;
    let out = verilate(&tmp, &["shim.v", "block.v", "api.cpp"], Some(&runtime()?))?;
    let log = [out.stdout, out.stderr].concat();
    let _ = std::fs::write(tmp.join("build.log"), &log);
    if !out.status.success() || !tmp.join("libmpgpu_shim.so").exists() {
        let text = String::from_utf8_lossy(&log);
        let tail: Vec<&str> = text.lines().rev().take(30).collect();
        return Err(format!("Verilator build failed in {} (log: build.log):\n{}", tmp.display(), tail.into_iter().rev().collect::<Vec<_>>().join("\n")));
    }
    let _ = std::fs::remove_dir_all(tmp.join("obj"));
    match std::fs::rename(&tmp, dir) {
        Ok(()) => Ok(()),
        // Another process finished the same model first: use it.
        Err(_) if dir.join("libmpgpu_shim.so").exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
            Ok(())
        }
        Err(e) => Err(format!("cannot move the model into {}: {e}", dir.display())),
    }
}

/// A cache key: the first 8 bytes, in hex, of the SHA-256 of `parts` (each ended by a zero byte,
/// so that no two lists of parts give the same text).
pub fn short_hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Runs Verilator on `files` in `dir` with the models' flags (C++ into `dir/obj`) and make on
/// its output (the shared library `dir/libmpgpu_shim.so`); with `runtime`, Verilator's run-time
/// library is copied from there after Verilator has written its makefile, so that make finds it
/// up to date and does not compile it again.
fn verilate(dir: &Path, files: &[&str], runtime: Option<&Path>) -> Result<std::process::Output, String> {
    let run = |c: &mut Command, what: &str| c.current_dir(dir).output().map_err(|e| format!("cannot run {what} ({e}); scripts/setup-eda installs it"));
    let mut out = run(
        Command::new("verilator")
            .args(FLAGS)
            .args(["--top-module", "mpgpu_shim", "-Mdir", "obj", "-CFLAGS", CFLAGS, "-LDFLAGS", "-shared", "-o", "../libmpgpu_shim.so"])
            .args(files),
        "verilator",
    )?;
    if !out.status.success() {
        return Ok(out);
    }
    if let Some(rt) = runtime {
        for f in RUNTIME_FILES {
            std::fs::copy(rt.join(f), dir.join("obj").join(f)).map_err(|e| format!("cannot copy {f} from {}: {e}", rt.display()))?;
        }
    }
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get()).to_string();
    let make = run(Command::new("make").args(["-C", "obj", "-f", "Vmpgpu_shim.mk", "-j", &jobs]), "make")?;
    out.stdout.extend(make.stdout);
    out.stderr.extend(make.stderr);
    out.status = make.status;
    Ok(out)
}

/// The object files of Verilator's run-time library, and make's dependency files for them.
const RUNTIME_FILES: [&str; 4] = ["verilated.o", "verilated.d", "verilated_threads.o", "verilated_threads.d"];

/// Verilator's run-time library compiled once with the models' flags, in
/// `target/verilator/runtime-<hash>/` (keyed by Verilator's version and the flags): each model's
/// build copies it instead of compiling it again (8.7 s of CPU a model; `prio`'s model builds in
/// 2 s instead of 9 s on 2 cores).
fn runtime() -> Result<PathBuf, String> {
    static R: OnceLock<Mutex<()>> = OnceLock::new();
    let _one = R.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let key = short_hash(&[verilator_version()?.as_str(), &FLAGS.join(" "), CFLAGS]);
    let dir = target_dir().join("verilator").join(format!("runtime-{key}"));
    if RUNTIME_FILES.iter().all(|f| dir.join(f).exists()) {
        return Ok(dir);
    }
    let _file = lock_file(&dir)?;
    if RUNTIME_FILES.iter().all(|f| dir.join(f).exists()) {
        return Ok(dir);
    }
    let parent = dir.parent().expect("a runtime directory has a parent");
    let tmp = parent.join(format!(".runtime-{key}.{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    std::fs::write(tmp.join("shim.v"), "module mpgpu_shim(input wire clock);\nendmodule\n").map_err(|e| format!("cannot write shim.v: {e}"))?;
    std::fs::write(tmp.join("api.cpp"), "// Verilator's run-time library only.\n").map_err(|e| format!("cannot write api.cpp: {e}"))?;
    let out = verilate(&tmp, &["shim.v", "api.cpp"], None)?;
    if !out.status.success() || !RUNTIME_FILES.iter().all(|f| tmp.join("obj").join(f).exists()) {
        let log = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
        return Err(format!("building Verilator's run-time library failed in {}:\n{log}", tmp.display()));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for f in RUNTIME_FILES {
        // One file at a time, each by a rename: a reader sees a whole file or none.
        std::fs::rename(tmp.join("obj").join(f), dir.join(f)).map_err(|e| format!("cannot move {f} into {}: {e}", dir.display()))?;
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(dir)
}

fn load(so: &Path, dir: PathBuf, inputs: usize, outputs: usize, registers: usize) -> Result<Library, String> {
    unsafe {
        let lib = libloading::Library::new(so).map_err(|e| format!("cannot load {}: {e}", so.display()))?;
        macro_rules! sym {
            ($n:literal, $t:ty) => {
                *lib.get::<$t>($n).map_err(|e| format!("{}: {e}", so.display()))?
            };
        }
        let (new, free) = (sym!(b"mp_new", NewFn), sym!(b"mp_free", FreeFn));
        let (set_inputs, set_clock, eval) = (sym!(b"mp_set_inputs", SetFn), sym!(b"mp_set_clock", ClockFn), sym!(b"mp_eval", EvalFn));
        let (get_outputs, get_registers) = (sym!(b"mp_get_outputs", GetFn), sym!(b"mp_get_registers", GetFn));
        Ok(Library { _lib: lib, new, free, set_inputs, set_clock, eval, get_outputs, get_registers, inputs, outputs, registers, dir })
    }
}
