#!/usr/bin/env bash
# rdmagen smoke-test: RDMA write bandwidth between two pods with perftest's ib_write_bw.
#
# Runs in pods shaped exactly like a real job on the pool (`rdmagen smoke-test
# --tool perftest` renders them), one process per pod. Node rank 0 (the Master, or
# Trainer v2's node 0) runs the server; node rank 1 connects to it at the address
# the training operator gives (MASTER_ADDR from training-operator v1, PET_MASTER_ADDR
# from Trainer v2's torch plugin). Other ranks take no part. The server gives up
# after --wait seconds without a client, the client after --wait seconds of retries.
#
# Both sides use one device and port (--device DEV[:PORT]; `auto`: the first entry
# of NCCL_IB_HCA, else the first RDMA device that is not --management-nic) and, on
# RoCE, one GID index (--gid-index N; `auto`: NCCL_IB_GID_INDEX when the platform
# sets it, else the lowest RoCE v2 GID with an IPv4 address in sysfs, what NCCL's
# own selection prefers; `none` on InfiniBand, which addresses ports by LID). Each
# choice is printed with where it came from, then ib_write_bw's own banner and
# table: all message sizes from 2 bytes to 8 MiB (-a), in Gb/s (--report_gbits,
# 1e9 bits per second); the large sizes are the plateau to hold against line rate.
set -u

device=auto
gid=none
management=mlx5_0
tcp_port=18515
qps=2
iters=5000
wait_secs=600

say() { echo "rdmagen smoke-test: $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --gid-index) gid=$2; shift 2 ;;
    --management-nic) management=$2; shift 2 ;;
    --tcp-port) tcp_port=$2; shift 2 ;;
    --qps) qps=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --wait) wait_secs=$2; shift 2 ;;
    *) say "unknown argument: $1"; exit 2 ;;
  esac
done

rank=${PET_NODE_RANK:-${RANK:-}}
master=${PET_MASTER_ADDR:-${MASTER_ADDR:-}}
if [ -z "$rank" ]; then
  say "neither PET_NODE_RANK (Trainer v2) nor RANK (training-operator v1) is set: not started by a training operator?"
  exit 2
fi
if [ "$rank" != 0 ] && [ "$rank" != 1 ]; then
  say "node rank $rank: ib_write_bw runs between node ranks 0 and 1 only; nothing to do"
  exit 0
fi
if ! command -v ib_write_bw >/dev/null 2>&1; then
  say "ib_write_bw is not in this image: install perftest (rdmagen dockerfile --set diagnostics)"
  exit 2
fi

# RDMAGEN_SMOKE_SYSFS: another sysfs tree, for rdmagen's tests of this script.
sysfs=${RDMAGEN_SMOKE_SYSFS:-/sys/class/infiniband}
devices=$(ls "$sysfs" 2>/dev/null | tr '\n' ' ')
devices=${devices% }
if [ -z "$devices" ]; then
  say "no RDMA device in this pod ($sysfs is empty): no RDMA resource granted, or no device plugin on the node"
  exit 1
fi
if [ "$device" = auto ]; then
  hca=${NCCL_IB_HCA:-}
  hca=${hca#=}
  case "$hca" in
    ''|^*)
      device=
      for d in $devices; do
        if [ "$d" != "$management" ]; then device=$d; break; fi
      done
      say "device $device: the first RDMA device in this pod that is not the management NIC $management (devices: $devices)"
      ;;
    *)
      device=${hca%%,*}
      say "device $device: the first entry of NCCL_IB_HCA=${NCCL_IB_HCA}"
      ;;
  esac
else
  say "device $device: the pool's first data NIC"
