//! What one cycle of the framework decides before the clock edge applies it ([`Comb`]): the
//! command admitted, the SM event, the decision checked and applied, the block issued and the
//! next picks, all from the registers at the cycle's start and its inputs.

use super::*;
use mpgpu_spec::units::sched::fw::MAX_TMAX;

impl Framework {
    /// Blocks resident on SM `s` after this cycle's completions and saves.
    pub(super) fn left_after(&self, s: usize, i: &FwIn) -> u8 {
        let gone = u8::from(i.tb_done.is_some_and(|d| d.sm == s as u8)) + u8::from(i.tb_saved.is_some_and(|b| b.sm == s as u8));
        self.smst[s].running_tbs.checked_sub(gone).unwrap_or_else(|| panic!("SM {s} reported more finished or saved blocks than it ran"))
    }

    /// The cycle's decisions and outputs. Since the command is registered before admission
    /// (the tenth timing round, `docs/fpga.md`) they come from the registers alone: no output
    /// depends on this cycle's inputs, which only enter registers at the edge.
    pub(super) fn comb(&self, i: &FwIn) -> Comb {
        let n = self.params.sms;
        let mut c = Comb::default();
        // (under slicing, an SM may hold blocks of more than its holder: `share`)
        let q = self.sharing();
        c.out.busy = self.busy();
        c.out.issue = self.issued;
        // Retirement: the block finished in the cycle before was its kernel's last.
        if let Some(k) = self.done {
            let e = &self.ksrt[k];
            if e.valid && e.done_tbs + 1 == e.tbs {
                debug_assert!(e.ptbq.is_empty(), "kernel retired with preempted blocks queued");
                c.retire = Some(k);
                c.out.retired = Some(e.handle);
            }
        }
        // The decision checked in the cycle before is applied (`docs/sched-framework.md`).
        if let Some(a) = self.app {
            c.action = a;
            if a.act == Act::Reserve {
                c.out.preempt = Some(a.sm as u8);
            }
        }
        // The engine's decision of the cycle before is checked (from the registers) and, if it
        // holds, registered to be applied in the next cycle: its kernel has a block left after
        // the block in flight; an assignment's SM is idle; a reservation's SM still runs the
        // kernel it is taken from and no event is in flight to it. (The edge between changes
        // nothing else the check covers: the decision before was applied cycles ago, and the
        // issue and the SM event picked now leave this SM alone.)
        if let Some(d) = self.dec {
            debug_assert!(self.app.is_none(), "two decisions in flight: {:?} then {d:?}", self.app);
            let target_ok = d.kernel < n && self.left_after_flight(d.kernel) >= 1;
            let holds = d.sm < n
                && target_ok
                && match d.act {
                    Act::None => false,
                    Act::Assign => self.smst[d.sm].state == SmState::Idle,
                    Act::Reserve => {
                        self.smst[d.sm].state == SmState::Running
                            && self.smst[d.sm].ksr == Some(d.from as u8)
                            && self.ev.is_none_or(|(es, _, _)| es != d.sm)
                    }
                };
            if holds {
                c.checked = Some(d);
            }
        }
        // The SM event picked in the cycle before is applied: both its stages left out the SMs
        // an edge between could change, so its SM is in the state it was picked in.
        // (Under slicing, a running SM picked with blocks on it is handed over to the heir
        // found with it; picked with none, the event does nothing.)
        if let Some((s, st, flag)) = self.ev {
            assert!(self.smst[s].state == st, "the event picked for SM {s} ({st:?}) no longer holds: {:?}", self.smst[s]);
            if st == SmState::Running && flag {
                c.handover = self.ev_heir.map(|k| (s, k));
            } else {
                c.event = Some((s, flag));
            }
        }
        // The SMs the edge ahead may change (the SM issued to at it, the SM a reservation names,
        // registered or applied at it, the SM of the event in flight) or the one after it (the
        // SM of the pick in its second stage): the SM event's and the issue's stages leave them
        // out (`docs/sched-framework.md`).
        let changing = |s: usize| {
            self.grant.is_some_and(|(gs, _)| gs == s)
                || self.pick == Some(s)
                || self.dec.is_some_and(|a| a.act == Act::Reserve && a.sm == s)
                || self.app.is_some_and(|a| a.act == Act::Reserve && a.sm == s)
                || self.ev.is_some_and(|(es, _, _)| es == s)
        };
        // The SM event for the next cycle: the lowest-index SM found with an event in the cycle
        // before, not changing now; a reserved one goes to setup if its next kernel had work
        // when it was found (registered with it: `docs/sched-framework.md`, item 3).
        for s in 0..n {
            if self.ev_ready >> s & 1 == 0 || changing(s) {
                continue;
            }
            let e = self.smst[s];
            c.ev_pick = match e.state {
                // (with blocks on it, found for a handover: to its heir now, unless the
                // registered decision may be applied at the edge the handover would be, when
                // the event does nothing)
                SmState::Running if e.running_tbs != 0 => {
                    c.ev_heir = self.heir(s).filter(|_| self.dec.is_none());
                    Some((s, e.state, true))
                }
                SmState::Running => Some((s, e.state, false)),
                SmState::Reserved => Some((s, e.state, self.ev_work >> s & 1 != 0)),
                _ => unreachable!("SM {s} was found with an event but is {:?}", e.state),
            };
            break;
        }
        // The SMs with an event, from the registers, for the next cycle's pick: no blocks, and
        // running a kernel with no work (release) or reserved (its preemption is complete),
        // not changing now. Under slicing also a running SM whose holder has no work left but
        // blocks on it, and an heir (a handover: `share`).
        for s in 0..n {
            let e = self.smst[s];
            if changing(s) {
                continue;
            }
            let event = match e.state {
                SmState::Running if e.running_tbs == 0 => !self.ksrt[e.ksr.unwrap() as usize].has_work(),
                SmState::Running => !self.ksrt[e.ksr.unwrap() as usize].has_work() && self.heir(s).is_some(),
                SmState::Reserved => e.running_tbs == 0,
                _ => false,
            };
            if event {
                c.ev_ready |= 1 << s;
                if e.state == SmState::Reserved && e.next.is_some_and(|k| self.ksrt[k as usize].has_work()) {
                    c.ev_work |= 1 << s;
                }
            }
        }
        // Admission of the command registered in the cycle before (the GPU still presents it)
        // into the entry picked in the cycle before (the lowest that was free and that no SM
        // named), if it is still free (a command may have entered it at the edge between; an
        // SM names only valid entries, so one free then is not named now). The entry for the
        // next cycle, from the registers.
        if self.cmd.is_some() {
            c.admit = self.free.filter(|&k| !self.ksrt[k].valid);
            c.out.cmd_taken = c.admit.is_some();
        }
        // (`named`: the entries some SM named in the cycle before; an entry named now but not
        // then is valid now, so not free either)
        c.free_pick = (0..n).find(|&k| !self.ksrt[k].valid && self.named >> k & 1 == 0);
        c.named = self.named_now();
        c.wants = self.wants_now();
        // The engine's trigger, registered (it sees it next cycle): a kernel retires or is
        // admitted, or an SM goes idle. (After an action the engine waits for it to be applied
        // before it scans again, `units::scan`.)
        c.trigger = c.retire.is_some() || c.admit.is_some() || matches!(c.event, Some((_, false))) || c.handover.is_some();
        // The policy engine, on the table reads of the cycle before (and the live counts of its
        // candidates); its decision is registered. The reads for the next cycle are taken at the
        // address it scans then.
        let (o, next) = if self.policy.uses_dss() {
            let probe = self.dss.outputs(&DssIn::default());
            c.dss_in = DssIn {
                trigger: self.trig,
                count_max: self.ksrt[probe.kmax as usize].count,
                count_min: self.ksrt[probe.kmin as usize].count,
                ..self.snap.dss
            };
            let o = self.dss.outputs(&c.dss_in);
            ((o.act, o.act_sm, o.act_kernel, o.act_from), probe.next_addr)
        } else {
            let probe = self.prio.outputs(&PrioIn::default());
            c.prio_in = PrioIn { trigger: self.trig, ..self.snap.prio };
            let o = self.prio.outputs(&c.prio_in);
            ((o.act, o.act_sm, o.act_kernel, o.act_from), probe.next_addr)
        };
        c.decision = Action { act: o.0, sm: o.1 as usize, kernel: o.2 as usize, from: o.3 as usize };
        c.snap = self.read_tables(next as usize);
        // Issue: the pick of the cycle before. Its SM still runs its kernel with room and the
        // kernel still has work (the pick ruled out everything that could change that at the
        // edge between). The head of its PTBQ first, else its next new block.
        // (Under slicing the SM may hold blocks of other kernels, and a quota written since
        // the pick takes effect for the next one.)
        if let Some((s, k)) = self.grant {
            let (e, ks) = (self.smst[s], &self.ksrt[k]);
            let room = q || (e.ksr == Some(k as u8) && e.running_tbs < ks.tk);
            assert!(e.state == SmState::Running && room && ks.has_work(), "the issue picked for SM {s} (kernel {k}) no longer holds: {e:?}");
            let (tb, restore, slot) = match ks.ptbq.front() {
                Some(&(tb, slot)) => (tb, true, slot),
                None => (ks.next_tb, false, 0),
            };
            c.issue = Some((s, k, restore));
            c.issued = Some(TbIssue { sm: s as u8, kernel: k as u8, handle: ks.handle, tb, restore, slot });
        }
        // The issue's two stages (`docs/sched-framework.md`), which leave out the changing SMs
        // too.
        // The pick's second stage: the SM picked in the cycle before, with its kernel, for the
        // next cycle's issue, unless the registered decision reserves that SM (it was decided
        // as the SM was picked, and would be applied at the edge that issues to it). (The
        // pick left out every other change up to that edge: the SMs the edge ahead changed
        // then, and the SMs whose changes were registered then; the SM event's first stage
        // never finds a picked SM, whose kernel had work.)
        if let Some(s) = self.pick {
            if !self.dec.is_some_and(|a| a.act == Act::Reserve && a.sm == s) {
                // (under slicing, the oldest kernel the SM could take a block of when it was
                // picked, if any)
                c.grant = match q {
                    true => self.oldest(self.pick_el).map(|k| (s, k)),
                    false => Some((s, self.smst[s].ksr.expect("a picked SM runs a kernel") as usize)),
                };
            }
        }
        // The round robin's pick, among the SMs found ready in the cycle before, unless a pick
        // is in its second stage (one every other cycle at most): not one the edge ahead
        // changes, and not one whose kernel had under two blocks left while a block is in
        // flight (it may be that kernel's last).
        for d in 0..n {
            let s = (self.issue_ptr + d) % n;
            if self.pick.is_some() || self.ready >> s & 1 == 0 || changing(s) || (self.last >> s & 1 == 1 && self.grant.is_some()) {
                continue;
            }
            c.pick = Some(s);
            // (under slicing, with the kernels it may take a block of now)
            if q {
                c.pick_el = self.eligible(s);
            }
            break;
        }
        // The SMs ready for the pick of the next cycle, from the registers: running with room
        // (under T_k, and not reported full by the SM), not changed by the edge ahead, and with
        // a kernel that has a block left after the block in flight (`last`: under two left
        // then).
        for s in 0..n {
            let e = self.smst[s];
            if e.state != SmState::Running || changing(s) || i.full >> s & 1 != 0 {
                continue;
            }
            // (under slicing, some kernel is eligible, T_k in its cap, and the SM holds fewer
            // than T_max blocks in all, so that its count never wraps; `last`: one of them
            // may have under two left)
            if q {
                let el = self.eligible(s);
                if el != 0 && (e.running_tbs as usize) < MAX_TMAX {
                    c.ready |= 1 << s;
                }
                if (0..n).any(|k| el >> k & 1 == 1 && self.left_after_flight(k) < 2) {
                    c.last |= 1 << s;
                }
                continue;
            }
            let k = e.ksr.unwrap() as usize;
            let left = self.left_after_flight(k);
            if e.running_tbs < self.ksrt[k].tk && left >= 1 {
                c.ready |= 1 << s;
                if left < 2 {
                    c.last |= 1 << s;
                }
            }
        }
        c
    }

