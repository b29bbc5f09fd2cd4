/**
 * ISBN rules: ISBN-10 or ISBN-13 with a correct check digit, hyphens and spaces allowed on input.
 * Every ISBN also has one canonical ISBN-13 form, which is what uniqueness is decided on.
 */

export type IsbnProblem = 'format' | 'checkDigit';

/** Removes the hyphens and spaces people write ISBNs with, and upper-cases an ISBN-10's `x`. */
export function normalizeIsbn(raw: string): string {
  return raw.replace(/[- ]/g, '').toUpperCase();
}

function isbn10CheckDigit(first9: string): string {
  let sum = 0;
  for (let i = 0; i < 9; i += 1) sum += (10 - i) * Number(first9[i]);
  const check = (11 - (sum % 11)) % 11;
  return check === 10 ? 'X' : String(check);
}

export function isbn13CheckDigit(first12: string): string {
  let sum = 0;
  for (let i = 0; i < 12; i += 1) sum += (i % 2 === 0 ? 1 : 3) * Number(first12[i]);
  return String((10 - (sum % 10)) % 10);
}

/** What is wrong with an already normalized ISBN, or undefined when it is valid. */
export function isbnProblem(isbn: string): IsbnProblem | undefined {
  if (/^\d{9}[\dX]$/.test(isbn)) return isbn10CheckDigit(isbn.slice(0, 9)) === isbn[9] ? undefined : 'checkDigit';
  // Only the 978 and 979 prefixes (Bookland) are ISBNs; other EAN-13s are not.
  if (/^97[89]\d{10}$/.test(isbn)) return isbn13CheckDigit(isbn.slice(0, 12)) === isbn[12] ? undefined : 'checkDigit';
  return 'format';
}

/** The ISBN-13 form of a valid normalized ISBN (an ISBN-10 gains the 978 prefix and a new check digit). */
export function toIsbn13(isbn: string): string {
  if (isbn.length === 13) return isbn;
  const first12 = `978${isbn.slice(0, 9)}`;
  return first12 + isbn13CheckDigit(first12);
}
