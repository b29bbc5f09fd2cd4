/**
 * The documentation as a newcomer follows it: every `CONTRACT §N` and `interface §N` the source
 * cites names a section of docs/contract.md or docs/interface.md, every relative link of the README
 * and docs/ reaches a file (and heading), and the README stays a front door, not a manual.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

/** Where each cited document lives. */
const CITED_DOCUMENTS = { CONTRACT: 'docs/contract.md', interface: 'docs/interface.md' } as const;

const CITING_EXTENSIONS = /\.(ts|tsx|mts|js|mjs|cjs|graphql|ya?ml|json|md|sh)$/;
const README_MAX_LINES = 250;

/** Files git tracks, or, without git, every file outside what the build and tools write. */
function sourceFiles(): string[] {
  try {
    return execFileSync('git', ['-C', root, 'ls-files', '-z'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\0')
      .filter((file) => file !== '' && fs.existsSync(path.join(root, file)));
  } catch {
    const skipped = new Set(['node_modules', 'dist', 'data', '.git', '.tmp', '.cache', 'test-results', 'results']);
    const walk = (dir: string): string[] =>
      fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
        const file = path.posix.join(dir, entry.name);
        if (entry.isDirectory()) return skipped.has(entry.name) ? [] : walk(file);
        return [file];
      });
    return walk('.').map((file) => path.posix.normalize(file));
  }
}

const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Lines outside fenced code blocks, with their line numbers. */
function proseLines(text: string): { line: string; number: number }[] {
  const lines: { line: string; number: number }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) lines.push({ line, number: index + 1 });
  });
  return lines;
}

/** The anchor GitHub gives a heading: its text without markup, lower-cased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

interface Heading {
  text: string;
  anchor: string;
}

function headings(file: string): Heading[] {
  const seen = new Map<string, number>();
  return proseLines(read(file)).flatMap(({ line }) => {
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!match) return [];
    const base = slug(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return [{ text: match[1], anchor: count === 0 ? base : `${base}-${count}` }];
  });
}

/** The section numbers a document's headings carry: `## 1. Conventions` is 1, `### 1.2 Status codes` is 1.2. */
function sectionNumbers(file: string): Set<string> {
  return new Set(headings(file).flatMap(({ text }) => /^§?(\d+(?:\.\d+)*)\.?\s/.exec(text)?.[1] ?? []));
}

interface Citation {
  where: string;
  document: keyof typeof CITED_DOCUMENTS;
  section: string;
}

/** `CONTRACT §4`, `CONTRACT §1.2, §2` and `interface §4.4` each name one or more sections. */
function citations(file: string): Citation[] {
  const found: Citation[] = [];
  read(file)
    .split('\n')
    .forEach((line, index) => {
      for (const match of line.matchAll(/\b(CONTRACT|interface)(?:\.md)?\s+(§\s?\d+(?:\.\d+)*(?:\s*(?:,|and|&)\s*§\s?\d+(?:\.\d+)*)*)/g)) {
        for (const section of match[2].matchAll(/§\s?(\d+(?:\.\d+)*)/g)) {
          found.push({ where: `${file}:${index + 1}`, document: match[1] as Citation['document'], section: section[1] });
        }
      }
    });
  return found;
}

interface Link {
  where: string;
  target: string;
}

/** Inline links and images of a Markdown file's prose, code spans and code blocks left out. */
function links(file: string): Link[] {
  return proseLines(read(file)).flatMap(({ line, number }) =>
    [...line.replace(/`+[^`]*`+/g, 'code').matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => ({
      where: `${file}:${number}`,
      target: match[1],
    })),
  );
}

/** What is wrong with a link, or undefined when it reaches its file and heading. */
function brokenLink(from: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined;
  const [pathPart, anchor] = target.split('#', 2);
  const file = pathPart === '' ? from : path.posix.normalize(path.posix.join(path.posix.dirname(from), decodeURIComponent(pathPart)));
  if (file.startsWith('..') || !fs.existsSync(path.join(root, file))) return `${file} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!file.endsWith('.md')) return `${file} is not Markdown, so #${anchor} names nothing`;
  const anchors = headings(file).map((heading) => heading.anchor);
  return anchors.includes(anchor.toLowerCase()) ? undefined : `${file} has no heading #${anchor}`;
}

describe('the documentation', () => {
  const files = sourceFiles();
  const markdown = [
    'README.md',
    ...fs
      .readdirSync(path.join(root, 'docs'))
      .filter((file) => file.endsWith('.md'))
      .map((file) => `docs/${file}`),
  ];

  it('has every cited document in docs/', () => {
    for (const document of Object.values(CITED_DOCUMENTS)) expect(fs.existsSync(path.join(root, document))).toBe(true);
  });

  it('has a section for every CONTRACT §N and interface §N the source cites', () => {
    const sections = Object.fromEntries(Object.entries(CITED_DOCUMENTS).map(([name, file]) => [name, sectionNumbers(file)]));
    const cited = files.filter((file) => CITING_EXTENSIONS.test(file) && !file.endsWith('package-lock.json')).flatMap(citations);

    // The code cites the contract on every rule it implements: finding few means the scan is broken.
    expect(cited.length).toBeGreaterThan(50);
    const unresolved = cited.filter(({ document, section }) => !sections[document].has(section)).map(({ where, document, section }) => `${where}: ${document} §${section}`);
    expect(unresolved).toEqual([]);
  });

  it('links only to files and headings that exist', () => {
    const all = markdown.flatMap(links);
    expect(all.length).toBeGreaterThan(20);
    const broken = all.flatMap(({ where, target }) => {
      const problem = brokenLink(where.slice(0, where.lastIndexOf(':')), target);
      return problem ? [`${where}: (${target}) ${problem}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it(`keeps the README within ${README_MAX_LINES} lines, the code layout in its first third`, () => {
    const lines = read('README.md').trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(README_MAX_LINES);
    const layout = lines.findIndex((line) => /^##\s+Code layout/.test(line));
    expect(layout).toBeGreaterThan(0);
    expect(layout).toBeLessThan(lines.length / 3);
  });
});
