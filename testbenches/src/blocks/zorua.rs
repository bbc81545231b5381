//! Zorua's coordinator and mapping tables (`Zorua`, one per SM): its ports and unit interface
//! (`mpgpu_spec::units::zorua`).

use crate::ports::{Port, Ports, Regs};
use rust_hdl::core::atom::Atom;
use crate::entry::{v, variant, Block, Scope};
use crate::runs::Run;
use crate::entry::{identical_sms, GpuKind, Host};
use crate::options::CosimOptions;
use mpgpu_ref::config::GpuConfig;
use mpgpu_ref::units::framework::{Mechanism, Policy};
use mpgpu_ref::units::zorua::{Coord, Geometry};
use mpgpu_rtl::{Zorua, ZoruaFaults, ZoruaParams};
use mpgpu_spec::units::zorua;

/// `Zorua`'s scalar registers read back as state, in `get_registers` order: calls `$m!` with
/// their names.
macro_rules! zorua_scalars {
    ($m:ident) => {
        $m!(tq, sq, rq, sched, bar, live, blocks, reg_cnt, reg_swap, smem_cnt, smem_swap, smem_used, slot_used, th_q, th_set, started, reg_resv, bgive)
    };
}

/// `Zorua`'s ports by hand rather than through `hdl_block!`: its rows are output arrays
/// (`reg_set$k`, `smem_set$k`). It is flat (`mpgpu_rtl::flat_logic!`).
impl crate::ports::HdlBlock for Zorua {
    fn flat(&self) -> bool {
        true
    }
    fn quiet(&self) -> bool {
        !self.read_changed()
    }
    fn input_ports(&self) -> Vec<Port> {
        let p = |n: &str, s: &dyn Atom| Port::new(n, s.bits());
        vec![
            p("ev", &self.ev),
            p("warp", &self.warp),
            p("block", &self.block),
            p("warps", &self.warps),
            p("regs", &self.regs),
            p("smem", &self.smem),
            p("idle", &self.idle),
            p("mem", &self.mem),
            p("peak", &self.peak),
            p("nwarps_in", &self.nwarps_in),
        ]
    }
    fn output_ports(&self) -> Vec<Port> {
        let p = |n: &str, s: &dyn Atom| Port::new(n, s.bits());
        let mut v = vec![
            p("ready", &self.ready),
            p("grant", &self.grant),
            p("grant_warp", &self.grant_warp),
            p("grant_slot", &self.grant_slot),
            p("reg_phys", &self.reg_phys),
            p("smem_phys", &self.smem_phys),
            p("o_thresh", &self.o_thresh),
            p("slot_room", &self.slot_room),
        ];
        v.extend(self.reg_set.iter().enumerate().map(|(k, s)| p(&format!("reg_set${k}"), s)));
        v.extend(self.smem_set.iter().enumerate().map(|(k, s)| p(&format!("smem_set${k}"), s)));
        v.push(p("released", &self.released));
        v.push(p("waiting", &self.waiting));
        v
    }
    fn register_ports(&self) -> Vec<Port> {
        let q = |n: String, s: &dyn Atom| Port::new(&format!("{n}$q"), s.bits());
        let one = |n: &str, s: &dyn Atom| q(n.to_string(), s);
        macro_rules! ports {
            ($($r:ident),*) => {
                vec![$(one(stringify!($r), &self.$r.q)),*]
            };
        }
        let mut v = zorua_scalars!(ports);
        // (the arrays in `get_registers` order; `slotv` is one slice, a scalar)
        fn arr<T: rust_hdl::prelude::Synth>(v: &mut Vec<Port>, n: &str, a: &[mpgpu_rtl::reg::Reg<T>]) {
            v.extend(a.iter().enumerate().map(|(k, r)| Port::new(&format!("{n}${k}$q"), r.q.bits())));
        }
        arr(&mut v, "wblock", &self.wblock);
        arr(&mut v, "rneed", &self.rneed);
        arr(&mut v, "rheld", &self.rheld);
        v.push(one("slotv", &self.slotv.q));
        arr(&mut v, "slot", &self.slot);
        arr(&mut v, "sneed", &self.sneed);
        arr(&mut v, "sheld", &self.sheld);
        arr(&mut v, "nwarps", &self.nwarps);
        arr(&mut v, "narr", &self.narr);
        arr(&mut v, "bpeak", &self.bpeak);
        arr(&mut v, "reg_used", &self.reg_used);
        v
    }
    fn set_inputs(&mut self, v: &[u64]) {
        use crate::ports::Wire;
        use rust_hdl::core::block::Block;
        self.ev.next = Wire::from_word(v[0]);
        self.ev.update_all();
        self.warp.next = Wire::from_word(v[1]);
        self.warp.update_all();
        self.block.next = Wire::from_word(v[2]);
        self.block.update_all();
        self.warps.next = Wire::from_word(v[3]);
        self.warps.update_all();
        self.regs.next = Wire::from_word(v[4]);
        self.regs.update_all();
        self.smem.next = Wire::from_word(v[5]);
        self.smem.update_all();
        self.idle.next = Wire::from_word(v[6]);
        self.idle.update_all();
        self.mem.next = Wire::from_word(v[7]);
        self.mem.update_all();
        self.peak.next = Wire::from_word(v[8]);
        self.peak.update_all();
        self.nwarps_in.next = Wire::from_word(v[9]);
        self.nwarps_in.update_all();
    }
    fn set_clock(&mut self, high: bool) {
        self.clock.next = rust_hdl::prelude::Clock::from(high);
        rust_hdl::core::block::Block::update_all(&mut self.clock);
    }
    fn sim_pass(&mut self, exact: bool) {
        match exact {
            true => rust_hdl::core::block::Block::update_all(self),
            false => self.pass_fast(),
        }
    }
    fn get_outputs(&self, v: &mut [u64]) {
        use crate::ports::Wire;
        let w = [
            self.ready.val().word(),
            self.grant.val().word(),
            self.grant_warp.val().word(),
            self.grant_slot.val().word(),
            self.reg_phys.val().word(),
            self.smem_phys.val().word(),
            self.o_thresh.val().word(),
            self.slot_room.val().word(),
        ];
        v[..w.len()].copy_from_slice(&w);
        let mut at = w.len();
        for s in &self.reg_set {
            v[at] = s.val().word();
            at += 1;
        }
        for s in &self.smem_set {
            v[at] = s.val().word();
            at += 1;
        }
        v[at] = self.released.val().word();
        v[at + 1] = self.waiting.val().word();
    }
    fn get_registers(&self, v: &mut [u64]) {
        // (only the registers whose output changed since the last call are converted: `v`
        // holds the words of the last call, the harness's own buffer; a 64-bit value is 64
        // `bool`s in rust-hdl, slow to turn into a word)
        use crate::ports::Wire;
        use mpgpu_rtl::reg::Reg;
        fn put<T: rust_hdl::prelude::Synth + Wire>(r: &Reg<T>, w: &mut u64) {
            if r.take_changed() {
                *w = r.q.val().word();
            }
        }
        let mut at = 0;
        macro_rules! put_all {
            ($($r:ident),*) => {
                $(put(&self.$r, &mut v[at]); at += 1;)*
            };
        }
        zorua_scalars!(put_all);
        for r in self.wblock.iter().chain(&self.rneed).chain(&self.rheld).chain(std::iter::once(&self.slotv)).chain(&self.slot) {
            put(r, &mut v[at]);
            at += 1;
        }
        for r in self.sneed.iter().chain(&self.sheld).chain(&self.nwarps).chain(&self.narr).chain(&self.bpeak) {
            put(r, &mut v[at]);
            at += 1;
        }
        for (k, r) in self.reg_used.iter().enumerate() {
            put(r, &mut v[at + k]);
        }
    }
}

