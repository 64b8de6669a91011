# run: image-check
# The NCCL preset is left to the job (rdmagen writes it from the pool).
FROM nvcr.io/nvidia/pytorch:24.10-py3

# RDMA user space for NCCL over RoCE/InfiniBand (seed set), written by rdmagen.
# ibverbs-providers is listed explicitly: --no-install-recommends would drop it.
# Versions follow the base image's release; pin them with `rdmagen dockerfile --pin FILE`.
# hadolint ignore=DL3008
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      infiniband-diags \
      perftest \
      ibverbs-providers \
      libibumad3 \
      libibverbs1 \
      libnl-3-200 \
      libnl-route-3-200 \
      librdmacm1 \
 && rm -rf /var/lib/apt/lists/*
# Fail the build if any of them is not installed (seed 000's dpkg -l check, made strict).
RUN for p in infiniband-diags perftest ibverbs-providers libibumad3 libibverbs1 libnl-3-200 libnl-route-3-200 librdmacm1; do \
      [ "$(dpkg-query -W -f="\${Status}" "$p" 2>/dev/null)" = "install ok installed" ] \
        || { echo "missing RDMA package: $p" >&2; exit 1; }; \
    done
