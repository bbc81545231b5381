//! The SM driver's round-robin arbiter (`RoundRobin`) against a plain software round robin,
//! cycle by cycle, on random request vectors for several SM counts: the one-hot grant, `valid`,
//! the registered grant (`granted`, a cycle later) and the pointer (a cycle after the grant),
//! including grants of the last requester (the pointer wraps) and requests only below the
//! pointer.

use mpgpu_rtl::RoundRobin;
use rust_hdl::prelude::*;

mod common;
use common::Rng;

/// The lowest requesting index at or above `pointer`, else the lowest requesting index.
fn pick(request: u16, pointer: usize) -> Option<usize> {
    (pointer..16).chain(0..pointer).find(|&i| request >> i & 1 == 1)
}

/// Runs `cycles` random cycles; returns the grants of the last requester and the grants that
/// wrapped (a request only below the pointer), or the first difference.
fn run(sms: usize, seed: u64, cycles: usize) -> Result<(usize, usize), String> {
    let mut uut = RoundRobin::new(sms);
    uut.clock.connect();
    uut.request.connect();
    uut.connect_all();
    let mut r = Rng(seed);
    let mut pointer = 0usize;
    // (the RTL's registered grant, and its pointer, lag the pick by a cycle)
    let mut granted = 0u64;
    let (mut last, mut wrapped) = (0, 0);
    let mask = if sms == 16 { 0xffff } else { (1u16 << sms) - 1 };
    for c in 0..cycles {
        let x = r.next();
        // Sparse requests half of the time, so that the pick often wraps.
        let request = if x % 2 == 0 { (x >> 8) as u16 & mask } else { (x >> 8) as u16 & (x >> 24) as u16 & (x >> 40) as u16 & mask };
        uut.request.next = (request as u64).into();
        uut.clock.next = Clock::from(false);
        assert!(simulate(&mut uut, 100), "did not settle");
        let want = pick(request, pointer);
        let (valid, grant, held) = (uut.valid.val(), uut.grant.val().to_u64(), uut.granted.val().to_u64());
        let ok = match want {
            Some(i) => valid && grant == 1 << i,
            None => !valid && grant == 0,
        };
        if !ok || held != granted {
            return Err(format!("sms {sms} cycle {c}: request {request:#06x} pointer {pointer}: want {want:?} (and {granted:#06x} held), the RTL grants valid {valid} one-hot {grant:#06x} (holds {held:#06x})"));
        }
        granted = grant;
        let before = pointer;
        if let Some(i) = want {
            last += (i == sms - 1) as usize;
            wrapped += (i < pointer) as usize;
            pointer = if i == sms - 1 { 0 } else { i + 1 };
        }
        uut.clock.next = Clock::from(true);
        assert!(simulate(&mut uut, 100), "did not settle");
        // (after the edge: the pointer after the grant of the cycle before)
        if uut.pointer.q.val().to_u64() as usize != before {
            return Err(format!("sms {sms} cycle {c}: pointer {before} (a cycle after its grant), the RTL's {}", uut.pointer.q.val().to_u64()));
        }
    }
    Ok((last, wrapped))
}

#[test]
fn the_round_robin_grants_as_a_software_one_for_every_sm_count() {
    for sms in [1, 2, 5, 13, 15, 16] {
        let (last, wrapped) = run(sms, 0x9e37_79b9_7f4a_7c15 ^ sms as u64, 5_000).unwrap();
        assert!(last > 50, "sms {sms}: only {last} grants of the last requester");
        assert!(sms == 1 || wrapped > 50, "sms {sms}: only {wrapped} grants below the pointer");
    }
}
