# run: image-check
# expect: at 4
# The image installs only two of the RDMA packages.
FROM ubuntu:22.04
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends libibverbs1 librdmacm1 \
 && rm -rf /var/lib/apt/lists/*
