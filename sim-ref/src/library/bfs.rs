//! bfs: Parboil/Rodinia-style level-synchronous breadth-first search, one launch per level.
//! The host launches level `cur + 1` only if the kernel set `flags[cur]`, so the number of
//! launches depends on the graph.

use super::{Bench, Kernels};
use crate::kernel::Launch;
use crate::kernel::Kernel;
use crate::mem::GlobalMem;
use crate::program::{rng, Expected, Output, Program, Rng as ProgRng};
use rand::Rng;
use std::collections::VecDeque;
use std::sync::Arc;

/// Level of a node BFS never reaches.
const UNREACHED: u32 = u32::MAX;

pub const BENCH: Bench = Bench {
    name: "bfs",
    description: "BFS levels from node 0 of a random directed graph of `size` nodes (1..=4194304; out-degree 0..=5, node 0 2..=5), one launch per level",
    character: "data-dependent branches and gathers, few active lanes, many short launches chosen by the host",
    source: include_str!("../../../kernels/bfs.s"),
    default_size: 1 << 17,
    test_sizes: [300, 2000],
    threads: Some((32, 1024)),
    make,
};

/// CSR adjacency of a random directed graph.
fn random_graph(r: &mut ProgRng, n: usize) -> (Vec<u32>, Vec<u32>) {
    let mut rowptr = vec![0u32];
    let mut adj = Vec::new();
    for v in 0..n {
        let deg = if v == 0 { r.gen_range(2..=5) } else { r.gen_range(0..=5) };
        for _ in 0..deg {
            adj.push(r.gen_range(0..n as u32));
        }
        rowptr.push(adj.len() as u32);
    }
    (rowptr, adj)
}

/// Host BFS from node 0.
fn levels(rowptr: &[u32], adj: &[u32]) -> Vec<u32> {
    let n = rowptr.len() - 1;
    let mut level = vec![UNREACHED; n];
    level[0] = 0;
    let mut q = VecDeque::from([0usize]);
    while let Some(v) = q.pop_front() {
        for &u in &adj[rowptr[v] as usize..rowptr[v + 1] as usize] {
            if level[u as usize] == UNREACHED {
                level[u as usize] = level[v] + 1;
                q.push_back(u as usize);
            }
        }
    }
    level
}

struct BfsProgram {
    kernel: Arc<Kernel>,
    size: u32,
    seed: u64,
    /// rowptr, adj, level, flags
    bufs: [u32; 4],
    /// Level of the last launch, if any.
    cur: Option<u32>,
    outputs: Vec<Output>,
}

impl BfsProgram {
    fn launch(&self, cur: u32) -> Launch {
        let [rp, adj, level, flags] = self.bufs;
        Launch::linear(&self.kernel, self.size.div_ceil(self.kernel.threads), vec![rp, adj, level, flags, cur, self.size])
    }
}

impl Program for BfsProgram {
    fn setup(&mut self, mem: &mut GlobalMem) {
        let mut r = rng(self.seed);
        let (rowptr, adj) = random_graph(&mut r, self.size as usize);
        let expected = levels(&rowptr, &adj);
        let mut init = vec![UNREACHED; self.size as usize];
        init[0] = 0;
        let prow = mem.alloc_u32s(&rowptr);
        let padj = mem.alloc_u32s(&adj);
        let plevel = mem.alloc_u32s(&init);
        // One flag per level the search can reach (levels are below `size`), all 0.
        let pflags = mem.alloc(4 * self.size);
        self.bufs = [prow, padj, plevel, pflags];
        self.outputs = vec![Output { name: "level".into(), addr: plevel, expected: Expected::U32(expected) }];
    }

    fn next_launch(&mut self, mem: &GlobalMem) -> Option<Launch> {
        let cur = match self.cur {
            None => 0,
            Some(c) => {
                let flag = mem.read(self.bufs[3] + 4 * c).expect("flags buffer is mapped");
                // A level-`c` launch can only discover level c+1 <= size-1.
                if flag == 0 || c + 1 >= self.size {
                    return None;
                }
                c + 1
            }
        };
        self.cur = Some(cur);
        Some(self.launch(cur))
    }

    fn outputs(&self) -> &[Output] {
        &self.outputs
    }
}

fn make(ks: &Kernels, size: u32, seed: u64) -> Result<Box<dyn Program>, String> {
    if size == 0 || size > 1 << 22 {
        return Err("expected 1..=4194304 nodes".into());
    }
    Ok(Box::new(BfsProgram { kernel: ks.get("bfs_level"), size, seed, bufs: [0; 4], cur: None, outputs: Vec::new() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::func::FuncGpu;

    /// The host keeps launching while the previous level found new nodes: one launch per level
    /// plus the final one that finds nothing; some nodes stay unreachable.
    #[test]
    fn one_launch_per_level() {
        for (size, seed) in [(2000, 1), (300, 2), (1, 1)] {
            let mut p = BENCH.program(size, seed).unwrap();
            let mut gpu = FuncGpu::new();
            let c = gpu.run(p.as_mut()).unwrap();
            p.verify(&gpu.mem).unwrap();
            let mut r = rng(seed);
            let (rowptr, adj) = random_graph(&mut r, size as usize);
            let lv = levels(&rowptr, &adj);
            let max = lv.iter().filter(|&&l| l != UNREACHED).max().copied().unwrap();
            assert_eq!(c.launches, max as u64 + 1);
            if size > 1 {
                assert!(max >= 3, "a shallow graph tests little");
                assert!(lv.contains(&UNREACHED));
            }
        }
    }
}
