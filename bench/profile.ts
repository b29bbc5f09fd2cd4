/**
 * Reads a V8 CPU profile (`node --cpu-prof`) and lists the functions with the most self time, as a
 * share of the samples in which the process was not idle, and the functions with the most total
 * time (the samples with that function anywhere on the stack, each sample counted once however
 * often the function recurs): the first says which frames burn the time, the second which layer
 * spends it. Frames are named `function file:line`, with the path shortened below node_modules or
 * the project. `node dist/bench/profile.js <file> [skipMs] [--total]`.
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
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

export interface LayerFrame {
  frame: string;
  totalPercent: number;
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const built = url.lastIndexOf('/dist/');
  if (built >= 0) return url.slice(built + '/dist/'.length);
  return url.replace(/^file:\/\//, '');
}

/** The busy samples after `skipMs` (start-up, warm-up), each with its node id and duration. */
function readProfile(file: string, skipMs: number) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const names = new Map<number, string>();
  const parents = new Map<number, number>();
  for (const { id, callFrame, children } of profile.nodes) {
    const where = callFrame.url ? ` ${shortUrl(callFrame.url)}:${callFrame.lineNumber + 1}` : '';
    names.set(id, `${callFrame.functionName || '(anonymous)'}${where}`);
    for (const child of children ?? []) parents.set(child, id);
  }
  const samples: { id: number; micros: number }[] = [];
  let busy = 0;
  let elapsed = 0;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0;
    elapsed += micros;
    if (names.get(id) === '(idle)' || elapsed < skipMs * 1000) return;
    busy += micros;
    samples.push({ id, micros });
  });
  return { names, parents, samples, busy };
}

function ranked(times: Map<string, number>, busy: number, count: number): [string, number][] {
  return [...times.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, micros]) => [frame, Number(((micros / busy) * 100).toFixed(1))]);
}

/** `skipMs`: leave out the first milliseconds of the profile (start-up, warm-up). */
export function topFrames(file: string, count = 15, skipMs = 0): Frame[] {
  const { names, samples, busy } = readProfile(file, skipMs);
  const self = new Map<string, number>();
  for (const { id, micros } of samples) {
    const name = names.get(id) ?? '?';
    self.set(name, (self.get(name) ?? 0) + micros);
  }
  return ranked(self, busy, count).map(([frame, selfPercent]) => ({ frame, selfPercent }));
}

/** The functions with the most total time; `matching` keeps only the frames whose name matches. */
export function topLayers(file: string, count = 25, skipMs = 0, matching?: RegExp): LayerFrame[] {
  const { names, parents, samples, busy } = readProfile(file, skipMs);
  const total = new Map<string, number>();
  for (const { id, micros } of samples) {
    const onStack = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parents.get(node)) onStack.add(names.get(node) ?? '?');
    for (const name of onStack) if (!matching || matching.test(name)) total.set(name, (total.get(name) ?? 0) + micros);
  }
  return ranked(total, busy, count).map(([frame, totalPercent]) => ({ frame, totalPercent }));
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const [file, skipMs] = args.filter((arg) => !arg.startsWith('--'));
  const skip = Number(skipMs) || 0;
  if (args.includes('--total')) {
    for (const { frame, totalPercent } of topLayers(file, 40, skip)) process.stdout.write(`${totalPercent.toFixed(1).padStart(5)}%  ${frame}\n`);
  } else {
    for (const { frame, selfPercent } of topFrames(file, 25, skip)) process.stdout.write(`${selfPercent.toFixed(1).padStart(5)}%  ${frame}\n`);
  }
}
