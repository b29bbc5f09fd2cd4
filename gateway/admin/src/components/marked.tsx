/**
 * A search highlight (`<mark>` around the matches, the rest HTML-escaped by the book service) shown
 * as text and <mark> elements, never as HTML: nothing in a book's text can become markup here.
 */
const ENTITY = /&#(\d+);/g;
const unescape = (text: string) => text.replace(ENTITY, (_, code: string) => String.fromCharCode(Number(code)));

export function Marked({ fragment }: { fragment: string }) {
  return <>{fragment.split(/<mark>(.*?)<\/mark>/).map((part, index) => (index % 2 === 1 ? <mark key={index}>{unescape(part)}</mark> : unescape(part)))}</>;
}