/// One SM's Zorua coordinator and mapping tables (`Zorua`), with its SM's geometry, its
/// threshold constants and test-only faults.
#[derive(Clone, Copy, Debug)]
pub struct ZoruaPorts {
    pub params: ZoruaParams,
    pub faults: ZoruaFaults,
}

impl Ports for ZoruaPorts {
    type In = zorua::In;
    type Out = zorua::Out;
    type State = zorua::State;
    type Block = Zorua;
    fn name(&self) -> String {
        "zorua".into()
    }
    fn block(&self) -> Zorua {
        let mut b = Zorua::new(self.params, self.faults);
        b.connect_inputs();
        b
    }
    fn state(&self, r: &Regs) -> zorua::State {
        let mask = |n: usize| mpgpu_spec::port::mask(u64::MAX, n);
        let present = mask(self.params.slots);
        let th = if r.scalar("th_set") != 0 { r.scalar("th_q") } else { self.params.o_default };
        // (the fields are bit-sliced: warp w's value is bit w of each slice; only the set bits
        // are visited, most fields being small)
        let unslice = |slices: &[u64]| {
            let mut v = [0u64; 64];
            for (j, &x) in slices.iter().enumerate() {
                let mut m = x;
                while m != 0 {
                    v[m.trailing_zeros() as usize] |= 1 << j;
                    m &= m - 1;
                }
            }
            v
        };
        let (wbs, rns, rhs, sv, sls) = (unslice(r.array("wblock")), unslice(r.array("rneed")), unslice(r.array("rheld")), r.scalar("slotv"), unslice(r.array("slot")));
        let (sns, shs, nws, nas, bps) = (unslice(r.array("sneed")), unslice(r.array("sheld")), unslice(r.array("nwarps")), unslice(r.array("narr")), unslice(r.array("bpeak")));
        zorua::State {
            tq: r.scalar("tq"),
            sq: r.scalar("sq"),
            rq: r.scalar("rq"),
            sched: r.scalar("sched"),
            bar: r.scalar("bar"),
            live: r.scalar("live"),
            blocks: r.scalar("blocks") as u16,
            reg_free: self.params.reg_sets as u32 - r.scalar("reg_cnt") as u32,
            reg_swap: r.scalar("reg_swap") as u32,
            reg_resv: r.scalar("reg_resv") as u32,
            started: r.scalar("started"),
            smem_free: self.params.smem_sets as u32 - r.scalar("smem_cnt") as u32,
            smem_swap: r.scalar("smem_swap") as u32,
            slots_free: !r.scalar("slot_used") & present,
            o_thresh: th as u8,
            warp_info: (0..64).map(|w| zorua::pack_warp(wbs[w] as u8, rns[w] as u8, rhs[w] as u8, (sv >> w & 1 != 0).then_some(sls[w] as u8))).collect(),
            block_info: (0..16).map(|b| zorua::pack_block(bps[b] as u8, sns[b] as u8, shs[b] as u8, nws[b] as u8, nas[b] as u8, r.scalar("bgive") >> b & 1 != 0)).collect(),
            // (the words of the configuration's sets; the sets past them are never free)
            reg_map_free: r.array("reg_used").iter().take(self.params.reg_sets.div_ceil(64)).enumerate().map(|(k, &u)| !u & mask(self.params.reg_sets - 64 * k)).collect(),
            smem_map_free: !r.scalar("smem_used") & mask(self.params.smem_sets),
        }
    }
    fn output_inputs(&self) -> Option<&'static [&'static str]> {
        // (the outputs are functions of the registers and the tables' read registers)
        Some(&[])
    }
}

