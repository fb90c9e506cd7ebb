# Image of one service of the monorepo. The same Dockerfile builds every service:
#
#   docker build --build-arg SERVICE=gateway -t parametric/gateway:<tag> .
#
# The service runs as compiled JavaScript on Node.js 24 LTS: the build stage compiles every
# workspace's src/ with tsc (`node scripts/build.js`, as `npm run build` does) into dist/, and
# the runtime stage lays the emitted .js over the sources, with each workspace's package.json
# `main` rewritten from src/*.ts to src/*.js, so `@parametric/*` resolves to compiled code and
# `node services/${SERVICE}/src/main.js` needs no tsx. See docs/deploy.md ("Images").
#
# tools/ (the simulators, the webhook receiver, the local servers, the test harness) is never
# in a service image: it has a target of its own, which docker-compose runs the simulators from:
#
#   docker build --target tools -t parametric/tools:<tag> .

# Each service's image holds only what that service loads: the shared production install is
# pruned to the service's own dependency closure (`service-deps`, scripts/prune-service-deps.js),
# and its OCI labels name it. Labels that change per build come in as build args:
#
#   docker build --build-arg SERVICE=gateway \
#     --build-arg IMAGE_VERSION=<tag> --build-arg IMAGE_REVISION="$(git rev-parse HEAD)" \
#     --build-arg IMAGE_CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" -t parametric/gateway:<tag> .

# ---------------------------------------------------------------------------------------------
# base: the Node.js runtime every stage shares, pinned by digest so that a rebuild gets the
# same bytes; scripts/pin-base-image.sh refreshes the pin (docs/deploy.md, "The base image").
FROM node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d AS base
WORKDIR /app
ENV NODE_ENV=production \
    MONGOMS_DISABLE_POSTINSTALL=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false

