# syntax=docker/dockerfile:1.4
FROM nvcr.io/nvidia/pytorch:24.01-py3
RUN <<EOF
set -e
apt-get update
apt-get install -y --no-install-recommends \
    libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libibumad3
rm -rf /var/lib/apt/lists/*
EOF
RUN cat <<'NOTE' > /etc/motd
ENV NCCL_IB_HCA=mlx5_9 is not an instruction here
NOTE
RUN <<-"A" bash -e && <<B cat > /tmp/b
	echo tabs stripped
	A
data
B
ENV NCCL_IB_HCA=mlx5
