//! From what each pod's process believes to the process groups that really form.

use std::collections::BTreeMap;

use crate::launcher::{Backend, Launch};

/// One pod's part in the job.
pub struct Member<'a> {
    /// The pod's name, which is also its Service's (`<job>-master-0`, ...).
    pub pod: &'a str,
    pub launch: Launch,
    pub gpus: u32,
}

/// A process group that forms: every process in it agrees on its size and endpoint,
/// and its global ranks are exactly 0..size-1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct World {
    /// `host:port` as the members wrote it.
    pub endpoint: String,
    pub size: u32,
    /// (pod, its global ranks), in pod order.
    pub pods: Vec<(String, Vec<u32>)>,
}

/// The groups the members form, or, for each group that cannot form, why.
pub fn form(members: &[Member<'_>]) -> (Vec<World>, Vec<String>) {
    // Members meet at the host their endpoint names: a loopback address is the pod
    // itself, a Service name the pod behind it.
    let mut groups: BTreeMap<(String, String), Vec<&Member<'_>>> = BTreeMap::new();
    let mut failures = Vec::new();
    for m in members {
        let endpoint = match &m.launch {
            Launch::Agent { endpoint, .. } | Launch::Process { endpoint, .. } => endpoint,
        };
        let (host, port) = endpoint.rsplit_once(':').unwrap_or((endpoint, ""));
        let host = match host {
            "127.0.0.1" | "localhost" | "::1" | "[::1]" | "" => m.pod.to_owned(),
            h if members.iter().any(|o| o.pod == h) => h.to_owned(),
            h => {
                failures.push(format!(
                    "{}: the rendezvous host {h} is no pod of this job",
                    m.pod
                ));
                continue;
            }
        };
        // `localhost:0` is a free port of each pod: never shared.
        let port = if port == "0" { m.pod } else { port };
        groups.entry((host, port.to_owned())).or_default().push(m);
    }
    let mut worlds = Vec::new();
    for ((host, _), group) in groups {
        match form_one(&host, &group) {
            Ok(w) => worlds.push(w),
            Err(e) => failures.push(e),
        }
    }
    (worlds, failures)
}

fn form_one(host: &str, group: &[&Member<'_>]) -> Result<World, String> {
    let pods: Vec<&str> = group.iter().map(|m| m.pod).collect();
    let endpoint = match &group[0].launch {
        Launch::Agent { endpoint, .. } | Launch::Process { endpoint, .. } => endpoint.clone(),
    };
    let agents: Vec<(&Member<'_>, u32, Option<u32>, u32, Backend)> = group
        .iter()
        .filter_map(|m| match m.launch {
            Launch::Agent {
                nnodes,
                node_rank,
                nproc,
                backend,
                ..
            } => Some((*m, nnodes, node_rank, nproc, backend)),
            Launch::Process { .. } => None,
        })
        .collect();
    if !agents.is_empty() && agents.len() != group.len() {
        return Err(format!(
            "at {endpoint}: torchrun agents and plain processes meet ({})",
            pods.join(", ")
        ));
    }
    if agents.is_empty() {
        return processes(host, &endpoint, group);
    }
    let nnodes: Vec<u32> = agents.iter().map(|a| a.1).collect();
    if nnodes.iter().any(|n| *n != nnodes[0]) {
        return Err(format!(
            "at {endpoint}: the agents disagree on nnodes ({nnodes:?} for {})",
            pods.join(", ")
        ));
    }
    let nnodes = nnodes[0];
    if agents.len() as u32 != nnodes {
        return Err(format!(
            "at {endpoint}: the rendezvous waits for {nnodes} node(s) and {} pod(s) join ({}); it never completes",
            agents.len(),
            pods.join(", ")
        ));
    }
    // Node ranks: given (static), or handed out by the rendezvous (c10d), here in pod order.
    let mut by_rank: BTreeMap<u32, (&Member<'_>, u32)> = BTreeMap::new();
    for (i, (m, _, node_rank, nproc, backend)) in agents.iter().enumerate() {
        let rank = match (backend, node_rank) {
            (Backend::Static, Some(r)) => *r,
            _ => i as u32,
        };
        if let Some((other, _)) = by_rank.insert(rank, (m, *nproc)) {
            return Err(format!(
                "at {endpoint}: {} and {} both have node rank {rank}",
                other.pod, m.pod
            ));
        }
    }
    if by_rank.keys().copied().ne(0..nnodes) {
        return Err(format!(
            "at {endpoint}: node ranks {:?} are not 0..{}",
            by_rank.keys().collect::<Vec<_>>(),
            nnodes
        ));
    }
    // The static rendezvous's store listens on node rank 0 (torch
    // elastic/rendezvous/static_tcp_rendezvous.py, next_rendezvous: `is_master =
    // self.rank == 0`; its world size is max_nodes): it must run on the host the others
    // dial.
    let static_backend = agents.iter().all(|a| a.4 == Backend::Static);
    if static_backend && by_rank[&0].0.pod != host {
        return Err(format!(
            "at {endpoint}: node rank 0 runs on {}, not on {host}; nobody hosts the store there",
            by_rank[&0].0.pod
        ));
    }
    // Global ranks: each agent's workers follow those of the lower node ranks (the
    // elastic agent's rank assignment: base = sum of lower local world sizes).
    let mut next = 0;
    let mut ranks: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (m, nproc) in by_rank.values() {
        ranks.insert(m.pod, (next..next + nproc).collect());
        next += nproc;
    }
    Ok(World {
        endpoint,
        size: next,
        pods: group
            .iter()
            .map(|m| (m.pod.to_owned(), ranks[m.pod].clone()))
            .collect(),
    })
}

/// Plain processes (init_process_group with env://): each brings its RANK and
/// WORLD_SIZE; rank 0 hosts the store (TCPStore is_master = rank == 0).
fn processes(host: &str, endpoint: &str, group: &[&Member<'_>]) -> Result<World, String> {
    let mut sizes = Vec::new();
    let mut ranks: BTreeMap<u32, &str> = BTreeMap::new();
    for m in group {
        let Launch::Process {
            world_size, rank, ..
        } = m.launch
        else {
            continue;
        };
        sizes.push(world_size);
        if let Some(other) = ranks.insert(rank, m.pod) {
            return Err(format!(
                "at {endpoint}: {other} and {} both have RANK {rank}",
                m.pod
            ));
        }
    }
    if sizes.iter().any(|s| *s != sizes[0]) {
        return Err(format!(
            "at {endpoint}: WORLD_SIZE differs between pods ({sizes:?})"
        ));
    }
    let size = sizes[0];
    if ranks.keys().copied().ne(0..size) {
        return Err(format!(
            "at {endpoint}: WORLD_SIZE is {size} but the processes have RANK {:?}; init_process_group waits forever",
            ranks.keys().collect::<Vec<_>>()
        ));
    }
    if ranks[&0] != host {
        return Err(format!(
            "at {endpoint}: RANK 0 runs on {}, not on {host}",
            ranks[&0]
        ));
    }
    Ok(World {
        endpoint: endpoint.to_owned(),
        size,
        pods: group
            .iter()
            .map(|m| {
                let rank = match m.launch {
                    Launch::Process { rank, .. } => rank,
                    Launch::Agent { .. } => 0,
                };
                (m.pod.to_owned(), vec![rank])
            })
            .collect(),
    })
}