# ---------------------------------------------------------------------------------------------
# manifests: only the lockfile and the package.json of the root and of every workspace, at
# their paths: those of libs/ and services/ in /manifests, those of tools/ apart in
# /tool-manifests (only the tools image installs them); with them the root's `postinstall`
# (scripts/ensure-install.js) and the manifest of its dev-only `node24` package, which `npm ci`
# needs to find where the lockfile says. This stage re-runs on any source change
# (it is a copy), but its output changes only when a manifest does, so the installs below stay
# cached while only code changes.
FROM base AS manifests
COPY . /src
RUN set -eu; \
    mkdir -p /manifests /tool-manifests; \
    cd /src; \
    cp package.json package-lock.json /manifests/; \
    mkdir -p /manifests/scripts/node24; \
    cp scripts/ensure-install.js /manifests/scripts/; \
    cp scripts/node24/package.json /manifests/scripts/node24/; \
    for manifest in libs/*/package.json services/*/package.json tools/*/package.json; do \
      [ -f "$manifest" ] || continue; \
      case "$manifest" in tools/*) into=/tool-manifests ;; *) into=/manifests ;; esac; \
      mkdir -p "$into/$(dirname "$manifest")"; \
      cp "$manifest" "$into/$manifest"; \
    done

# ---------------------------------------------------------------------------------------------
# deps: production dependencies of the libs and services, the cached install every service's
# image is pruned from (the tools/ workspaces are absent here, so npm installs nothing of theirs). `npm ci`: exactly the
# committed lockfile, which holds every platform's optional binaries (`npm test` checks it
# against every package.json: scripts/test.js, `lockfile`).
FROM base AS deps
COPY --from=manifests /manifests/ ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force

# ---------------------------------------------------------------------------------------------
# service-deps: the install above pruned to one service: its workspace, the workspaces it
# depends on and the third-party packages they need, as package-lock.json records them
# (scripts/prune-service-deps.js; `npm ci --workspace` installs every service's packages, see
# docs/decisions.md). An unknown or missing SERVICE fails here.
FROM deps AS service-deps
ARG SERVICE
COPY scripts/prune-service-deps.js /tmp/prune-service-deps.js
RUN node /tmp/prune-service-deps.js "${SERVICE}" --app /app \
 && rm /tmp/prune-service-deps.js

# ---------------------------------------------------------------------------------------------
# build: every dependency (typescript and the @types packages are dev dependencies), then tsc
# over every workspace's src/ into dist/ (type errors fail the build). `npm ci` installs the
# lockfile as it is, so the root's dev-only `node24` package (Node 24 for machines whose node is
# older: scripts/node24.js) comes too; no image keeps anything of this stage but dist/.
# Shared by every service's image.
FROM base AS build
COPY --from=manifests /manifests/ ./
RUN npm ci --include=dev --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.js ./scripts/build.js
COPY libs ./libs
COPY services ./services
RUN node scripts/build.js

# ---------------------------------------------------------------------------------------------
# dashboard: the partner dashboard's static files (services/dashboard, built by its build.mjs
# with vite, a dev dependency: the build stage's install has it, no image keeps it), for the
# gateway alone, which serves them at /dashboard/ (docs/dashboard.md). They go to
# /dashboard-files laid out as /app, at services/dashboard/dist: where the compiled gateway looks
# by default (services/gateway/src/dashboard/static.ts), so the image sets no DASHBOARD_DIR. For
# any other SERVICE the directory stays empty and nothing is built. The build's stamp of its
# sources (.build.json, for `npm start`'s --if-stale) is no file to serve and is left out.
FROM build AS dashboard
ARG SERVICE
RUN set -eu; \
    mkdir -p /dashboard-files; \
    if [ "${SERVICE}" = gateway ]; then \
      node services/dashboard/build.mjs --out-dir /dashboard-files/services/dashboard/dist; \
      test -f /dashboard-files/services/dashboard/dist/index.html; \
      rm -f /dashboard-files/services/dashboard/dist/.build.json; \
    fi

# ---------------------------------------------------------------------------------------------
# tools: the repository's tools (tools/, over the libs they use), run as TypeScript through tsx
# as `npm start` runs them; docker-compose runs the M-Pesa and rate simulators (and the webhook
# receiver, on demand) from it. Not a service image: nothing here is deployed. Built only when
# asked for (`--target tools`); its own install, of every workspace's production dependencies.
FROM base AS tools-deps
COPY --from=manifests /manifests/ ./
COPY --from=manifests /tool-manifests/ ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force

FROM base AS tools
COPY --from=tools-deps /app ./
COPY package.json ./
COPY libs ./libs
COPY tools ./tools
USER 1000:1000

# ---------------------------------------------------------------------------------------------
# runtime: dependencies, the sources (libs and this one service, never tools/; the TypeScript
# stays for the chain-setup one-shot, which docker-compose runs from the policy image through
# tsx), then the compiled JavaScript and rewritten manifests over them, and in the gateway's
# image the dashboard's built files. Everything owned by root and so read-only for the `node`
# user that runs it. The last stage: the default target.
FROM base AS runtime
ARG SERVICE
COPY --from=service-deps /app ./
COPY package.json ./
COPY libs ./libs
COPY services/${SERVICE} ./services/${SERVICE}
COPY --from=build /app/dist/libs ./libs
COPY --from=build /app/dist/services/${SERVICE} ./services/${SERVICE}
# The gateway's dashboard files (empty for every other service): see the dashboard stage.
COPY --from=dashboard /dashboard-files/ ./
# Fail the build, not the pod, when SERVICE is missing or names no service, or when a
# workspace the service depends on does not resolve to compiled JavaScript that loads.
RUN set -eu; \
    if [ -z "${SERVICE}" ]; then echo "build with --build-arg SERVICE=<name>" >&2; exit 1; fi; \
    test -f "services/${SERVICE}/src/main.js" \
      || { echo "services/${SERVICE}/src/main.js not found" >&2; exit 1; }; \
    node -e "const deps = Object.keys(require('./services/${SERVICE}/package.json').dependencies || {}); \
      for (const dep of deps) { const file = require.resolve(dep); if (!file.startsWith('/app/libs/')) continue; \
        if (!file.endsWith('.js')) throw new Error(dep + ' resolves to ' + file + ', not compiled JavaScript'); \
        require(dep); }"

ENV SERVICE=${SERVICE}

# OCI image annotations (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
# The title names the service; the rest come from the build (see the top of this file). The
# packages are private (package.json), with no licence file: proprietary.
ARG IMAGE_SOURCE=unknown
ARG IMAGE_REVISION=unknown
ARG IMAGE_VERSION=0.1.0
ARG IMAGE_CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="parametric-${SERVICE}" \
      org.opencontainers.image.description="The ${SERVICE} service of the parametric insurance platform" \
      org.opencontainers.image.source="${IMAGE_SOURCE}" \
      org.opencontainers.image.revision="${IMAGE_REVISION}" \
      org.opencontainers.image.version="${IMAGE_VERSION}" \
      org.opencontainers.image.created="${IMAGE_CREATED}" \
      org.opencontainers.image.licenses="LicenseRef-Proprietary" \
      org.opencontainers.image.base.name="docker.io/library/node:24-bookworm-slim"

# The `node` user (uid/gid 1000) of the base image; numeric so that Kubernetes'
# runAsNonRoot can verify it.
USER 1000:1000

# 3000: the service's HTTP port (partner API on the gateway, /healthz, /readyz).
# 3001: the ops API: admin only, never published beyond the host or cluster.
EXPOSE 3000 3001

# Exec form with node's fetch (the slim image has no curl). HEALTHCHECK_PORT overrides 3000.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HEALTHCHECK_PORT || 3000) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

STOPSIGNAL SIGTERM
# `exec` replaces the shell with node, so node is PID 1 and receives SIGTERM itself (the
# services shut down gracefully on it). No shell stays around. Compiled JavaScript: no tsx.
# The flags are every service's, as npm start gives them (tools/topology SERVICE_NODE_FLAGS says
# why; test/deploy/dockerfile.test.ts keeps the two the same).
CMD ["/bin/sh", "-c", "exec node --no-allocation-site-pretenuring --no-memory-reducer \"services/${SERVICE}/src/main.js\""]
