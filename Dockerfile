# One small image for every function; the Knative Service picks one with FUNCTION_TARGET and
# FUNCTION_SOURCE (see knative/services.yaml). Nothing is installed at run time: each function is
# one bundle (npm run build) with its dependencies inside, and the Functions Framework is bundled
# once beside them (functions/framework.mjs), so the image has no node_modules.
FROM node:22-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:22-bookworm-slim
ENV NODE_ENV=production PORT=8080
WORKDIR /app
COPY --from=build /src/dist/functions ./functions
# Node keys the code cache a function starts from by the bundles' paths and keeps it per user
# (functions/runtime/compile-cache.ts): the build's is dropped, and it is filled again at these
# paths, as the user the functions run as, in the one directory that user may write.
RUN rm -rf functions/.compile-cache && install -d -o 1000 -g 1000 functions/.compile-cache
# Numeric, so the kubelet can verify runAsNonRoot (the node user of this image is 1000).
USER 1000:1000
RUN ["node", "functions/fill-compile-cache.mjs"]
EXPOSE 8080
# FUNCTION_TARGET and FUNCTION_SOURCE come from the Knative Service. The entry point is ours, not
# the framework's main.js, so that a body over MAX_EVENT_BYTES is refused before it is read. node
# runs as PID 1, which ignores signals it has no handler for: the entry point handles SIGTERM itself
# (functions/runtime/drain.ts), so a pod Knative scales down goes at once, not at SIGKILL.
CMD ["node", "functions/main.mjs"]
