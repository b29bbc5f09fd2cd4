/**
 * Text as the full-text search sees it, the same for SQLite FTS5 and MariaDB FULLTEXT: both index
 * and query words cut and folded here (lower case, accents off, letters and digits only), so the two
 * engines never disagree on what a word is. Also the spelling candidates of a query word and the
 * `<mark>` highlights of a result.
 */
import { normalizeIsbn } from './isbn';

/** "Émile" → "emile": lower case without diacritics, as both engines' documents are stored. */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

const WORD = /[\p{L}\p{N}]+/gu;
/** MariaDB's innodb_ft_max_token_size is 84; no real word is near it. */
const MAX_WORD = 64;

/** The folded words of `text`, in order: what a search document holds. */
export function words(text: string | null | undefined): string[] {
  if (!text) return [];
  return (fold(text).match(WORD) ?? []).filter((word) => word.length <= MAX_WORD);
}

/**
 * InnoDB indexes no word shorter than `innodb_ft_min_token_size` (3 unless the server says
 * otherwise; the book service does not start where it is more). So that a word of one or two
 * letters ("of", "it") is found on MariaDB as on SQLite, MariaDB's documents hold it followed by
 * `_` up to that length ("of_"): InnoDB takes `_` as part of a word and ours never contain one
 * (WORD), so the padded word is indexed, found by its prefix like any other word, and matches
 * nothing it should not.
 */
export const INNODB_MIN_TOKEN_SIZE = 3;

/** A document's word as InnoDB is given it (see INNODB_MIN_TOKEN_SIZE). */
export function innodbWord(word: string): string {
  return word.length < INNODB_MIN_TOKEN_SIZE ? word.padEnd(INNODB_MIN_TOKEN_SIZE, '_') : word;
}

/** A query word matches indexed words it begins ("hobb" finds "hobbit"), or exactly one of `corrections`. */
export interface QueryWord {
  prefix: string;
  corrections: string[];
}

/** At most this many words of a query count: enough for any title, and a bound on the work. */
const MAX_QUERY_WORDS = 10;
/** A word this long or longer may carry one typo (the contract's rule). */
export const TYPO_MIN_LENGTH = 5;

/**
 * The distinct words of a query. A piece written with hyphens made only of digits ("978-0-14") is
 * one word, as ISBNs are stored without separators. A single letter is dropped: as a prefix it
 * would match a large share of the catalogue and tell nothing.
 */
export function queryWords(q: string): QueryWord[] {
  const found: string[] = [];
  for (const piece of q.trim().split(/\s+/)) {
    const digits = normalizeIsbn(piece).toLowerCase();
    if (piece.includes('-') && /^\d[\dx]*$/.test(digits)) found.push(digits);
    else found.push(...words(piece));
  }
  return [...new Set(found)]
    .filter((word) => word.length > 1)
    .slice(0, MAX_QUERY_WORDS)
    .map((prefix) => ({ prefix, corrections: [] }));
}

const ALPHABET = [...'abcdefghijklmnopqrstuvwxyz0123456789'];

/**
 * Every string at edit distance 1 from `word` (one letter deleted, inserted, replaced, or two
 * neighbours swapped), over a-z, 0-9 and the word's own letters. Looking these up in the vocabulary
 * of indexed words is an indexed `IN`, where computing the distance to every word would scan it.
 */
export function editsOf(word: string): string[] {
  const letters = [...word];
  const alphabet = [...new Set([...ALPHABET, ...letters])];
  const edits = new Set<string>();
  for (let i = 0; i <= letters.length; i += 1) {
    const head = letters.slice(0, i).join('');
    const tail = letters.slice(i);
    if (tail.length > 0) edits.add(head + tail.slice(1).join(''));
    if (tail.length > 1) edits.add(head + tail[1] + tail[0] + tail.slice(2).join(''));
    for (const letter of alphabet) {
      edits.add(head + letter + tail.join(''));
      if (tail.length > 0) edits.add(head + letter + tail.slice(1).join(''));
    }
  }
  edits.delete(word);
  return [...edits];
}

/** Whether a folded word of a field is one the query asked for. */
function matches(word: string, query: QueryWord[]): boolean {
  return query.some((q) => word.startsWith(q.prefix) || q.corrections.includes(word));
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Longer fields (descriptions) are cut to about this many characters around the first match. */
const FRAGMENT = 160;

/**
 * `text` as HTML with each matching word in `<mark>…</mark>` (the rest escaped), cut to a fragment
 * around the first match when long; undefined when no word matches.
 */
export function highlight(text: string | null, query: QueryWord[]): string | undefined {
  if (!text) return undefined;
  const spans = [...text.matchAll(WORD)].filter((m) => matches(fold(m[0]), query)).map((m) => ({ start: m.index, end: m.index + m[0].length }));
  if (spans.length === 0) return undefined;
  let from = 0;
  let to = text.length;
  if (text.length > FRAGMENT) {
    from = Math.max(0, spans[0].start - FRAGMENT / 4);
    const space = text.indexOf(' ', from);
    if (from > 0 && space >= 0 && space < spans[0].start) from = space + 1;
    to = Math.min(text.length, from + FRAGMENT);
    const cut = text.lastIndexOf(' ', to);
    if (to < text.length && cut > spans[0].end) to = cut;
  }
  let html = from > 0 ? '…' : '';
  let at = from;
  for (const span of spans.filter((s) => s.start >= from && s.end <= to)) {
    html += `${escapeHtml(text.slice(at, span.start))}<mark>${escapeHtml(text.slice(span.start, span.end))}</mark>`;
    at = span.end;
  }
  return `${html}${escapeHtml(text.slice(at, to))}${to < text.length ? '…' : ''}`;
}
