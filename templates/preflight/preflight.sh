#!/bin/sh
# rdmagen preflight: check, inside the training container, what NCCL needs from the
# pod to use RDMA, then exec the training command. Without it a pod that cannot use
# its RDMA device trains over TCP sockets at a tenth of the speed (or, with NCCL_NET
# pinned, fails at communicator init with a message that names no cause).
#
# Usage: sh preflight.sh COMMAND [ARG...]   (rdmagen writes it before the command)
#
# What rdmagen's plan decided reaches the script as variables (rdmagen render
# --explain prints each with its reason):
#   RDMAGEN_PREFLIGHT_HCAS            the pool's data NICs, `dev` or `dev:port`, space
#                                     separated; empty: any device counts
#   RDMAGEN_PREFLIGHT_HCA_COUNT       devices expected when no names are known (the
#                                     rails' VFs, whose names the host chose)
#   RDMAGEN_PREFLIGHT_LINK_LAYER      InfiniBand or Ethernet (RoCE)
#   RDMAGEN_PREFLIGHT_GID_INDEX       RoCE: the pool's index, or `auto`; `none` on IB
#   RDMAGEN_PREFLIGHT_EXPORT_GID      1: with `auto`, export NCCL_IB_GID_INDEX (NCCL
#                                     before 2.21 does not select a GID itself)
#   RDMAGEN_PREFLIGHT_GPUDIRECT       1: GPUDirect RDMA is expected
#   RDMAGEN_PREFLIGHT_MEMLOCK_MIN_KIB the memlock floor, in KiB
# and NCCL_SOCKET_IFNAME and NCCL_IB_GID_INDEX as NCCL reads them.
#
# Test hooks, for rdmagen's own tests only (a pod never sets them):
#   RDMAGEN_PREFLIGHT_SYSFS, RDMAGEN_PREFLIGHT_DEV, RDMAGEN_PREFLIGHT_PROC stand for
#   /sys, /dev and /proc; RDMAGEN_PREFLIGHT_MEMLOCK stands for `ulimit -l`'s answer.
#
# Exit codes (each failure prints one line starting `rdmagen preflight: FAIL`):
#    0  all checks passed; the command was exec'd (its own code is then the pod's)
#    2  usage: no command to run
#   10  no /dev/infiniband/uverbs*: no RDMA device was given to the container
#   11  an HCA the pool names (or the number of rail devices) is not in the pod
#   12  an HCA has no ACTIVE port of the pool's link layer
#   13  RoCE: the GID index the pool names is not RoCE v2 on an IPv4 address of the pod
#   14  RoCE, gidIndex auto: no GID index is RoCE v2 on an IPv4 address of the pod
#   15  memlock (ulimit -l) below the floor, without CAP_IPC_LOCK to go past it
#   16  GPUDirect RDMA expected: neither nvidia_peermem loaded nor dma-buf usable
#   17  NCCL_SOCKET_IFNAME matches no interface that is up
#
# POSIX sh only (dash, busybox): no arrays, no ${x:i:n}, no `local`. Files are read
# with the `read` builtin, so the checks fork almost nothing and take milliseconds.
set -u

say() { printf 'rdmagen preflight: %s\n' "$*" >&2; }
fail() {
  code=$1
  shift
  say "FAIL: $*"
  exit "$code"
}

