/** Each Jest run starts its OpenAPI coverage tally afresh (test/openapi/environment.ts writes it). */
import fs from 'node:fs';
import { coverageDir } from './shared';

export default function clearOpenApiCoverage(globalConfig: { rootDir: string }): void {
  fs.rmSync(coverageDir(globalConfig.rootDir), { recursive: true, force: true });
}
