//! Line rate and what a healthy fabric reaches, with the published figures behind
//! each threshold (`../shared/reference/nccl-logs/README.md` §6, quoted in the
//! README's "Reading NCCL logs" section).

/// NCCL's maintainers: "We usually consider 24GB/s is the peak performance per 200G
/// NIC (12 GB/s for 100G NICs)" (sjeaugey, NVIDIA/nccl-tests#119); "CX-7 NICs at NDR
/// rate (400Gbps) should achieve up to 48-49GB/s per NIC" (NVIDIA/nccl-tests#267);
/// DGX-A100 8x200G IB: 192 GB/s (NVIDIA/nccl#812). About 96% of the line rate.
pub const PEAK_SHARE: f64 = 0.96;

/// Below this share of the line rate the large-message all-reduce bus bandwidth is a
/// finding. Healthy published runs land at 0.80-0.98: 0.80 is 8x400G RoCE at more
/// than two nodes (NVIDIA/nccl#1221), 0.94 Azure ND96asr_v4 (Azure/aks-rdma-infiniband
/// tests/expected-output.md: "< 180 [of 200] => problem"). No GPUDirect RDMA gives
/// about 0.64 (16 of 25 GB/s, sjeaugey, NVIDIA/nccl#412).
pub const PLAUSIBLE_SHARE: f64 = 0.8;

/// Below this share it is almost certainly TCP: NCCL over IPoIB on the same Azure
/// nodes reached 3.15 GB/s of 200 (0.016); GKE's TCP fallback about 4 of 400 GB/s;
/// a misconfigured DGX Spark pair 3 of 25.
pub const SOCKET_SHARE: f64 = 0.1;

/// The most bus bandwidth NCCL's socket transport has been seen to carry, GB/s: a
/// 100G link's full rate. Published socket runs land in single digits (NCCL over IPoIB
/// on Azure HDR nodes 3.15 GB/s, tests/nccl_logs/nccl-tests/02; GKE's TCP fallback
/// about 4; a 2-node V100 sockets run about 1: nccl-bandwidth.md §5), and a socket
/// cannot beat its interface's line rate. On two nodes a tree can double what crosses
/// the network, so the bound doubles there (and where the node count is unknown).
/// Derived: above it the data moved over RDMA (or GPUDirect-TCPX, which a TCP plugin's
/// name or a tcp pool shows).
pub const SOCKET_CEILING_GBPS: f64 = 12.5;

/// The plateau is read from rows at least this large: below it even a healthy fabric
/// has not reached its rate (the Azure run is at 0.51 of line rate at 32 MiB, 0.87 at
/// 512 MiB, 0.94 from 2 GiB).
pub const PLATEAU_MIN_BYTES: u64 = 256 << 20;

/// The same for one ib_write_bw stream: the Azure HDR run is at 0.95 of its 200 Gb/s
/// from 64 KiB.
pub const PERFTEST_MIN_BYTES: u64 = 64 << 10;

/// The plateau is the best of the rows within this factor of the largest size, so a
/// single slow last row (another job's traffic) does not decide it.
pub const PLATEAU_SPAN: u64 = 16;

/// A pool's training-network label, e.g. "RoCE 8*400G", "IB 4*200G", "2x100G",
/// "RoCE 8×400Gbps", "1.6T": its NICs' rates in Gb/s, one entry per NIC. Terms are
/// `COUNT*RATE` (`*`, `x` or `×`) or a bare `RATE`, RATE a number with `G`/`Gb`/`Gbps`
/// or `T`; several terms add up ("2*100G + 1*25G"). None when the label names no rate.
pub fn nics(label: &str) -> Option<Vec<f64>> {
    let mut nics = Vec::new();
    let text = label.replace('×', "*");
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && is_word(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let (first, next) = number(&text, i);
        let mut j = next;
        while j < bytes.len() && bytes[j] == b' ' {
            j += 1;
        }
        let (count, rate_at) = if j < bytes.len() && matches!(bytes[j], b'*' | b'x' | b'X') {
            let mut k = j + 1;
            while k < bytes.len() && bytes[k] == b' ' {
                k += 1;
            }
            if k < bytes.len() && bytes[k].is_ascii_digit() {
                (first, k)
            } else {
                i = next;
                continue;
            }
        } else {
            (1.0, i)
        };
        let (rate, mut after) = number(&text, rate_at);
        while after < bytes.len() && bytes[after] == b' ' {
            after += 1;
        }
        let unit = match bytes.get(after).map(u8::to_ascii_uppercase) {
            Some(b'G') => 1.0,
            Some(b'T') => 1000.0,
            _ => {
                i = after.max(i + 1);
                continue;
            }
        };
        let count = count as usize;
        if count == 0 || count > 1024 || rate <= 0.0 {
            return None;
        }
        nics.extend(std::iter::repeat_n(rate * unit, count));
        i = after + 1;
    }
    (!nics.is_empty()).then_some(nics)
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'_'
}

/// The number starting at `at` (digits and one `.`), and where it ends.
fn number(text: &str, at: usize) -> (f64, usize) {
    let end = text[at..]
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or(text.len(), |n| at + n);
    (text[at..end].parse().unwrap_or(0.0), end)
}

/// GB/s (1e9 bytes/s, the unit nccl-tests reports) of a rate in Gb/s.
pub fn gigabytes(gbps: f64) -> f64 {
    gbps / 8.0
}

/// Round for reports: two decimals.
pub fn round(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn total(label: &str) -> Option<f64> {
        nics(label).map(|n| n.iter().sum())
    }

    #[test]
    fn pool_labels_give_their_line_rate() {
        assert_eq!(total("RoCE 8*400G"), Some(3200.0));
        assert_eq!(total("IB 8*200G"), Some(1600.0));
        assert_eq!(total("RoCE 2*100G"), Some(200.0));
        assert_eq!(total("IB 4*200G"), Some(800.0));
        assert_eq!(total("8x200Gbps"), Some(1600.0));
        assert_eq!(total("RoCE 8 × 400 Gb/s"), Some(3200.0));
        assert_eq!(total("2*100G + 1*25G"), Some(225.0));
        assert_eq!(total("400G"), Some(400.0));
        assert_eq!(total("1.6T"), Some(1600.0));
        assert_eq!(nics("IB 4*200G").unwrap().len(), 4);
    }

    #[test]
    fn labels_without_a_rate_give_none() {
        assert_eq!(total("RoCE"), None);
        assert_eq!(total("mlx5 cluster 7"), None);
        assert_eq!(total(""), None);
        assert_eq!(total("IB 0*200G"), None);
    }
}
