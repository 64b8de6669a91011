# debian:bookworm-slim with the RDMA user space, written by rdmagen.
FROM debian:bookworm-slim

# RDMA user space for NCCL over RoCE/InfiniBand (runtime set), written by rdmagen.
# ibverbs-providers is listed explicitly: --no-install-recommends would drop it.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ibverbs-providers=44.0-2 \
      libibverbs1=44.0-2 \
      librdmacm1=44.0-2 \
      libibumad3=44.0-2 \
      libnl-3-200=3.7.0-0.2+b1 \
      libnl-route-3-200=3.7.0-0.2+b1 \
 && rm -rf /var/lib/apt/lists/*
# Fail the build if any of them is not installed (seed 000's dpkg -l check, made strict).
RUN for p in ibverbs-providers libibverbs1 librdmacm1 libibumad3 libnl-3-200 libnl-route-3-200; do \
      [ "$(dpkg-query -W -f="\${Status}" "$p" 2>/dev/null)" = "install ok installed" ] \
        || { echo "missing RDMA package: $p" >&2; exit 1; }; \
    done
