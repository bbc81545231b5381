//! VCD waveforms of a co-simulation: the RTL block's ports and internal registers (rust-hdl's
//! VCD probe), the reference model's expected outputs side by side (scope `expected`), and a
//! `mismatch` marker, in one file that GTKWave or Surfer opens.
//!
//! rust-hdl's probe owns its VCD writer, so the recorder lets it write into a shared buffer,
//! adds the `expected` scope to the header before `$enddefinitions`, and appends the model's
//! value changes after each of the probe's time steps. Time advances 1000 units (1 ns at the
//! probe's 1 ps timescale) per cycle.

use rust_hdl::core::vcd_probe::{write_vcd_change, write_vcd_header, VCDProbe};
use rust_hdl::prelude::Block;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;

/// Time units per clock cycle.
pub const CYCLE: u64 = 1000;

#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One model signal: name, width in bits, value.
pub type Field = (&'static str, u32, u64);

pub struct VcdRecorder {
    buf: Shared,
    probe: Option<VCDProbe<Shared>>,
    /// Model field name -> (id code, width).
    ids: Vec<(&'static str, String, u32)>,
    last: HashMap<String, u64>,
}

impl VcdRecorder {
    /// Starts a waveform for `uut`, with the model fields `fields` (their values are ignored).
    pub fn new(uut: &dyn Block, fields: &[Field]) -> VcdRecorder {
        let buf = Shared::default();
        let probe = write_vcd_header(buf.clone(), uut);
        // Id codes the probe does not use: it numbers from `!` upwards; these start with `~~`.
        let mut ids: Vec<(&'static str, String, u32)> = fields.iter().enumerate().map(|(k, f)| (f.0, format!("~~{k}"), f.1)).collect();
        ids.push(("mismatch", "~~m".to_string(), 1));
        let mut scope = String::from("$scope module expected $end\n");
        for (name, id, w) in &ids {
            scope += &format!("$var wire {w} {id} {name} $end\n");
        }
        scope += "$upscope $end\n";
        {
            let mut b = buf.0.borrow_mut();
            let text = String::from_utf8_lossy(&b).into_owned();
            let at = text.find("$enddefinitions").expect("rust-hdl wrote no VCD header");
            let mut out = text[..at].to_string();
            out += &scope;
            out += &text[at..];
            *b = out.into_bytes();
        }
        VcdRecorder { buf, probe: Some(probe), ids, last: HashMap::new() }
    }

    /// Records cycle `cycle`: the block's current signal values, the model's fields and whether
    /// the two disagreed.
    pub fn sample(&mut self, cycle: u64, uut: &dyn Block, fields: &[Field], mismatch: bool) {
        let mut probe = self.probe.take().unwrap();
        probe.timestamp(cycle * CYCLE).expect("VCD write");
        let probe = write_vcd_change(probe, uut);
        self.probe = Some(probe);
        let mut text = String::new();
        let values = fields.iter().map(|f| f.2).chain([mismatch as u64]);
        for ((_, id, w), v) in self.ids.iter().zip(values) {
            if self.last.get(id) == Some(&v) {
                continue;
            }
            self.last.insert(id.clone(), v);
            if *w == 1 {
                text += &format!("{}{id}\n", v & 1);
            } else {
                text += &format!("b{v:b} {id}\n");
            }
        }
        self.buf.0.borrow_mut().extend_from_slice(text.as_bytes());
    }

    /// The waveform so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.buf.0.borrow().clone()
    }

    /// Writes the waveform to `path` (creating its directory).
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(path, self.bytes())
    }
}
