//! Unit slots: where the GPU holds its RTL-backed units, and which instances carry RTL.
//!
//! A unit kind is global (one slot: the kernel scheduling framework; later the water-filling
//! unit) or per SM (one slot in every SM: later Zorua's coordinator and mapping tables, the
//! replay queue and operand log, the profiling counters). A run fills each slot with the
//! model alone, the RTL alone, or the lockstep pair (the RTL in the loop, the model beside it);
//! for per-SM kinds it says which SMs carry the RTL ([`SmSet`]), the others holding the model.

use std::fmt;

/// What a unit slot holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlotMode {
    /// The RTL in the loop, the model beside it, compared every clocked cycle.
    #[default]
    Lockstep,
    /// The RTL alone, unchecked.
    RtlAlone,
    /// The reference model alone.
    ModelAlone,
}

/// The SMs whose slot of a per-SM unit kind carries RTL: `all` or a list of indices and
/// ranges (`0,3,5-7`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SmSet {
    #[default]
    All,
    Only(Vec<usize>),
}

impl SmSet {
    /// Parses `all` or `0,3,5-7` for a GPU of `sms` SMs; an error names the bad part.
    pub fn parse(s: &str, sms: usize) -> Result<SmSet, String> {
        let s = s.trim();
        if s == "all" {
            return Ok(SmSet::All);
        }
        let mut v = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            let num = |x: &str| -> Result<usize, String> {
                let n: usize = x.trim().parse().map_err(|_| format!("SM list `{s}`: `{x}` is not an SM index (expected `all` or indices like 0,3,5-7)"))?;
                if n >= sms {
                    return Err(format!("SM list `{s}`: SM {n} does not exist (the GPU has SMs 0..={})", sms.saturating_sub(1)));
                }
                Ok(n)
            };
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if a > b {
                        return Err(format!("SM list `{s}`: range `{part}` runs backwards"));
                    }
                    v.extend(a..=b);
                }
                None => v.push(num(part)?),
            }
        }
        v.sort_unstable();
        v.dedup();
        Ok(SmSet::Only(v))
    }

    pub fn contains(&self, sm: usize) -> bool {
        match self {
            SmSet::All => true,
            SmSet::Only(v) => v.binary_search(&sm).is_ok(),
        }
    }
}

impl fmt::Display for SmSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SmSet::All => f.write_str("all"),
            SmSet::Only(v) => f.write_str(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_sets_parse_and_reject_clearly() {
        assert_eq!(SmSet::parse("all", 16), Ok(SmSet::All));
        assert_eq!(SmSet::parse("5-7, 0,3,6", 16), Ok(SmSet::Only(vec![0, 3, 5, 6, 7])));
        assert!(SmSet::parse("0,16", 16).unwrap_err().contains("SM 16 does not exist"));
        assert!(SmSet::parse("3-1", 16).unwrap_err().contains("runs backwards"));
        assert!(SmSet::parse("x", 16).unwrap_err().contains("`x` is not an SM index"));
        let s = SmSet::parse("1,4", 8).unwrap();
        assert!(s.contains(4) && !s.contains(2));
        assert_eq!(s.to_string(), "1,4");
    }
}
