//! `mpgpu experiment thesis-faults`: the preemptible-fault results of Tanasić's thesis, Chapter
//! 6 (§6.5), over the runs of `mpgpu faults` on `thesis16` with inputs sized for several rounds
//! of blocks (§6.5.1): the cost of the schemes without faults (§6.5.2, Figs. 6.11 and 6.12),
//! thread-block switching on faults (§6.5.3, Fig. 6.13) and local fault handling (§6.5.4, Fig.
//! 6.15), each under demand paging over NVLink and PCIe.

use super::{ratio_verdict, Claim, Ctx, Experiment, Report, Verdict};
use crate::faults_cmd::{base_config, paged_configs, paged_row, scheme_configs, PagedRow, Runs, PAGED, SCHEMES};
use crate::par::Progress;
use crate::slicing_cmd::geomean;
use anyhow::{anyhow, Result};
use mpgpu_ref::config::{GpuConfig, PagingLink};
use mpgpu_ref::library::find;
use std::fmt::Write as _;
use std::path::PathBuf;

pub const EXPERIMENT: Experiment = Experiment {
    name: "thesis-faults",
    paper: "Tanasić, multiprogrammed GPUs (thesis, 2016), Chapter 6",
    page: "thesis-faults",
    what: "the cost of preemptible faults without faults (Figs. 6.11, 6.12), thread-block switching on faults (Fig. 6.13) and local fault handling (Fig. 6.15)",
    points,
    run,
};

/// The configuration of the thesis's Table 6.1.
const CONFIG: &str = "thesis16";
/// Rounds of blocks every kernel's input fills at the least ("enough TBs for several rounds",
/// §6.5.1; two rounds is the thesis's own example).
const ROUNDS: u32 = 2;
/// The links of Fig. 6.13 and Fig. 6.15, and the migration unit (64 KB, §6.5.1).
const LINKS: [(PagingLink, &str); 2] = [(PagingLink::Nvlink, "NVLink"), (PagingLink::Pcie, "PCIe")];
const MIGRATION: u32 = 64 * 1024;
/// The columns of `SCHEMES` that stand for the thesis's schemes, in Fig. 6.11's order: Warp
/// Disable (commit, last TLB check), the replay queue, and the operand log with the default
/// log-full policy at the thesis's 8 KB and 16 KB of 64-bit operands (4 KB and 8 KB of ours).
const THESIS_SCHEMES: [(&str, &str, f64); 5] = [("WD-commit", "WD-commit", 0.85), ("WD-lastchk", "WD-lastcheck", 0.91), ("RQ", "replay queue", 0.94), ("OL-4KB", "operand log 8 KB (our 4 KB)", 0.969), ("OL-8KB", "operand log 16 KB (our 8 KB)", 0.998)];
/// The holding log's columns beside the stalling ones (docs/faults.md O10).
const HOLDING: [(&str, &str); 2] = [("OL-4KB", "OL-4KB-h"), ("OL-8KB", "OL-8KB-h")];
/// What 1-cycle switches may add to switching and still be "only a little" (§6.5.3): taken as
/// at most 2 %.
const LITTLE: f64 = 1.02;

/// The quick run's kernels and sizes: sgemm at its larger test size, and lbm at 192, large
/// enough to fault in bursts and switch blocks out.
const QUICK: [(&str, u32); 2] = [("sgemm", 64), ("lbm", 192)];

/// The kernels, their sizes and the rounds of blocks they fill: every Parboil-like application
/// sized for [`ROUNDS`] rounds of blocks (as `mixes` sizes them), or under `--quick` [`QUICK`].
fn kernels(cfg: &GpuConfig, quick: bool) -> Result<Vec<(&'static str, u32, f64)>> {
    if !quick {
        return mpgpu_ref::mixgen::sizes(cfg, ROUNDS).map_err(|e| anyhow!("{e}"));
    }
    QUICK
        .iter()
        .map(|&(k, size)| {
            let b = find(k).ok_or_else(|| anyhow!("no application `{k}` in the library"))?;
            Ok((k, size, mpgpu_ref::mixgen::rounds_of(&b, cfg, size).map_err(|e| anyhow!("{e}"))?))
        })
        .collect()
}

/// Every configuration: the baseline, the schemes, and per link stall-on-fault and [`PAGED`]'s.
struct Configs {
    base: GpuConfig,
    schemes: Vec<GpuConfig>,
    paged: Vec<(GpuConfig, Vec<GpuConfig>)>,
}

