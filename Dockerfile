# Builds the same single binary as `npm run build` and runs it as an unprivileged user, data in the /data volume.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Only this image's own Bun runtime is needed: the other platforms' (npm run release) are not fetched.
COPY scripts/fetch-runtimes.mjs scripts/
RUN TIMBRE_SKIP_RELEASE_RUNTIMES=1 npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin timbre \
 && mkdir -p /data && chown timbre:timbre /data && chmod 0700 /data
COPY --from=build /src/dist/timbre /usr/local/bin/timbre
USER timbre
ENV TIMBRE_HOST=0.0.0.0 \
    TIMBRE_PORT=8080 \
    TIMBRE_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
# The probe is the binary itself (no curl in this image): exit 0 when /ready answers 200 on the port set above.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD ["/usr/local/bin/timbre", "health", "--ready"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/timbre"]
CMD ["serve"]
