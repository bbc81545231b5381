//! VCD waveforms of a co-simulation, with a GTKWave save file beside them.
//!
//! Time is the GPU's cycle (1 ns per cycle at the 1 ps timescale), so a time in a mismatch
//! report is the time in the waveform; only the cycles the unit is clocked appear (its clock is
//! gated while it is idle), and `gpu.clocked` counts them. Per instance (scope named after
//! it, e.g. `sched` or `sm_3_oplog`):
//! - `in`: the block's input ports, `out`: its output ports, `expected`: the model's value of
//!   each output port under the same name, `mismatch`: 1 where they part;
//! - `state`: the architectural state read back from the registers, one scope per table entry
//!   (`state.smst_3.ksr`), from the unit's `State` type;
//! - on the rust-hdl backend, also the block's whole signal hierarchy (rust-hdl's VCD probe,
//!   scope `top`).
//!
//! The save file (`<name>.gtkw`) opens with the GPU cycle, the inputs, each output beside its
//! expected value, the mismatch marker, and the state tables grouped per entry.

use crate::ports::Port;
use rust_hdl::core::vcd_probe::{write_vcd_change, write_vcd_header, VCDProbe};
use rust_hdl::prelude::Block;
use serde::Serialize;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;

/// Time units (ps) per GPU cycle.
pub const CYCLE: u64 = 1000;

#[derive(Clone, Default)]
struct Buf(Rc<RefCell<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One recorded signal: scope path, name, width, VCD id and last value written.
struct Var {
    scope: Vec<String>,
    name: String,
    width: u32,
    id: String,
    last: Option<u64>,
}

/// The state's fields, flattened: (scope path below `state`, field, width, value).
fn flatten<S: Serialize>(s: &S) -> Vec<(Vec<String>, String, u32, u64)> {
    fn walk(path: &mut Vec<String>, name: &str, v: &serde_json::Value, out: &mut Vec<(Vec<String>, String, u32, u64)>) {
        use serde_json::Value::*;
        match v {
            Object(m) => {
                if !name.is_empty() {
                    path.push(name.to_string());
                }
                for (k, x) in m {
                    walk(path, k, x, out);
                }
                if !name.is_empty() {
                    path.pop();
                }
            }
            Array(a) => {
                for (k, x) in a.iter().enumerate() {
                    walk(path, &format!("{name}_{k}"), x, out);
                }
            }
            Bool(b) => out.push((path.clone(), name.to_string(), 1, *b as u64)),
            Number(n) => out.push((path.clone(), name.to_string(), 32, n.as_i64().map_or(0, |x| x as u32 as u64))),
            // `()` (a unit compared on its outputs alone) and text carry no signal.
            Null | String(_) => {}
        }
    }
    let mut out = Vec::new();
    walk(&mut Vec::new(), "", &serde_json::to_value(s).expect("state serializes"), &mut out);
    out
}

/// Records a waveform of one block instance in co-simulation.
pub struct VcdRecorder {
    buf: Buf,
    probe: Option<VCDProbe<Buf>>,
    vars: Vec<Var>,
    /// Index of the first `expected`, state and the mismatch var.
    n_in: usize,
    n_out: usize,
    n_state: usize,
    instance: String,
    /// Times (ps) of the first and last sample and of the first marked mismatch.
    first_time: Option<u64>,
    last_time: u64,
    first_mark: Option<u64>,
}

/// One cycle's values of an instance.
pub struct Sample<'a, S> {
    /// GPU cycle (the time axis) and the unit's clocked cycle.
    pub time: u64,
    pub clocked: u64,
    pub inputs: &'a [u64],
    pub outputs: &'a [u64],
    pub expected: &'a [u64],
    pub state: &'a S,
    pub mismatch: bool,
}

fn id_code(k: usize) -> String {
    // Ids the rust-hdl probe does not use: it numbers from `!` upwards; these start with `~~`.
    format!("~~{k}")
}

fn scope_name(instance: &str) -> String {
    instance.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect::<String>().trim_matches('_').to_string()
}

