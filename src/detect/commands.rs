//! `rdmagen detect --print-commands`: what to run to capture everything detect reads.

use crate::packages::{Family, PackageSet, packages};

/// Shell that prints a node's or pod's GID tables in show_gids' format, for machines
/// without mlnx-tools (show_gids is not packaged by Debian or Ubuntu). Reads sysfs
/// like show_gids does: gids/<i>, gid_attrs/types/<i>, gid_attrs/ndevs/<i>.
const SYSFS_GIDS: &str = r#"for p in /sys/class/infiniband/*/ports/*; do
  d=${p%/ports/*}; d=${d##*/}; n=${p##*/}
  for g in "$p"/gids/*; do
    i=${g##*/}; gid=$(cat "$g" 2>/dev/null) || continue
    case $gid in 0000:0000:0000:0000:0000:0000:0000:0000|fe80:0000:0000:0000:0000:0000:0000:0000) continue;; esac
    ver=$(cat "$p/gid_attrs/types/$i" 2>/dev/null | grep -o '[Vv].*'); dev=$(cat "$p/gid_attrs/ndevs/$i" 2>/dev/null)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$d" "$n" "$i" "$gid" "${ver:-v?}" "${dev:--}"
  done
done"#;

pub fn text() -> String {
    let pkgs = packages(Family::Apt, PackageSet::Seed).join(" ");
    format!(
        "# On a GPU node (as root), or inside a running pod with
#   kubectl exec <pod> -- sh -c '<the same commands>'
# capture everything rdmagen detect reads into one file:
{{
  rdma link show
  ibstat
  ibv_devinfo -v
  echo 'DEV	PORT	INDEX	GID					IPv4  		VER	DEV'
  if command -v show_gids >/dev/null; then show_gids | tail -n +3; else
{sysfs}
  fi
  if command -v ibdev2netdev >/dev/null; then ibdev2netdev; fi
  ls -l /sys/class/infiniband/*/device/physfn
  grep -H . /sys/class/infiniband/*/ports/*/rate
  ofed_info -s
  dpkg -l {pkgs}
  if command -v nvidia-smi >/dev/null; then nvidia-smi; nvidia-smi topo -m; nvidia-smi -L; fi
  lsmod 2>/dev/null || cat /proc/modules
}} > rdma-capture.txt 2>&1
# (`ls -l .../physfn` lists the devices that are SR-IOV VFs; a pod's VFs make the
# pool attachment: sriov. Each port's rate file, like ibstat's Rate and ibv_devinfo
# -v's active_width x active_speed, gives the line rate: network.label, which
# nccl-log judges bandwidth against. nvidia-smi (seed 001's check) shows the driver
# and the GPUs, nvidia-smi topo -m each NIC's nearest GPUs, nvidia-smi -L the GPUs'
# whole names, lsmod whether nvidia_peermem is loaded.)

# Then, on your machine, for a capture taken on a node:
#   rdmagen detect --capture rdma-capture.txt --name <pool-name> [--platform aistudio|cubestudio|cce|aks|oci]
#     [--management-netdev bond0]    the host netdev of the management NIC (default eth0)
#     [--attachment hostNetwork]     pods on the host's network: socketIfname is that netdev
# for one taken inside a pod (kubectl exec):
#   rdmagen detect --in-pod --capture rdma-capture.txt --name <pool-name>
#     --rail-resource nvidia.com/rail{{n}} --rail-network gpu-rail{{n}}   ({{n}}: the rail's number)
# or pass single outputs: --show-gids F --ibstat F --ibv-devinfo F --rdma-link F --ofed-info F --dpkg F
#   --gpu-topology F (nvidia-smi topo -m) --gpu-list F (nvidia-smi -L or nvidia-smi) --lsmod F
",
        sysfs = SYSFS_GIDS
            .lines()
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}
