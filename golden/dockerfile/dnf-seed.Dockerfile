# RDMA user space for NCCL over RoCE/InfiniBand (seed set), written by rdmagen.
# libibverbs carries the device providers (libmlx5, ...); weak dependencies are skipped.
# Versions follow the base image's release; pin them with `rdmagen dockerfile --pin FILE`.
# hadolint ignore=DL3041
RUN dnf install -y --setopt=install_weak_deps=False \
      infiniband-diags \
      perftest \
      rdma-core \
      libibumad \
      libibverbs \
      libnl3 \
      librdmacm \
 && dnf clean all
# Fail the build if any of them is not installed.
RUN rpm -q infiniband-diags perftest rdma-core libibumad libibverbs libnl3 librdmacm
