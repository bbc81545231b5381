//! The framework as others see it: its registers in the interface's form (`fw::State`, what
//! the RTL is compared on), the policy engine's decisions, and the invariants of its tables.

use super::*;

impl Framework {
    /// The architectural state the co-simulation compares (invalid KSRT entries read as zero).
    pub fn state(&self) -> State {
        State {
            smst: self
                .smst
                .iter()
                .map(|e| SmWire {
                    state: e.state.code(),
                    ksr_valid: e.ksr.is_some(),
                    ksr: e.ksr.unwrap_or(0),
                    next_valid: e.next.is_some(),
                    next: e.next.unwrap_or(0),
                    running_tbs: e.running_tbs,
                })
                .collect(),
            ksrt: self
                .ksrt
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    if !k.valid {
                        return KsrState::default();
                    }
                    KsrState {
                        valid: true,
                        handle: k.handle,
                        tbs: k.tbs,
                        next_tb: k.next_tb,
                        done_tbs: k.done_tbs,
                        tk: k.tk,
                        priority: k.priority,
                        age: k.age,
                        count: k.count,
                        ptbq_len: k.ptbq.len() as u16,
                        cap: (self.owned(i) as u32 * k.tk as u32) as u16,
                        rem: k.remaining(),
                    }
                })
                .collect(),
            admitted: self.admitted as u16,
            issue_ptr: self.issue_ptr as u8,
            pipe: {
                let d = self.dec.unwrap_or_default();
                let a = self.app.unwrap_or_default();
                let g = self.grant;
                Pipe {
                    trigger: self.trig,
                    dec_act: d.act.code(),
                    dec_sm: d.sm as u8,
                    dec_kernel: d.kernel as u8,
                    dec_from: d.from as u8,
                    app_act: a.act.code(),
                    app_sm: a.sm as u8,
                    app_kernel: a.kernel as u8,
                    app_from: a.from as u8,
                    grant_valid: g.is_some(),
                    grant_sm: g.map_or(0, |g| g.0 as u8),
                    grant_kernel: g.map_or(0, |g| g.1 as u8),
                    pick_valid: self.pick.is_some(),
                    pick_sm: self.pick.map_or(0, |s| s as u8),
                    pick_el: self.pick.map_or(0, |_| self.pick_el),
                    cmd_valid: self.cmd.is_some(),
                    cmd_handle: self.cmd.map_or(0, |c| c.handle),
                    cmd_tbs: self.cmd.map_or(0, |c| c.tbs),
                    ev_valid: self.ev.is_some(),
                    ev_sm: self.ev.map_or(0, |e| e.0 as u8),
                    ev_setup: self.ev.is_some_and(|e| e.1 == SmState::Reserved && e.2),
                    ev_hand: self.ev.is_some_and(|e| e.1 == SmState::Running && e.2),
                    ev_heir: self.ev_heir.map(|k| k as u8),
                    free_valid: self.free.is_some(),
                    free: self.free.map_or(0, |k| k as u8),
                    ready: self.ready,
                    ev_ready: self.ev_ready,
                    ev_work: self.ev_work,
                    named: self.named,
                    wants: self.wants,
                    last: self.last,
                    saved_valid: self.saved.is_some(),
                    saved_kernel: self.saved.map_or(0, |v| v.0 as u8),
                    saved_tb: self.saved.map_or(0, |v| v.1),
                    saved_slot: self.saved.map_or(0, |v| v.2),
                    done_valid: self.done.is_some(),
                    done_kernel: self.done.map_or(0, |k| k as u8),
                }
            },
            resident: self.share.as_ref().map_or(Vec::new(), |sh| sh.res.clone()),
            quotas: self.share.as_ref().map_or(Vec::new(), |sh| sh.quota.iter().map(|q| q.map(|q| q[..self.params.sms].to_vec())).collect()),
        }
    }

    /// The policy engine's decision checked this cycle (made in the cycle before and
    /// registered: `act`, SM, kernel, from; applied in the next cycle if it holds)
    /// (`Act::None` when there is none). A probe for testbenches, which steer stimulus into the
    /// cycle that applies a decision and count the corners around it; it changes nothing.
    pub fn engine_decision(&self) -> (Act, u8, u8, u8) {
        self.dec.map_or((Act::None, 0, 0, 0), |d| (d.act, d.sm as u8, d.kernel as u8, d.from as u8))
    }

    /// The policy engine's decision this cycle (from its registers; registered at the edge and
    /// checked in the next cycle) (`Act::None` when there is none). A probe for testbenches like
    /// [`Framework::engine_decision`]; it changes nothing.
    pub fn engine_act(&self) -> (Act, u8, u8, u8) {
        let (act, sm, kernel, from) = if self.policy.uses_dss() {
            let o = self.dss.outputs(&DssIn::default());
            (o.act, o.act_sm, o.act_kernel, o.act_from)
        } else {
            let o = self.prio.outputs(&PrioIn::default());
            (o.act, o.act_sm, o.act_kernel, o.act_from)
        };
        (act, sm, kernel, from)
    }

    /// The decision applied this cycle (checked in the cycle before; `Act::None` when there is
    /// none). A probe for testbenches like [`Framework::engine_decision`]; it changes nothing.
    pub fn applied_decision(&self) -> (Act, u8, u8, u8) {
        self.app.map_or((Act::None, 0, 0, 0), |d| (d.act, d.sm as u8, d.kernel as u8, d.from as u8))
    }

    /// The model's invariants, checked after every clock edge (a violation panics there with
    /// this message); `Err` names the first one broken, its kernel and the values. For every
    /// valid KSRT entry k (T_k its blocks per SM):
    /// - **occupancy**: the blocks resident on SMs that run it (running, or reserved and being
    ///   taken from it) plus the blocks in its PTBQ never exceed N_SM x T_k, and no SM holds
    ///   more than T_k of them (preempted blocks are restored before new ones are issued, so
    ///   the PTBQ only ever holds blocks that had a slot);
    /// - **blocks conserved**: every new block issued is done, resident or queued:
    ///   `next_tb == done + resident + queued`;
    /// - **tokens conserved**: `count + held == tokens`, `tokens` the DSS tokens its command
    ///   carried (for Equal Spatial Sharing its process's share) and `held` the SMs it has or
    ///   is getting (setup or running for it, or reserved for it). Every token move pairs with
    ///   a change of owner: an assignment costs the taker one for an idle SM; a reservation
    ///   costs the taker one and pays the loser one as the SM passes to the taker; a release
    ///   (or a preemption completing for a kernel with no work left) pays one back as the SM
    ///   goes idle; a preemption completing into setup moves neither. All policies move
    ///   tokens this way (the priority policies just ignore them), so it holds for all; the
    ///   count is 8-bit and compared modulo 256 as the hardware keeps it.
    ///
    /// And for every SM: an idle or setting-up SM holds no blocks. Under slicing, the kernels
    /// with quotas have one priority (the quota writer's contract, `fw::QuotaWrite`).
    pub fn check_invariants(&self) -> Result<(), String> {
        const N: usize = mpgpu_spec::units::sched::MAX_SMS;
        let n = self.params.sms;
        if let Some(rows) = self.quota_rows() {
            let mut prio = (0..n).filter(|&k| self.ksrt[k].valid && rows[k].is_some()).map(|k| self.ksrt[k].priority);
            if let Some(p) = prio.next() {
                if prio.any(|x| x != p) {
                    return Err("kernels of different priorities hold quotas at once".into());
                }
            }
        }
        let (mut resident, mut held) = ([0u32; N], [0u32; N]);
        for (s, e) in self.smst.iter().enumerate() {
            if matches!(e.state, SmState::Idle | SmState::Setup) && e.running_tbs != 0 {
                return Err(format!("SM {s} is {:?} with {} blocks resident", e.state, e.running_tbs));
            }
            // (each kernel's blocks on the SM: under slicing as counted per kernel, else all the
            // holder's)
            let mut on = [0u8; N];
            match self.resident(s) {
                Some(r) => {
                    if r.iter().map(|&b| b as u32).sum::<u32>() != e.running_tbs as u32 {
                        return Err(format!("SM {s} holds {} blocks, but its kernels' counts {r:?} add up to another number", e.running_tbs));
                    }
                    on[..r.len()].copy_from_slice(r);
                }
                None => {
                    if let Some(k) = e.ksr {
                        on[k as usize] = e.running_tbs;
                    }
                }
            }
            for (k, &b) in on.iter().enumerate().filter(|&(_, &b)| b > 0) {
                let kr = &self.ksrt[k];
                resident[k] += b as u32;
                if kr.valid && b > kr.tk {
                    return Err(format!("SM {s} holds {b} blocks of kernel {k} (handle {}), more than T_k = {}", kr.handle, kr.tk));
                }
            }
            let owner = match e.state {
                SmState::Running | SmState::Setup => e.ksr,
                SmState::Reserved => e.next,
                SmState::Idle => None,
            };
            if let Some(k) = owner {
                held[k as usize] += 1;
            }
        }
        for (k, e) in self.ksrt.iter().enumerate().filter(|(_, e)| e.valid) {
            // (queued: in the PTBQ, or saved in the cycle before and on its way to it)
            let queued = e.ptbq.len() as u32 + u32::from(self.saved.is_some_and(|v| v.0 == k));
            let cap = n as u32 * e.tk as u32;
            if resident[k] + queued > cap {
                return Err(format!(
                    "kernel {k} (handle {}): {} blocks resident + {queued} queued exceed N_SM x T_k = {n} x {} = {cap}",
                    e.handle, resident[k], e.tk
                ));
            }
            // (done: counted, or finished in the cycle before and counted in this one)
            let done = e.done_tbs + u32::from(self.done == Some(k));
            if e.next_tb != done + resident[k] + queued {
                return Err(format!(
                    "kernel {k} (handle {}): blocks not conserved: {} issued new != {} done + {} resident + {queued} queued",
                    e.handle, e.next_tb, e.done_tbs, resident[k]
                ));
            }
            if e.count.wrapping_add(held[k] as i8) != e.tokens {
                return Err(format!(
                    "kernel {k} (handle {}): tokens not conserved: count {} + {} SMs held != {} tokens given",
                    e.handle, e.count, held[k], e.tokens
                ));
            }
        }
        Ok(())
    }
}