if [ $# -eq 0 ]; then
  say "usage: sh preflight.sh COMMAND [ARG...]: nothing to run after the checks"
  exit 2
fi

sys=${RDMAGEN_PREFLIGHT_SYSFS:-/sys}
dev=${RDMAGEN_PREFLIGHT_DEV:-/dev}
proc=${RDMAGEN_PREFLIGHT_PROC:-/proc}
ib=$sys/class/infiniband
hcas=${RDMAGEN_PREFLIGHT_HCAS:-}
want_count=${RDMAGEN_PREFLIGHT_HCA_COUNT:-1}
link=${RDMAGEN_PREFLIGHT_LINK_LAYER:-}
gid=${RDMAGEN_PREFLIGHT_GID_INDEX:-none}
export_gid=${RDMAGEN_PREFLIGHT_EXPORT_GID:-0}
gdr=${RDMAGEN_PREFLIGHT_GPUDIRECT:-0}
floor=${RDMAGEN_PREFLIGHT_MEMLOCK_MIN_KIB:-1048576}

# The first line of file $1 in $v; empty when it cannot be read.
get() {
  v=
  if [ -r "$1" ]; then
    IFS= read -r v <"$1" 2>/dev/null || :
  fi
}

# 1. The verbs device nodes: libibverbs opens /dev/infiniband/uverbsN.
uverbs=
for f in "$dev"/infiniband/uverbs*; do
  if [ -e "$f" ]; then
    uverbs=${f##*/}
    break
  fi
done
[ -n "$uverbs" ] || fail 10 "no /dev/infiniband/uverbs* in this container: the pod holds no RDMA device (its RDMA resource was not granted, or the node's device plugin gives none), so NCCL cannot use the fabric"

present=
for d in "$ib"/*; do
  [ -d "$d" ] && present="$present ${d##*/}"
done
present=${present# }

# The first port of device $1 (only port $2 when not empty) that is ACTIVE with the
# pool's link layer, in $port; every port's state in $seen.
active_port() {
  port=
  seen=
  for p in "$ib/$1"/ports/*; do
    [ -d "$p" ] || continue
    n=${p##*/}
    [ -z "$2" ] || [ "$n" = "$2" ] || continue
    get "$p/state"
    state=$v
    get "$p/link_layer"
    seen="$seen port $n: ${state:-no state} ${v:-no link layer};"
    case $state in
      *ACTIVE*) ;;
      *) continue ;;
    esac
    [ -z "$link" ] || [ "$v" = "$link" ] || continue
    port=$n
    return 0
  done
  seen=${seen%;}
  return 1
}

