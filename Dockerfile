# Image of one service of the monorepo. The same Dockerfile builds every service:
#
#   docker build --build-arg SERVICE=gateway -t parametric/gateway:<tag> .
#
# Workspaces ship TypeScript sources (no build step): the container runs
# services/${SERVICE}/src/main.ts through tsx, as `npm start` does locally.
# See docs/deploy.md.

# ---------------------------------------------------------------------------------------------
# base: the Node.js runtime every stage shares.
FROM node:20-bookworm-slim AS base
WORKDIR /app
ENV NODE_ENV=production \
    MONGOMS_DISABLE_POSTINSTALL=1 \
    NPM_CONFIG_UPDATE_NOTIFIER=false

# ---------------------------------------------------------------------------------------------
# manifests: only the lockfile and the package.json of the root and of every workspace, at
# their paths. This stage re-runs on any source change (it is a copy), but its output changes
# only when a manifest does, so the install below stays cached while only code changes.
FROM base AS manifests
COPY . /src
RUN set -eu; \
    mkdir -p /manifests; \
    cd /src; \
    cp package.json package-lock.json /manifests/; \
    for manifest in libs/*/package.json services/*/package.json; do \
      [ -f "$manifest" ] || continue; \
      mkdir -p "/manifests/$(dirname "$manifest")"; \
      cp "$manifest" "/manifests/$manifest"; \
    done

# ---------------------------------------------------------------------------------------------
# deps: production dependencies of all workspaces, shared by every service's image.
# `npm install`, not `npm ci`: the lockfile lacks other platforms' optional binaries
# (esbuild, swc) and npm ci rejects it as out of sync.
FROM base AS deps
COPY --from=manifests /manifests/ ./
RUN npm install --omit=dev --no-audit --no-fund \
 && npm cache clean --force

# ---------------------------------------------------------------------------------------------
# runtime: dependencies, then sources (libs and this one service), owned by root and so
# read-only for the `node` user that runs them.
FROM base AS runtime
COPY --from=deps /app ./
COPY package.json tsconfig.json ./
COPY libs ./libs

ARG SERVICE
COPY services/${SERVICE} ./services/${SERVICE}
# Fail the build, not the pod, when SERVICE is missing or names no service, or tsx (a runtime
# dependency of each service) did not install.
RUN set -eu; \
    if [ -z "${SERVICE}" ]; then echo "build with --build-arg SERVICE=<name>" >&2; exit 1; fi; \
    test -f "services/${SERVICE}/src/main.ts" \
      || { echo "services/${SERVICE}/src/main.ts not found" >&2; exit 1; }; \
    node --import tsx -e ''

ENV SERVICE=${SERVICE}

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
# services shut down gracefully on it). No shell stays around.
CMD ["/bin/sh", "-c", "exec node --import tsx \"services/${SERVICE}/src/main.ts\""]
