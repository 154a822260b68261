# syntax=docker/dockerfile:1

# ---- build: install all deps, compile TypeScript to dist/, then drop devDependencies ----
FROM node:24-bookworm-slim AS build
WORKDIR /app

# Dependency layer first so it is cached across source-only changes. `--ignore-scripts`: the
# project's own `prepare` (the console build) needs the sources, which come next.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts

# `npm run build`: TypeScript to dist/, and the operator console to dist/console (Vite).
COPY . .
RUN npm run build \
 && npm prune --omit=dev

# ---- runtime: compiled output + production node_modules only, as the unprivileged user ----
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app

# Local voice transcription (FOGHORN_STT=pocketsphinx) on the worker: the engine, its English
# model, and sox to convert audio. Add ffmpeg for formats sox cannot read (e.g. Opus).
RUN apt-get update \
 && apt-get install -y --no-install-recommends pocketsphinx pocketsphinx-en-us sox \
 && rm -rf /var/lib/apt/lists/*

# Files stay root-owned (read-only to the runtime user); the process runs as `node`.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

USER node

# 8080: API (FOGHORN_API_ADDR), 8085: webhook gateway (FOGHORN_WEBHOOK_ADDR).
EXPOSE 8080 8085

ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["api"]
