# One image for every service and the gateway; the command picks which one runs.
FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
# package.json's preinstall runs it: an install on a Node older than the floor stops with a message.
COPY scripts/require-node.js ./scripts/
# npm install, not npm ci: see the note in .ci/run on platform-specific optional packages.
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/package.json ./package.json
RUN mkdir -p /app/data && chown node:node /app/data
USER node
CMD ["node", "dist/scripts/start.js"]