# 2. The pool's HCAs, each with an ACTIVE port of its link layer: `dev:port` pairs.
checked=
if [ -n "$hcas" ]; then
  for h in $hcas; do
    name=${h%%:*}
    only=
    [ "$name" = "$h" ] || only=${h#*:}
    [ -d "$ib/$name" ] || fail 11 "HCA $name, one of the pool's, is not in this container (/sys/class/infiniband has: ${present:-nothing}): the node's NICs differ from the pool's network.hcas, or the device plugin gave other devices"
    active_port "$name" "$only" || fail 12 "HCA $name has no ACTIVE ${link:-RDMA} port (${seen# }): the link is down or the port runs another link layer"
    checked="$checked $name:$port"
  done
else
  found=0
  for name in $present; do
    if active_port "$name" ""; then
      checked="$checked $name:$port"
      found=$((found + 1))
    fi
  done
  count=0
  for name in $present; do count=$((count + 1)); done
  [ "$count" -ge "$want_count" ] || fail 11 "$count RDMA device(s) in this container (/sys/class/infiniband has: ${present:-nothing}), where the pod's rails give $want_count: a VF was not attached"
  [ "$found" -ge "$want_count" ] || fail 12 "$found of the container's RDMA devices ($present) have an ACTIVE ${link:-RDMA} port, where $want_count should: the link is down or the port runs another link layer"
fi
checked=${checked# }

# 3. RoCE: the GID NCCL addresses the peer with must be RoCE v2 on an IPv4 address of
# this pod; on a GID table shared by pods (macvlan over one PF) the index differs per
# pod (nccl#718). The pod's addresses are its local IPv4 routes (/proc/net/fib_trie):
# that also covers a Multus interface (net1) and mpirun's ranks, which are started by
# sshd and do not see the container's environment (so no POD_IP from the downward API).
gid_note=
if [ "$link" = Ethernet ] && [ "$gid" != none ]; then
  # The sysfs form of the IPv4-mapped GID of address a.b.c.d (given as a b c d).
  gid_of() { printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$1" "$2" "$3" "$4"; }
  addrs=
  gids=
  last=
  if [ -r "$proc/net/fib_trie" ]; then
    while IFS= read -r line; do
      case $line in
        *'|-- '*) last=${line##*|-- } ;;
        *'/32 host LOCAL'*)
          case $last in
            127.* | '') ;;
            *)
              case " $addrs " in
                *" $last "*) ;;
                *)
                  addrs="$addrs $last"
                  old=$IFS
                  IFS=.
                  # shellcheck disable=SC2086 # split a.b.c.d into gid_of's arguments
                  gids="$gids $(gid_of $last)"
                  IFS=$old
                  ;;
              esac
              ;;
          esac
          ;;
      esac
    done <"$proc/net/fib_trie"
  fi
  addrs=${addrs# }
  # Whether index $2 of port directory $1 is RoCE v2 on one of the pod's addresses;
  # what it is instead in $why.
  gid_ok() {
    get "$1/gid_attrs/types/$2"
    if [ "$v" != "RoCE v2" ]; then
      why="type ${v:-unknown}, not RoCE v2"
      return 1
    fi
    get "$1/gids/$2"
    case " $gids " in
      *" $v "*) return 0 ;;
    esac
    why="address $v, not an IPv4 address of this pod (${addrs:-none found})"
    return 1
  }
  # The lowest index of port directory $1 that passes gid_ok, in $index; how many
  # RoCE v2 entries the table has in $v2.
  find_gid() {
    index=
    v2=0
    for t in "$1"/gid_attrs/types/*; do
      i=${t##*/}
      get "$t"
      [ "$v" = "RoCE v2" ] && v2=$((v2 + 1))
      if gid_ok "$1" "$i" && { [ -z "$index" ] || [ "$i" -lt "$index" ]; }; then
        index=$i
      fi
    done
    [ -n "$index" ]
  }
  fixed=
  case $gid in
    auto) fixed=${NCCL_IB_GID_INDEX:-} ;;
    *) fixed=$gid ;;
  esac
  [ "$fixed" != -1 ] || fixed=
  if [ -n "$fixed" ]; then
    for c in $checked; do
      dir=$ib/${c%:*}/ports/${c#*:}
      if ! gid_ok "$dir" "$fixed"; then
        wrong=$why
        hint=
        find_gid "$dir" && hint="; this pod's address is at index $index"
        fail 13 "GID index $fixed of ${c%:*} port ${c#*:}: $wrong$hint"
      fi
    done
    gid_note="GID index $fixed RoCE v2 on $addrs"
  else
    for c in $checked; do
      dir=$ib/${c%:*}/ports/${c#*:}
      if ! find_gid "$dir"; then
        if [ "$v2" -eq 0 ]; then
          fail 14 "no RoCE v2 GID on ${c%:*} port ${c#*:} (RoCE v1 only): NCCL needs RoCE v2 across subnets; the node's RoCE mode is wrong"
        fi
        fail 14 "no RoCE v2 GID of ${c%:*} port ${c#*:} holds an IPv4 address of this pod (${addrs:-none found}): the pod's interface on this NIC has no IPv4 address, or the table is another pod's"
      fi
      if [ -z "$fixed" ]; then
        fixed=$index
      elif [ "$index" != "$fixed" ]; then
        fail 14 "the pod's RoCE v2 GID is at index $fixed on the first HCA but $index on ${c%:*} port ${c#*:}: NCCL_IB_GID_INDEX is one index for every HCA"
      fi
    done
    if [ "$export_gid" = 1 ]; then
      NCCL_IB_GID_INDEX=$fixed
      export NCCL_IB_GID_INDEX
      gid_note="GID index $fixed RoCE v2 on $addrs (exported NCCL_IB_GID_INDEX)"
    else
      gid_note="GID index $fixed RoCE v2 on $addrs (NCCL selects it)"
    fi
  fi
fi

# 4. Memory NCCL registers with the NIC is pinned, up to RLIMIT_MEMLOCK unless the
# process holds CAP_IPC_LOCK (the kernel's ib_umem_get skips the limit then).
memlock=${RDMAGEN_PREFLIGHT_MEMLOCK:-$(ulimit -l)}
memlock_note="memlock $memlock"
case $memlock in
  unlimited) ;;
  *)
    capeff=
    if [ -r "$proc/self/status" ]; then
      while read -r key value; do
        [ "$key" != CapEff: ] || capeff=$value
      done <"$proc/self/status"
    fi
    ipc_lock=0
    case $capeff in
      ????*) ipc_lock=$(((0x${capeff#"${capeff%????}"} >> 14) & 1)) ;;
    esac
    if [ "$ipc_lock" = 1 ]; then
      memlock_note="memlock $memlock KiB with CAP_IPC_LOCK"
    elif [ "$memlock" -lt "$floor" ] 2>/dev/null; then
      if [ "$memlock" = 8192 ]; then
        fail 15 "memlock (ulimit -l) is 8192 KiB (8 MiB), the container runtime's LimitMEMLOCK default, and the process lacks CAP_IPC_LOCK (non-root users never get it): NCCL cannot pin its buffers; set LimitMEMLOCK=infinity for containerd (a systemd drop-in) on the node, or run as root with IPC_LOCK"
      fi
      fail 15 "memlock (ulimit -l) is $memlock KiB, below $floor KiB, and the process lacks CAP_IPC_LOCK: NCCL cannot pin its buffers; raise the container runtime's LimitMEMLOCK on the node"
    else
      memlock_note="memlock $memlock KiB"
    fi
    ;;
esac

# 5. GPUDirect RDMA: the NIC reads GPU memory through nvidia_peermem, or through
# dma-buf (NVIDIA's open kernel module on Linux 5.12 or later); without either NCCL
# stages every transfer through host memory and says so only in its INFO log.
gdr_note=
if [ "$gdr" = 1 ]; then
  if [ -d "$sys/module/nvidia_peermem" ]; then
    gdr_note=nvidia_peermem
  elif [ -r "$proc/modules" ]; then
    while read -r mod rest; do
      if [ "$mod" = nvidia_peermem ]; then
        gdr_note=nvidia_peermem
        break
      fi
    done <"$proc/modules"
  fi
  if [ -z "$gdr_note" ]; then
    get "$proc/sys/kernel/osrelease"
    kernel=$v
    major=${kernel%%.*}
    minor=${kernel#*.}
    minor=${minor%%[!0-9]*}
    get "$proc/driver/nvidia/version"
    case $v in
      *"Open Kernel Module"*)
        if [ "${major:-0}" -gt 5 ] 2>/dev/null || { [ "${major:-0}" -eq 5 ] && [ "${minor:-0}" -ge 12 ]; } 2>/dev/null; then
          gdr_note=dma-buf
        fi
        ;;
    esac
  fi
  [ -n "$gdr_note" ] || fail 16 "GPUDirect RDMA is expected, but nvidia_peermem is not loaded (/proc/modules) and dma-buf is not usable (kernel ${kernel:-unknown}; it needs NVIDIA's open kernel module and Linux 5.12 or later): NCCL would copy every transfer through host memory; load nvidia_peermem on the node (the GPU Operator's driver.rdma.enabled)"
  gdr_note=", GPUDirect $gdr_note"
fi

# 6. NCCL_SOCKET_IFNAME: NCCL bootstraps (and, without RDMA, moves data) over the
# interfaces it names: a comma list of prefixes, `=` for exact names, `^` to exclude.
# Up, or `unknown` (some virtual interfaces never report a state), is usable.
if_note=
names=${NCCL_SOCKET_IFNAME:-}
if [ -n "$names" ]; then
  exclude=
  exact=
  case $names in
    ^*)
      exclude=1
      names=${names#^}
      ;;
  esac
  case $names in
    =*)
      exact=1
      names=${names#=}
      ;;
  esac
  up=
  others=
  for path in "$sys"/class/net/*; do
    [ -e "$path" ] || continue
    name=${path##*/}
    hit=
    old=$IFS
    IFS=,
    for want in $names; do
      [ -n "$want" ] || continue
      if [ -n "$exact" ]; then
        [ "$name" != "$want" ] || hit=1
      else
        case $name in
          "$want"*) hit=1 ;;
        esac
      fi
    done
    IFS=$old
    if [ -n "$exclude" ]; then
      [ -z "$hit" ] && [ "$name" != lo ] || continue
    else
      [ -n "$hit" ] || continue
    fi
    get "$path/operstate"
    case $v in
      up | unknown)
        up=$name
        break
        ;;
    esac
    others="$others $name ${v:-no state};"
  done
  others=${others%;}
  others=${others# }
  [ -n "$up" ] || fail 17 "NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME matches no interface that is up (${others:-no interface matches}): NCCL could not bootstrap; name the pod's interface (eth0 on the cluster network)"
  if_note=", NCCL_SOCKET_IFNAME $up up"
fi

say "ok: $uverbs, $checked ACTIVE ${link:-RDMA}${gid_note:+, $gid_note}, $memlock_note$gdr_note$if_note; exec $1"
exec "$@"
