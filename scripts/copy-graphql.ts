/**
 * Run by `npm run build` after tsc: copies the non-TypeScript files the compiled code reads at run
 * time beside their JS in dist/ (each subgraph's schema.graphql and e-mail templates, the committed supergraph, the REST
 * contract rest-compat/openapi.yaml, the trusted documents manifest), so an image holding only dist/ still serves GraphQL and /openapi.json.
 * `npm run dev` (scripts/dev.ts) copies each again when it changes.
 */
import fs from 'node:fs';
import path from 'node:path';

export const root = path.resolve(__dirname, '..', '..');
const dist = path.join(root, 'dist');

/** The files to copy, relative to the repository. */
export function runTimeFiles(): string[] {
  const services = fs
    .readdirSync(path.join(root, 'subgraphs'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join('subgraphs', entry.name));
  const mailTemplates = (service: string) =>
    fs.existsSync(path.join(root, service, 'mail')) ? fs.readdirSync(path.join(root, service, 'mail')).map((file) => path.join(service, 'mail', file)) : [];
  return [
    ...services.map((service) => path.join(service, 'schema.graphql')),
    ...services.flatMap(mailTemplates),
    path.join('schema', 'supergraph.graphql'),
    path.join('rest-compat', 'openapi.yaml'),
    // The trusted documents manifest the gateway reads (gateway/trusted-documents.ts).
    path.join('gateway', 'admin', 'src', 'api', 'generated', 'persisted-documents.json'),
  ].filter((file) => fs.existsSync(path.join(root, file)));
}

export function copyToDist(file: string): void {
  fs.mkdirSync(path.dirname(path.join(dist, file)), { recursive: true });
  fs.copyFileSync(path.join(root, file), path.join(dist, file));
}

if (require.main === module) for (const file of runTimeFiles()) copyToDist(file);
