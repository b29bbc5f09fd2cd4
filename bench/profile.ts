/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and lists the functions with the most self time, as a
 * share of the samples in which the process was not idle. Frames are named `function file:line`,
 * with the path shortened below node_modules or the project. `node dist/bench/profile.js <file> [skipMs]`.
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  frame: string;
  selfPercent: number;
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const built = url.lastIndexOf('/dist/');
  if (built >= 0) return url.slice(built + '/dist/'.length);
  return url.replace(/^file:\/\//, '');
}

/** `skipMs`: leave out the first milliseconds of the profile (start-up, warm-up). */
export function topFrames(file: string, count = 15, skipMs = 0): Frame[] {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const names = new Map<number, string>();
  for (const { id, callFrame } of profile.nodes) {
    const where = callFrame.url ? ` ${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}` : '';
    names.set(id, `${callFrame.functionName || '(anonymous)'}${where}`);
  }
  const self = new Map<string, number>();
  let busy = 0;
  let elapsed = 0;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0;
    elapsed += micros;
    const name = names.get(id) ?? '?';
    if (name === '(idle)' || elapsed < skipMs * 1000) return;
    busy += micros;
    self.set(name, (self.get(name) ?? 0) + micros);
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, micros]) => ({ frame, selfPercent: Number(((micros / busy) * 100).toFixed(1)) }));
}

if (require.main === module) {
  const [file, skipMs] = process.argv.slice(2);
  for (const { frame, selfPercent } of topFrames(file, 25, Number(skipMs) || 0)) process.stdout.write(`${selfPercent.toFixed(1).padStart(5)}%  ${frame}\n`);
}
