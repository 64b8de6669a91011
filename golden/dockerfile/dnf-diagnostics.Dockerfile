# RDMA user space for NCCL over RoCE/InfiniBand (diagnostics set), written by rdmagen.
# libibverbs carries the device providers (libmlx5, ...); weak dependencies are skipped.
# Versions follow the base image's release; pin them with `rdmagen dockerfile --pin FILE`.
# hadolint ignore=DL3041
RUN dnf install -y --setopt=install_weak_deps=False \
      rdma-core \
      libibverbs \
      librdmacm \
      libibumad \
      libnl3 \
      libibverbs-utils \
      librdmacm-utils \
      infiniband-diags \
      perftest \
 && dnf clean all
# Fail the build if any of them is not installed.
RUN rpm -q rdma-core libibverbs librdmacm libibumad libnl3 libibverbs-utils librdmacm-utils infiniband-diags perftest
