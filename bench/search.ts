/**
 * The full-text search over a large catalogue, on SQLite (FTS5) and, when DB_URL is set, on
 * MariaDB/MySQL (InnoDB FULLTEXT): `books` generated books (titles, descriptions and author names
 * drawn from a vocabulary of made-up words, common words more often, as in real titles), written
 * straight into the tables and then indexed; then the latency of `GET /api/books/search` (a page of
 * 20) for one title word, two title words in the other order, a four-letter prefix, a word with
 * one typo and an author's surname, beside the list's substring filter `GET /api/books/?q=<word>`
 * it replaces (fewer of those: each reads the whole catalogue). Build, then:
 * node dist/bench/search.js [books=100000] [queries=200] [substringQueries=50].
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { startStack, type Stack } from '../test/stack';
import { Author, Category, Publisher } from '../subgraphs/book/entities';
import { SearchIndex } from '../subgraphs/book/search-index';
import { benchBook, insertBooks } from './books';
import { latencies, percentile } from './measure';

const round = (ms: number) => Math.round(ms * 10) / 10;

/** A seeded generator (mulberry32), so both databases get the same catalogue and the same queries. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'dra', 'bel', 'cor', 'fen', 'gal', 'hob', 'mar', 'quin', 'ster', 'thal', 'wen', 'zor'];

interface Catalogue {
  rand: () => number;
  vocabulary: string[];
  /** A word of the vocabulary, the first ones far more often (the most common in about one book in five). */
  word(): string;
  words(count: number): string;
}

function catalogueText(): Catalogue {
  const rand = random(28);
  const vocabulary = new Set<string>();
  while (vocabulary.size < 20_000) {
    const syllables = 2 + Math.floor(rand() * 3);
    vocabulary.add(Array.from({ length: syllables }, () => SYLLABLES[Math.floor(rand() * SYLLABLES.length)]).join(''));
  }
  const list = [...vocabulary];
  const word = () => list[Math.floor(list.length * rand() ** 2)];
  return { rand, vocabulary: list, word, words: (count) => Array.from({ length: count }, word).join(' ') };
}

const capitalised = (text: string) => text.replace(/\b\w/g, (c) => c.toUpperCase());

/** Writes the catalogue straight into the book service's tables, then indexes it; answers the titles and surnames. */
async function fill(stack: Stack, text: Catalogue, count: number): Promise<{ titles: string[]; surnames: string[]; indexSeconds: number }> {
  const db = stack.services.book!.db;
  const authors = Array.from({ length: 5_000 }, (_, i) => {
    const [firstName, lastName] = [capitalised(text.words(1)), `${capitalised(text.words(1))}${i}`];
    return Object.assign(new Author(), { id: randomUUID(), firstName, lastName, biography: null, country: null, nameKey: `${firstName} ${lastName}`.toLowerCase() });
  });
  const categories = Array.from({ length: 30 }, (_, i) => Object.assign(new Category(), { id: randomUUID(), name: `Shelf ${i}`, description: null, nameKey: `shelf ${i}` }));
  const publishers = Array.from({ length: 50 }, (_, i) => Object.assign(new Publisher(), { id: randomUUID(), name: `House ${i}`, address: null, nameKey: `house ${i}` }));
  await db.transaction(async (manager) => {
    for (let at = 0; at < authors.length; at += 500) await manager.insert(Author, authors.slice(at, at + 500));
    await manager.insert(Category, categories);
    await manager.insert(Publisher, publishers);
  });
  const titles: string[] = [];
  const now = new Date();
  const pick = <T>(list: T[]) => list[Math.floor(text.rand() * list.length)];
  for (let start = 0; start < count; start += 500) {
    const books = Array.from({ length: Math.min(500, count - start) }, () => {
      const title = capitalised(text.words(2 + Math.floor(text.rand() * 3)));
      titles.push(title);
      const description = `${capitalised(text.words(20 + Math.floor(text.rand() * 20)))}.`;
      return benchBook({ title, description, publisherId: pick(publishers).id, categoryId: pick(categories).id }, now);
    });
    await insertBooks(db, books, () => pick(authors).id);
  }
  const began = performance.now();
  await new SearchIndex(db).indexMissing();
  return { titles, surnames: authors.map((author) => author.lastName), indexSeconds: Math.round((performance.now() - began) / 1000) };
}

/** `word` with one letter in its middle replaced: one edit away, no longer a prefix of it. */
function typo(word: string): string {
  const at = Math.floor(word.length / 2);
  return `${word.slice(0, at)}${word[at] === 'x' ? 'y' : 'x'}${word.slice(at + 1)}`;
}

async function measure(database: string, count: number, queries: number, substringQueries: number): Promise<Record<string, unknown>> {
  const stack = await startStack({ services: ['book'], env: { LOG_LEVEL: 'warn' } });
  try {
    const text = catalogueText();
    const { titles, surnames, indexSeconds } = await fill(stack, text, count);
    const rand = random(11);
    const titleWords = () => titles[Math.floor(rand() * titles.length)].toLowerCase().split(' ');
    const kinds: Record<string, () => string> = {
      oneWord: () => titleWords()[0],
      twoWordsReversed: () => titleWords().slice(0, 2).reverse().join(' '),
      prefix: () => titleWords()[0].slice(0, 4),
      typo: () => typo(titleWords().find((w) => w.length >= 6) ?? titleWords()[0]),
      author: () => surnames[Math.floor(rand() * surnames.length)],
    };
    const result: Record<string, unknown> = { database, books: count, indexSeconds };
    const time = async (path: string, next: () => string, calls = queries) => {
      let matches = 0;
      const times = await latencies(calls, 5, async () => {
        const res = await request(stack.urls.book).get(path).query({ q: next(), limit: 20 });
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
        matches += Number(res.headers['x-total-count']);
      });
      return { p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)), meanMatches: Math.round(matches / (calls + 5)) };
    };
    for (const [kind, next] of Object.entries(kinds)) result[`search.${kind}`] = await time('/api/books/search', next);
    result['substring.oneWord'] = await time('/api/books/', kinds.oneWord, substringQueries);
    return result;
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<Record<string, unknown>> {
  const count = Number(process.argv[2] ?? 100_000);
  const queries = Number(process.argv[3] ?? 200);
  const substringQueries = Number(process.argv[4] ?? 50);
  const mysqlUrl = process.env.DB_URL;
  delete process.env.DB_URL;
  const results = [await measure('SQLite', count, queries, substringQueries)];
  if (mysqlUrl) {
    process.env.DB_URL = mysqlUrl;
    results.push(await measure('MariaDB/MySQL', count, queries, substringQueries));
  }
  const kinds = Object.keys(results[0]).filter((key) => key.includes('.'));
  const table = [
    `| query (${count.toLocaleString('en')} books, page of 20) | ${results.map((r) => `${String(r.database)} p50 / p99 ms`).join(' | ')} |`,
    `|---|${results.map(() => '---|').join('')}`,
    ...kinds.map((kind) => `| ${kind} | ${results.map((r) => `${(r[kind] as { p50Ms: number }).p50Ms} / ${(r[kind] as { p99Ms: number }).p99Ms}`).join(' | ')} |`),
  ].join('\n');
  return { bench: 'search', table, results };
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