    /// The table inputs of the policy engine in use for entry `a`, from the tables as they are
    /// now (the other engine's stay at their defaults: it never scans).
    fn read_tables(&self, a: usize) -> Snap {
        let (sm, k) = (self.smst[a], &self.ksrt[a]);
        if self.policy.uses_dss() {
            let dss = DssIn {
                sm_state: sm.state.code(),
                sm_ksr_valid: sm.ksr.is_some(),
                sm_ksr: sm.ksr.unwrap_or(0),
                k_valid: k.valid,
                k_count: k.count,
                k_has_work: k.has_work(),
                k_running: self.running(a),
                ..DssIn::default()
            };
            return Snap { dss, ..Snap::default() };
        }
        let smk = sm.ksr.map(|x| &self.ksrt[x as usize]);
        let prio = PrioIn {
            sm_state: sm.state.code(),
            sm_ksr_valid: sm.ksr.is_some(),
            sm_ksr: sm.ksr.unwrap_or(0),
            smk_priority: smk.map_or(0, |k| k.priority),
            smk_age: smk.map_or(0, |k| k.age),
            k_valid: k.valid,
            k_has_work: k.has_work(),
            k_priority: k.priority,
            k_age: k.age,
            k_wants_more: self.wants >> a & 1 == 1,
            ..PrioIn::default()
        };
        Snap { prio, ..Snap::default() }
    }
}
