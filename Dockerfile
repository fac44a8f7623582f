# soak as a container image: one static binary on an empty base, run as an
# unprivileged user, writing its runs to the /data volume.
#
#   docker build -t wssoak .
#   docker run -d --name soak -v soak-data:/data wssoak \
#     run -profile profiles/binance-24h.yaml -out /data
#
# The binary is built by scripts/build.sh, the same script CI runs natively.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN scripts/build.sh /out/soak \
    && mkdir -p /rootfs/etc/ssl/certs /rootfs/data /rootfs/tmp \
    && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ \
    && echo 'soak:x:10001:10001:soak:/data:/nonexistent' > /rootfs/etc/passwd \
    && echo 'soak:x:10001:' > /rootfs/etc/group \
    && chown 10001:10001 /rootfs/data \
    && chmod 1777 /rootfs/tmp

FROM scratch
COPY --from=build /rootfs/ /
COPY --from=build --chown=10001:10001 /rootfs/data /data
COPY --from=build /out/soak /usr/local/bin/soak
COPY profiles /app/profiles
WORKDIR /app
USER 10001:10001
VOLUME ["/data"]
ENTRYPOINT ["/usr/local/bin/soak"]
CMD ["run", "-out", "/data"]
