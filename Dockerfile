# syntax=docker/dockerfile:1
# rdmagen in an image of its own: one static binary and nothing else. rdmagen works
# offline, so the image needs no CA certificates, shell or package manager.
#   docker build -t rdmagen .
#   docker run --rm -v "$PWD:/work" -w /work rdmagen lint deploy/

# Alpine's Rust targets musl, which links statically by default.
FROM rust:1.89-alpine3.22 AS build
# The C compiler is in the image; mimalloc's C code needs musl's headers too. musl-dev
# comes from the Alpine release the rust tag pins; a pinned apk revision would break
# the build when Alpine publishes the next one and drops it from the index.
# hadolint ignore=DL3018
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
    && cp target/release/rdmagen /rdmagen

FROM scratch
COPY --from=build /rdmagen /rdmagen
# nobody: the tool reads and writes only the files it is given.
USER 65534:65534
ENTRYPOINT ["/rdmagen"]
