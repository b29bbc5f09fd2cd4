/**
 * The environment variables the code reads, for the tests that check a deployment's environment
 * (docker-compose.yml, the Kubernetes manifests): every name loadConfig reads, and those the AWS SDK
 * reads itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SERVICE_NAMES } from '../platform/config';

const root = path.join(__dirname, '..');

/** Read by the AWS SDK's default credential chain (the S3 cover store), not by platform/config.ts. */
export const SDK_VARIABLES = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

/** Every variable loadConfig reads by name (platform/config.ts and its sections in platform/config/), plus the per-service port and URL ones. */
export function knownVariables(): Set<string> {
  const sections = fs.readdirSync(path.join(root, 'platform/config')).map((file) => path.join('platform/config', file));
  const source = ['platform/config.ts', ...sections].map((file) => fs.readFileSync(path.join(root, file), 'utf8')).join('\n');
  const named = [...source.matchAll(/\b(?:read|int|bool|list|addresses)\((?:env, )?'([A-Z0-9_]+)'/g)].map((match) => match[1]);
  const perService = [...SERVICE_NAMES, 'gateway'].flatMap((name) => [`${name.toUpperCase()}_PORT`, `${name.toUpperCase()}_URL`]);
  return new Set([...named, ...perService]);
}