fi
port=1
case "$device" in
  *:*) port=${device#*:}; device=${device%%:*} ;;
esac
if [ -z "$device" ] || [ ! -d "$sysfs/$device/ports/$port" ]; then
  say "no port $port of device '$device' in this pod (devices: $devices)"
  exit 1
fi
link=$(cat "$sysfs/$device/ports/$port/link_layer" 2>/dev/null)
rate=$(cat "$sysfs/$device/ports/$port/rate" 2>/dev/null)
state=$(cat "$sysfs/$device/ports/$port/state" 2>/dev/null)
say "$device port $port: link layer ${link:-unknown}, ${rate:-rate unknown}, ${state:-state unknown}"

# The lowest GID index of the port whose type is RoCE v2 and whose address is an
# IPv4-mapped IPv6 address (::ffff:a.b.c.d).
roce_v2_ipv4() {
  local dir=$sysfs/$device/ports/$port
  local i type address
  for i in $(ls "$dir/gid_attrs/types" 2>/dev/null | sort -n); do
    type=$(cat "$dir/gid_attrs/types/$i" 2>/dev/null) || continue
    [ "$type" = "RoCE v2" ] || continue
    address=$(cat "$dir/gids/$i" 2>/dev/null) || continue
    case "$address" in
      0000:0000:0000:0000:0000:ffff:*)
        local high=${address:30:4} low=${address:35:4}
        printf '%s ::ffff:%d.%d.%d.%d\n' "$i" "0x${high:0:2}" "0x${high:2:2}" "0x${low:0:2}" "0x${low:2:2}"
        return 0
        ;;
    esac
  done
  return 1
}

gid_flags=()
case "$gid" in
  none) say "no GID index: InfiniBand addresses ports by LID" ;;
  auto)
    if [ -n "${NCCL_IB_GID_INDEX:-}" ] && [ "${NCCL_IB_GID_INDEX}" -ge 0 ] 2>/dev/null; then
      gid=$NCCL_IB_GID_INDEX
      say "GID index $gid: NCCL_IB_GID_INDEX in the pod's environment (the platform presets it)"
    elif found=$(roce_v2_ipv4); then
      gid=${found%% *}
      say "GID index $gid (${found#* }): the lowest RoCE v2 GID with an IPv4 address in sysfs, found at run time because the pool's gidIndex is auto"
    else
      say "no RoCE v2 GID with an IPv4 address on $device port $port (see $sysfs/$device/ports/$port/gid_attrs/types): the pod's interface on this NIC has no IPv4 address?"
      exit 1
    fi
    gid_flags=(-x "$gid")
    ;;
  *)
    say "GID index $gid: the pool's gidIndex"
    gid_flags=(-x "$gid")
    ;;
esac

flags=(-d "$device" -i "$port" ${gid_flags[@]+"${gid_flags[@]}"} -a -F --report_gbits -q "$qps" -n "$iters" -p "$tcp_port")
timeout_cmd=()
if command -v timeout >/dev/null 2>&1; then
  timeout_cmd=(timeout "$wait_secs")
fi

if [ "$rank" = 0 ]; then
  say "server on $(hostname): ib_write_bw ${flags[*]}"
  ${timeout_cmd[@]+"${timeout_cmd[@]}"} ib_write_bw "${flags[@]}"
  status=$?
  [ "$status" = 124 ] && say "no client connected within $wait_secs seconds"
  exit "$status"
fi

if [ -z "$master" ]; then
  say "neither PET_MASTER_ADDR (Trainer v2) nor MASTER_ADDR (training-operator v1) is set: the server's address is unknown"
  exit 2
fi
say "client on $(hostname): ib_write_bw ${flags[*]} $master"
deadline=$((SECONDS + wait_secs))
while :; do
  ib_write_bw "${flags[@]}" "$master"
  status=$?
  [ "$status" = 0 ] && exit 0
  if [ "$SECONDS" -ge "$deadline" ]; then
    say "ib_write_bw to $master failed (exit $status) for $wait_secs seconds; giving up"
    exit "$status"
  fi
  say "ib_write_bw to $master failed (exit $status): the server may not be up yet; retrying in 5 seconds"
  sleep 5
done