impl VcdRecorder {
    /// Starts a waveform for instance `instance` with these ports; `block`, the rust-hdl block
    /// whose whole hierarchy goes in too (rust-hdl backend), and `state`, a value of the
    /// instance's state type (for its layout).
    pub fn new<S: Serialize>(instance: &str, block: Option<&dyn Block>, inputs: &[Port], outputs: &[Port], state: &S) -> VcdRecorder {
        let inst = scope_name(instance);
        let buf = Buf::default();
        let probe = block.map(|b| write_vcd_header(buf.clone(), b));
        let mut vars = vec![
            Var { scope: vec!["gpu".into()], name: "clocked".into(), width: 64, id: String::new(), last: None },
        ];
        let mut push = |scope: Vec<String>, name: &str, width: u32| vars.push(Var { scope, name: name.to_string(), width, id: String::new(), last: None });
        for p in inputs {
            push(vec![inst.clone(), "in".into()], &p.name, p.width);
        }
        for p in outputs {
            push(vec![inst.clone(), "out".into()], &p.name, p.width);
        }
        for p in outputs {
            push(vec![inst.clone(), "expected".into()], &p.name, p.width);
        }
        let st = flatten(state);
        for (path, name, w, _) in &st {
            let mut scope = vec![inst.clone(), "state".into()];
            scope.extend(path.iter().cloned());
            push(scope, name, *w);
        }
        push(vec![inst.clone()], "mismatch", 1);
        for (k, v) in vars.iter_mut().enumerate() {
            v.id = id_code(k);
        }
        // Declarations, grouped by scope in order.
        let mut decl = String::new();
        let mut open: Vec<String> = Vec::new();
        for v in &vars {
            let common = open.iter().zip(&v.scope).take_while(|(a, b)| a == b).count();
            while open.len() > common {
                decl += "$upscope $end\n";
                open.pop();
            }
            for s in &v.scope[common..] {
                let _ = writeln!(decl, "$scope module {s} $end");
                open.push(s.clone());
            }
            let _ = writeln!(decl, "$var wire {} {} {} $end", v.width, v.id, v.name);
        }
        for _ in open {
            decl += "$upscope $end\n";
        }
        {
            let mut b = buf.0.borrow_mut();
            if probe.is_some() {
                let text = String::from_utf8_lossy(&b).into_owned();
                let at = text.find("$enddefinitions").expect("rust-hdl wrote no VCD header");
                *b = format!("{}{decl}{}", &text[..at], &text[at..]).into_bytes();
            } else {
                *b = format!("$timescale 1 ps $end\n{decl}$enddefinitions $end\n").into_bytes();
            }
        }
        let (n_in, n_out, n_state) = (inputs.len(), outputs.len(), st.len());
        VcdRecorder { buf, probe, vars, n_in, n_out, n_state, instance: inst, first_time: None, last_time: 0, first_mark: None }
    }

    /// Records one clocked cycle (after settling its inputs, before its edge); `block`, the
    /// rust-hdl block when there is one.
    pub fn sample<S: Serialize>(&mut self, s: &Sample<S>, block: Option<&dyn Block>) {
        let time = s.time * CYCLE;
        match (self.probe.take(), block) {
            (Some(mut p), Some(b)) => {
                p.timestamp(time).expect("VCD write");
                self.probe = Some(write_vcd_change(p, b));
            }
            (p, _) => {
                self.probe = p;
                let _ = writeln!(self.buf, "#{time}");
            }
        }
        self.first_time.get_or_insert(time);
        self.last_time = time;
        if s.mismatch {
            self.first_mark.get_or_insert(time);
        }
        let st = flatten(s.state);
        let values = std::iter::once(s.clocked)
            .chain(s.inputs.iter().copied())
            .chain(s.outputs.iter().copied())
            .chain(s.expected.iter().copied())
            .chain(st.iter().map(|x| x.3))
            .chain([s.mismatch as u64]);
        let mut text = String::new();
        for (v, x) in self.vars.iter_mut().zip(values) {
            if v.last == Some(x) {
                continue;
            }
            v.last = Some(x);
            if v.width == 1 {
                let _ = writeln!(text, "{}{}", x & 1, v.id);
            } else {
                let _ = writeln!(text, "b{x:b} {}", v.id);
            }
        }
        self.buf.0.borrow_mut().extend_from_slice(text.as_bytes());
    }

