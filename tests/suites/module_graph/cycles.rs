//! From references to cycles: each reference lifted to the two sibling
//! modules under the lowest common ancestor of its ends (`core::api` naming
//! `holder::peer` is an edge `core → holder`; `holder::server` naming
//! `holder::peer` is `holder::server → holder::peer`), then the strongly
//! connected components of that graph (petgraph's Tarjan).
//!
//! A module naming its own ancestor or descendant makes no sibling edge: a
//! parent declares its children and a child sees its parent, which is how a
//! tree is built, not a circle.

use std::collections::BTreeMap;
use std::fmt::Write;

use petgraph::graphmap::DiGraphMap;

use super::names::Reference;
use super::tree::{display, ModPath};

/// One cycle: its modules and its edges, each with the references that make
/// it.
pub struct Cycle<'a> {
    pub modules: Vec<ModPath>,
    pub edges: BTreeMap<(ModPath, ModPath), Vec<&'a Reference>>,
}

/// The two siblings under the lowest common ancestor of `from` and `to`, or
/// None when one is the other's ancestor.
pub fn lift(from: &[String], to: &[String]) -> Option<(ModPath, ModPath)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common == from.len() || common == to.len() {
        return None;
    }
    Some((from[..=common].to_vec(), to[..=common].to_vec()))
}

/// Every cycle among sibling modules, in a stable order.
pub fn find(references: &[Reference]) -> Vec<Cycle<'_>> {
    let lifted: Vec<(ModPath, ModPath, &Reference)> = references
        .iter()
        .filter_map(|r| lift(&r.from, &r.to).map(|(a, b)| (a, b, r)))
        .collect();
    let mut graph = DiGraphMap::<&ModPath, ()>::new();
    for (a, b, _) in &lifted {
        graph.add_edge(a, b, ());
    }
    let mut cycles: Vec<Cycle> = petgraph::algo::tarjan_scc(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut modules: Vec<ModPath> = component.into_iter().cloned().collect();
            modules.sort();
            let mut edges: BTreeMap<_, Vec<&Reference>> = BTreeMap::new();
            for (a, b, r) in &lifted {
                if modules.contains(a) && modules.contains(b) {
                    edges.entry((a.clone(), b.clone())).or_default().push(*r);
                }
            }
            Cycle { modules, edges }
        })
        .collect();
    cycles.sort_by(|x, y| x.modules.cmp(&y.modules));
    cycles
}

/// The cycles as a report: each edge with the first places that make it.
pub fn report(cycles: &[Cycle], root: &str) -> String {
    let mut out = String::new();
    for cycle in cycles {
        let names: Vec<String> = cycle.modules.iter().map(|m| display(m)).collect();
        let _ = writeln!(out, "cycle: {}", names.join(", "));
        for ((a, b), refs) in &cycle.edges {
            let _ = writeln!(out, "  {} -> {}", display(a), display(b));
            const SHOWN: usize = 3;
            for r in refs.iter().take(SHOWN) {
                let _ = writeln!(
                    out,
                    "      {}/{}:{}: {}",
                    root,
                    r.file.display(),
                    r.line,
                    r.written
                );
            }
            if refs.len() > SHOWN {
                let _ = writeln!(out, "      ... and {} more", refs.len() - SHOWN);
            }
        }
    }
    out
}