pub(super) const BLOCK: Block = Block {
    name: "zorua",
    about: "Zorua's coordinator and mapping tables (one per SM; its tables sized from the configuration's registers, scratchpad and warp slots)",
    scope: Scope::PerSm,
    verilog: |s| Ok(v(ZoruaPorts { params: zorua_params(s.cfg)?, faults: Default::default() })),
    broken: &[
        variant("rescan-from-thread", "the rescan starts from the thread/barrier queue", |b| b.edit("zorua", |f: &mut ZoruaFaults| f.rescan_from_thread = true)),
        variant("smem-at-warp-end", "a warp's end frees its block's scratchpad", |b| b.edit("zorua", |f: &mut ZoruaFaults| f.smem_at_warp_end = true)),
    ],
    host: Some(Host {
        about: "Zorua's coordinator and mapping tables in RTL on every SM (or the SMs --sms names), under Zorua's allocation (implied) with the baseline dispatcher or the framework; the RTL is generated for the configuration's SM (with --pipeline thesis and --faults rq or ol it runs beside the replay hardware, --unit zorua,rq-ol)",
        gpu: GpuKind::PerSm,
        default_config: "fermi15",
        setup: |cfg| cfg.alloc = mpgpu_ref::config::Alloc::Zorua,
        fits: zorua_fits,
        install: |b| {
            let ports = ZoruaPorts { params: zorua_params(b.cfg)?, faults: b.o.broken.of("zorua") };
            // (the model takes the RTL's timing, the pipelined one, whatever the configuration says)
            let geom = Geometry { thresh: b.cfg.zorua.thresh(), pipelined: true, ..Geometry::of(&b.cfg.sm[0])? };
            b.per_sm(ports, &|| Coord::new(geom), Coord::state).map(Some)
        },
        // (the baseline dispatcher, and the framework's DSS with draining)
        soak: |_, cfg, _| vec![Run::fcfs(cfg, ""), Run { framework: true, ..Run::new(Policy::Dss, Mechanism::Drain, cfg, "--framework --policy dss --preempt drain") }],
        lockstep_only: false,
        clock_gated: false,
        testbench: crate::entry::TbRun::of(crate::entry::TB_TWO),
    }),
};

/// The RTL coordinator's parameters for `cfg`: its first SM's register sets, scratchpad sets
/// and warp slots (the model's `Geometry`, whose ranges the RTL takes), and Algorithm 1's
/// constants; an error names what the RTL cannot take.
pub fn zorua_params(cfg: &GpuConfig) -> Result<ZoruaParams, String> {
    let g = Geometry::of(&cfg.sm[0])?;
    let z = &cfg.zorua;
    if z.o_default > 16 || z.o_thresh_step > 16 || z.c_delta_thresh >= 1 << 16 {
        return Err("the RTL takes zorua.o_default and o_thresh_step up to 16 and c_delta_thresh below 65536".into());
    }
    Ok(ZoruaParams { slots: g.slots as usize, reg_sets: g.reg_sets as usize, smem_sets: g.smem_sets as usize, o_default: z.o_default as u64, o_thresh_step: z.o_thresh_step as u64, c_delta_thresh: z.c_delta_thresh })
}

/// Whether the RTL coordinator can run on `cfg`.
pub fn zorua_fits(cfg: &GpuConfig, o: &CosimOptions) -> Result<(), String> {
    if cfg.alloc != mpgpu_ref::config::Alloc::Zorua {
        return Err(format!("--unit zorua: the coordinator runs under alloc = \"zorua\" (`{}` allocates by \"{}\"; add --alloc zorua)", cfg.name, cfg.alloc.name()));
    }
    identical_sms(cfg, o)?;
    zorua_params(cfg).map(|_| ()).map_err(|e| format!("--unit zorua: `{}`: {e}", cfg.name))
}