    /// The waveform so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.buf.0.borrow().clone()
    }

    /// Writes the waveform to `path` and the GTKWave save file beside it (`.gtkw`), creating
    /// the directory.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(path, self.bytes())?;
        std::fs::write(path.with_extension("gtkw"), self.gtkw(path))
    }

    /// The GTKWave save file for the waveform at `vcd`.
    pub fn gtkw(&self, vcd: &Path) -> String {
        let sig = |v: &Var| {
            let name = format!("{}.{}", v.scope.join("."), v.name);
            if v.width == 1 {
                name
            } else {
                format!("{name}[{}:0]", v.width - 1)
            }
        };
        let fmt = |v: &Var| if v.width == 1 { "@28" } else { "@24" };
        let mut g = String::new();
        let abs = std::fs::canonicalize(vcd).unwrap_or_else(|_| vcd.to_path_buf());
        let _ = writeln!(g, "[*] mpgpu co-simulation waveform: {}", self.instance);
        let _ = writeln!(g, "[dumpfile] \"{}\"", abs.display());
        let _ = writeln!(g, "[savefile] \"{}\"", abs.with_extension("gtkw").display());
        // Zoom to show the whole recording across the wave pane, the marker at the first
        // mismatch. GTKWave's zoom z shows about 2^-z / 200 time units per pixel (measured with
        // GTKWave 3.3.118, Debian's: z = -15.5 spreads 256 ns at 1 ps over its 1,100 pixels).
        let from = self.first_time.unwrap_or(0);
        let span = (self.last_time.saturating_sub(from)).max(CYCLE) as f64;
        let _ = writeln!(g, "[timestart] {from}\n[size] 1600 1000\n[pos] -1 -1");
        let _ = writeln!(g, "*{:.6} {} -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1", -(span * 200.0 / 1100.0).log2(), self.first_mark.map_or(-1, |t| t as i64));
        let _ = writeln!(g, "[treeopen] {}.", self.instance);
        let _ = writeln!(g, "[sst_width] 260\n[signals_width] 300\n[sst_expanded] 1\n[sst_vpaned_height] 300");
        let group = |g: &mut String, name: &str, closed: bool, items: &mut dyn Iterator<Item = &Var>| {
            let _ = writeln!(g, "{}\n-{name}", if closed { "@c00200" } else { "@800200" });
            for v in items {
                let _ = writeln!(g, "{}\n{}", fmt(v), sig(v));
            }
            let _ = writeln!(g, "@1000200\n-{name}");
        };
        let v = &self.vars;
        let (a, b) = (1, 1 + self.n_in);
        let (c, d) = (b + self.n_out, b + 2 * self.n_out);
        let mismatch = &v[v.len() - 1];
        let _ = writeln!(g, "@24\n{}\n{}\n{}", sig(&v[0]), fmt(mismatch), sig(mismatch));
        group(&mut g, "inputs", false, &mut v[a..b].iter());
        // Each output beside its expected value.
        let _ = writeln!(g, "@800200\n-outputs (rtl, expected)");
        for k in 0..self.n_out {
            let (r, e) = (&v[b + k], &v[c + k]);
            let _ = writeln!(g, "{}\n+{{{} (rtl)}} {}", fmt(r), r.name, sig(r));
            let _ = writeln!(g, "{}\n+{{{} (expected)}} {}", fmt(e), e.name, sig(e));
        }
        let _ = writeln!(g, "@1000200\n-outputs (rtl, expected)");
        // State, one group per table entry (scope below `state`).
        let st = &v[d..d + self.n_state];
        let mut k = 0;
        while k < st.len() {
            let scope = &st[k].scope;
            let n = st[k..].iter().take_while(|x| &x.scope == scope).count();
            let name = if scope.len() > 2 { scope[2..].join(".") } else { "state".to_string() };
            group(&mut g, &name, scope.len() > 2, &mut st[k..k + n].iter());
            k += n;
        }
        g
    }
}