fn configs() -> Result<Configs> {
    let cfg = GpuConfig::from_arg(CONFIG).map_err(|e| anyhow!("{e}"))?;
    let base = base_config(&cfg);
    let schemes = scheme_configs(&base)?;
    let paged = LINKS.iter().map(|&(l, _)| paged_configs(&cfg, l, MIGRATION, &[])).collect::<Result<_>>()?;
    Ok(Configs { base, schemes, paged })
}

fn points(quick: bool) -> Result<usize> {
    let c = configs()?;
    Ok(kernels(&c.base, quick)?.len() * (1 + SCHEMES.len() + LINKS.len() * (1 + PAGED.len())))
}

fn scheme_index(name: &str) -> usize {
    SCHEMES.iter().position(|s| s.name == name).expect("a scheme of SCHEMES")
}

fn run(ctx: &Ctx, pb: &Progress) -> Result<Report> {
    let c = configs()?;
    let ks = kernels(&c.base, ctx.quick)?;
    let mut plan = Vec::new();
    for &(k, size, _) in &ks {
        plan.push((&c.base, k, size));
        plan.extend(c.schemes.iter().map(|s| (s, k, size)));
        for (stall, qs) in &c.paged {
            plan.push((stall, k, size));
            plan.extend(qs.iter().map(|q| (q, k, size)));
        }
    }
    let npoints = plan.len();
    let runs = Runs::run(plan, ctx.limits, pb);
    // Without faults: each scheme's performance relative to stall-on-fault, per kernel.
    let mut base_cycles = Vec::new();
    let mut rel: Vec<Vec<f64>> = vec![Vec::new(); SCHEMES.len()];
    let mut csv = String::from("kernel,size,rounds,paging,scheme,cycles,relative,faults,migrations,switched_out\n");
    for &(k, size, rounds) in &ks {
        let b = runs.get(&c.base, k, size)?;
        base_cycles.push(b.cycles);
        let _ = writeln!(csv, "{k},{size},{rounds:.2},off,stall,{},1.0000,0,0,0", b.cycles);
        for (i, sc) in c.schemes.iter().enumerate() {
            let r = runs.get(sc, k, size)?;
            rel[i].push(b.cycles as f64 / r.cycles as f64);
            let _ = writeln!(csv, "{k},{size},{rounds:.2},off,{},{},{:.4},0,0,0", SCHEMES[i].name, r.cycles, rel[i].last().unwrap());
        }
    }
    // Under demand paging, per link.
    let mut paged: Vec<Vec<PagedRow>> = Vec::new();
    for ((stall, qs), (_, link)) in c.paged.iter().zip(LINKS) {
        let mut rows = Vec::new();
        for &(k, size, rounds) in &ks {
            let row = paged_row(&runs, &c.base, stall, qs, k, size)?;
            let r = runs.get(stall, k, size)?;
            let _ = writeln!(csv, "{k},{size},{rounds:.2},{},stall,{},1.0000,{},{},0", link.to_lowercase(), r.cycles, r.vm.faults, r.vm.migrations);
            for (q, (name, x)) in qs.iter().zip(PAGED.iter().zip(&row.speedups)) {
                let r = runs.get(q, k, size)?;
                let _ = writeln!(csv, "{k},{size},{rounds:.2},{},{name},{},{x:.4},{},{},{}", link.to_lowercase(), r.cycles, r.vm.faults, r.vm.migrations, r.sm.switched_out);
            }
            rows.push(row);
        }
        paged.push(rows);
    }
    let names: Vec<String> = ks.iter().map(|k| k.0.to_string()).collect();
    let at = |k: &str| ks.iter().position(|x| x.0 == k);
    let perf = |x: f64| format!("{:.1} %", 100.0 * x);
    let gain = |x: f64| format!("{:+.1} %", 100.0 * (x - 1.0));
    let mut claims = Vec::new();
    let single = |claims: &mut Vec<Claim>, what: String, paper: f64, paper_s: String, ours: f64, ours_s: String, cause: String| {
        let v = ratio_verdict((paper, paper), (ours, ours));
        claims.push(Claim { what, paper: paper_s, ours: ours_s, verdict: v, cause: if v == Verdict::Reproduced { String::new() } else { cause } });
    };
    // (the kernels that lose most under a scheme, and the mean of the others)
    let losers = |col: &[f64]| -> String {
        let mut order: Vec<usize> = (0..col.len()).collect();
        order.sort_by(|&a, &b| col[a].total_cmp(&col[b]));
        let worst: Vec<usize> = order.iter().copied().take(2.min(col.len().saturating_sub(1))).collect();
        let rest: Vec<f64> = (0..col.len()).filter(|i| !worst.contains(i)).map(|i| col[i]).collect();
        format!(
            "{} {} most; {} {}",
            worst.iter().map(|&i| format!("{} ({})", names[i], perf(col[i]))).collect::<Vec<_>>().join(" and "),
            if worst.len() == 1 { "loses" } else { "lose" },
            if rest.len() == 1 { "the other kernel gives".to_string() } else { format!("the other {} kernels' geometric mean is", rest.len()) },
            perf(geomean(&rest))
        )
    };
    for (col, label, paper) in THESIS_SCHEMES {
        let i = scheme_index(col);
        let g = geomean(&rel[i]);
        let mut cause = losers(&rel[i]);
        if let Some((_, h)) = HOLDING.iter().find(|x| x.0 == col) {
            let _ = write!(cause, "; the log that issues unlogged when full (`hold`) gives {}", perf(geomean(&rel[scheme_index(h)])));
        }
        single(&mut claims, format!("Fig. 6.11: {label} without faults, relative to stall-on-fault (geometric mean)"), paper, perf(paper), g, perf(g), cause);
    }
    // The ordering of the five (§6.5.2).
    let means: Vec<f64> = THESIS_SCHEMES.iter().map(|s| geomean(&rel[scheme_index(s.0)])).collect();
    // (the thesis's five in Fig. 6.11's order, both log sizes included)
    let broken: Vec<String> = means.windows(2).zip(THESIS_SCHEMES.windows(2)).filter(|(m, _)| m[0] >= m[1]).map(|(m, s)| format!("{} ({}) is not below {} ({})", s[0].0, perf(m[0]), s[1].0, perf(m[1]))).collect();
    claims.push(Claim {
        what: "§6.5.2: the ordering WD-commit < WD-lastcheck < replay queue < operand log 8 KB < 16 KB".into(),
        paper: "holds".into(),
        ours: if broken.is_empty() { "holds".into() } else { "broken".into() },
        verdict: if broken.is_empty() { Verdict::Reproduced } else { Verdict::NotReproduced },
        cause: broken.join("; "),
    });
    if let Some(l) = at("lbm") {
        let rq = rel[scheme_index("RQ")][l];
        single(&mut claims, "§6.5.2: lbm under the replay queue, without faults".into(), 0.59, "59 % (67 % elsewhere in §6.5.2)".into(), rq, perf(rq), losers(&rel[scheme_index("RQ")]));
        let ol = rel[scheme_index("OL-8KB")][l];
        single(
            &mut claims,
            "§6.5.2: lbm under the operand log 16 KB (our 8 KB), without faults".into(),
            0.96,
            perf(0.96),
            ol,
            perf(ol),
            format!("lbm under the holding 8 KB log: {}", perf(rel[scheme_index("OL-8KB-h")][l])),
        );
    }
    // Thread-block switching on faults (Fig. 6.13): stall-on-fault's cycles over the replay
    // queue's with switching, per kernel; the cause of a miss in the run's own figures.
    let (sw, ideal, local, rq) = (PAGED.iter().position(|p| *p == "switch").unwrap(), PAGED.iter().position(|p| *p == "ideal").unwrap(), PAGED.iter().position(|p| *p == "local").unwrap(), PAGED.iter().position(|p| *p == "RQ").unwrap());
    let switch_cause = |li: usize, k: usize| {
        let r = &paged[li][k];
        format!(
            "{} on {}: {} blocks switched out ({:.1} rounds of blocks, {} faults, handler busy {}); the replay queue alone gives {}, 1-cycle switches {}",
            names[k],
            LINKS[li].1,
            r.switched_out,
            ks[k].2,
            r.faults,
            perf(r.handler),
            gain(r.speedups[rq]),
            gain(r.speedups[ideal])
        )
    };
    for (k, paper) in [("sgemm", 1.136), ("stencil", 1.076), ("histo", 1.099)] {
        if let Some(i) = at(k) {
            let x = paged[0][i].speedups[sw];
            single(&mut claims, format!("Fig. 6.13: {k} with thread-block switching over stall-on-fault, NVLink"), paper, gain(paper), x, gain(x), switch_cause(0, i));
        }
    }
    let col = |li: usize, j: usize| paged[li].iter().map(|r| r.speedups[j]).collect::<Vec<f64>>();
    let g = geomean(&col(0, sw));
    let worst = (0..ks.len()).min_by(|&a, &b| paged[0][a].speedups[sw].total_cmp(&paged[0][b].speedups[sw])).unwrap_or(0);
    single(&mut claims, "Fig. 6.13: thread-block switching over stall-on-fault, NVLink (geometric mean)".into(), 1.0, "unchanged".into(), g, gain(g), switch_cause(0, worst));
    if let Some(i) = at("histo") {
        let x = paged[1][i].speedups[sw];
        single(&mut claims, "Fig. 6.13: histo with thread-block switching over stall-on-fault, PCIe (the largest gain there)".into(), 1.046, gain(1.046), x, gain(x), switch_cause(1, i));
    }
    // What 1-cycle switches add (a bound on both links).
    let adds: Vec<f64> = (0..LINKS.len()).map(|li| geomean(&col(li, ideal)) / geomean(&col(li, sw))).collect();
    let within = adds.iter().all(|&a| a <= LITTLE);
    claims.push(Claim {
        what: "Fig. 6.13: what 1-cycle switches add to switching (geometric mean; NVLink, PCIe)".into(),
        paper: format!("only a little (taken as at most {})", gain(LITTLE)),
        ours: adds.iter().map(|&a| gain(a)).collect::<Vec<_>>().join(", "),
        verdict: if within { Verdict::Reproduced } else { Verdict::NotReproduced },
        cause: if within {
            String::new()
        } else {
            let (li, k) = (0..LINKS.len()).flat_map(|li| (0..ks.len()).map(move |k| (li, k))).max_by(|a, b| (paged[a.0][a.1].speedups[ideal] / paged[a.0][a.1].speedups[sw]).total_cmp(&(paged[b.0][b.1].speedups[ideal] / paged[b.0][b.1].speedups[sw]))).unwrap_or((0, 0));
            format!("most on {} over {}: switching {} and 1-cycle switches {} against stall-on-fault, {} blocks switched out: the switch's context traffic is what costs", names[k], LINKS[li].1, gain(paged[li][k].speedups[sw]), gain(paged[li][k].speedups[ideal]), paged[li][k].switched_out)
        },
    });
    // Local handling (Fig. 6.15): against the host's handling, both with the replay queue.
    for (li, paper) in [(0, 1.04), (1, 1.08)] {
        let per: Vec<f64> = paged[li].iter().map(|r| r.speedups[local] / r.speedups[rq]).collect();
        let g = geomean(&per);
        let mut order: Vec<usize> = (0..per.len()).collect();
        order.sort_by(|&a, &b| per[b].total_cmp(&per[a]));
        let cause = format!(
            "local handling serves faults on pages with no data (output pages) on the GPU, 20 µs each but in parallel; per kernel, most gained first: {}; {} of {} kernels gain less than 1 %",
            order.iter().take(3).map(|&i| format!("{} {}", names[i], gain(per[i]))).collect::<Vec<_>>().join(", "),
            per.iter().filter(|&&x| x < 1.01).count(),
            per.len()
        );
        single(&mut claims, format!("Fig. 6.15: local handling of faults over the host's, {} (geometric mean)", LINKS[li].1), paper, gain(paper), g, gain(g), cause);
    }
    // The tables and plots.
    let mut body = String::from("## Without faults (§6.5.2)\n\nPerformance relative to the stall-on-fault baseline (baseline cycles over the scheme's), every page resident, translation on. `-h`: the operand log's `hold` policy, which issues a memory instruction unlogged when its block's log partition is full, where the default stalls it (docs/faults.md O10).\n\n");
    let _ = write!(body, "| kernel | size | rounds | baseline cycles |");
    for s in SCHEMES {
        let _ = write!(body, " {} |", s.name);
    }
    body += "\n| --- | ---: | ---: | ---: |";
    body += &" ---: |".repeat(SCHEMES.len());
    body += "\n";
    for (i, &(k, size, rounds)) in ks.iter().enumerate() {
        let _ = write!(body, "| {k} | {size} | {rounds:.1} | {} |", base_cycles[i]);
        for col in &rel {
            let _ = write!(body, " {} |", perf(col[i]));
        }
        body += "\n";
    }
    let _ = write!(body, "| geometric mean | | | |");
    for col in &rel {
        let _ = write!(body, " **{}** |", perf(geomean(col)));
    }
    body += "\n";
    let mut files = vec![PathBuf::from("thesis-faults-runs.csv")];
    for (li, (_, link)) in LINKS.iter().enumerate() {
        let _ = writeln!(body, "\n## Under demand paging over {link} (§6.5.3, §6.5.4)\n\nAll data start in host memory; faults migrate {} KB units. Slowdown: stall-on-fault against every page resident; handler: the share of cycles the host's handler was busy; switched out: blocks switched out on faults with switching. The last four columns: stall-on-fault's cycles over the replay queue's, alone, with thread-block switching on faults, with 1-cycle switches, and with local handling of faults on pages with no data.\n", MIGRATION / 1024);
        body += "| kernel | stall cycles | slowdown | faults | migrations | handler | switched out | RQ | switch | ideal | local |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
        for (k, r) in names.iter().zip(&paged[li]) {
            let _ = write!(body, "| {k} | {} | {:.2}× | {} | {} | {} | {} |", r.cycles, r.slowdown, r.faults, r.migrations, perf(r.handler), r.switched_out);
            for x in &r.speedups {
                let _ = write!(body, " {} |", perf(*x));
            }
            body += "\n";
        }
        let _ = write!(body, "| geometric mean | | | | | | |");
        for j in 0..PAGED.len() {
            let _ = write!(body, " **{}** |", perf(geomean(&col(li, j))));
        }
        body += "\n";
        let series: Vec<(String, Vec<f64>)> = PAGED.iter().enumerate().map(|(j, p)| (p.to_string(), col(li, j))).collect();
        let f = format!("paging-{}.svg", link.to_lowercase());
        crate::plot::bars(&ctx.out.join(&f), &format!("Under demand paging over {link}: performance relative to stall-on-fault ({CONFIG})"), "performance relative to stall-on-fault (%)", &names, &series)?;
        files.push(PathBuf::from(f));
    }
    let series: Vec<(String, Vec<f64>)> = SCHEMES.iter().zip(&rel).map(|(s, v)| (s.name.to_string(), v.clone())).collect();
    crate::plot::bars(&ctx.out.join("schemes.svg"), &format!("Preemptible faults without faults: performance relative to stall-on-fault ({CONFIG})"), "performance relative to stall-on-fault (%)", &names, &series)?;
    files.push(PathBuf::from("schemes.svg"));
    let p = ctx.out.join("thesis-faults-runs.csv");
    std::fs::write(&p, &csv).map_err(|e| anyhow!("cannot write {}: {e}", p.display()))?;
    body += "\nNot measured: the thesis's tpacf and mri-gridding (Fig. 6.13's 86 %, a load-imbalance pathology) have no counterpart in the library, nor do the device-`malloc` benchmarks of Fig. 6.14 (Halloc). The runs are those of `mpgpu faults` (docs/results.md, \"Page faults on `thesis16`\").\n";
    let sizing = if ctx.quick {
        QUICK.iter().map(|(k, size)| format!("{k} at size {size}")).collect::<Vec<_>>().join(" and ")
    } else {
        let short: Vec<String> = ks.iter().filter(|k| k.2 < ROUNDS as f64).map(|k| format!("{} {:.1}", k.0, k.2)).collect();
        format!(
            "the {} Parboil-like kernels of the library, each sized for at least {ROUNDS} rounds of blocks (`mpgpu faults --rounds {ROUNDS}`){}",
            ks.len(),
            if short.is_empty() { String::new() } else { format!(", but for those no size of which gives that many: {}", short.join(", ")) }
        )
    };
    let scale = format!(
        "{} ({} SMs, the thesis's Table 6.1 pipeline); {sizing}; each kernel alone, to completion, without faults under the stall-on-fault baseline and {} schemes, and under demand paging over NVLink and PCIe ({} KB units) under stall-on-fault and the replay queue with and without switching and local handling; {npoints} simulations",
        c.base.name,
        c.base.num_sms(),
        SCHEMES.len(),
        MIGRATION / 1024
    );
    Ok(Report { scale, claims, body, files, points: npoints, core_seconds: runs.core_seconds(), verified: true })
}
