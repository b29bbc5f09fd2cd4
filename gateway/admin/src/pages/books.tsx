/**
 * The catalogue's books by title, 50 a page, with their stock; each links to its page (cover upload).
 * A search goes through the full-text search (best match first) and shows the fields that matched.
 */
import { useState } from 'preact/hooks';
import { catalogue } from '../api/catalogue';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { Marked } from '../components/marked';
import { DataTable } from '../components/table';
import { count } from '../format';
import { useRemote } from '../hooks';
import { href, Link, navigate, type Location } from '../router';

const PAGE = 50;

export function BooksPage({ location }: { location: Location }) {
  const q = (location.query.get('q') ?? '').trim();
  const offset = Math.max(0, Number(location.query.get('offset') ?? 0) || 0);
  const [draft, setDraft] = useState(q);
  const page = useRemote(() => (q ? catalogue.search(q, PAGE, offset) : catalogue.books('', PAGE, offset)), [q, offset]);
  const go = (nextOffset: number) => navigate(href('/books', { q, offset: nextOffset > 0 ? String(nextOffset) : undefined }));

  return (
    <>
      <h1>Books</h1>
      <form
        class="search-form"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(href('/books', { q: draft.trim() }));
        }}
      >
        <label for="book-search">Search by title, author, description, category, publisher or ISBN</label>
        <div class="search-row">
          <input id="book-search" type="search" value={draft} onInput={(event) => setDraft(event.currentTarget.value)} />
          <button type="submit">Search</button>
        </div>
      </form>
      {page.status === 'loading' ? <Loading what="books" /> : null}
      {page.status === 'error' ? <ErrorMessage error={page.error} what="books" onRetry={page.reload} /> : null}
      {page.status === 'ready' && page.data.books.length === 0 ? <Empty>{q ? `No book matches “${q}”.` : 'No books yet.'}</Empty> : null}
      {page.status === 'ready' && page.data.books.length > 0 ? (
        <>
          <p class="muted" aria-live="polite">
            {offset + 1}–{offset + page.data.books.length} of {count(page.data.total)}
          </p>
          <DataTable testId="books" columns={['Title', 'ISBN', 'Price', 'In stock', 'Cover']}>
            {page.data.books.map((book) => {
              const title = book.highlights?.find((h) => h.field === 'title');
              const isbn = book.highlights?.find((h) => h.field === 'isbn');
              const others = book.highlights?.filter((h) => h.field !== 'title' && h.field !== 'isbn') ?? [];
              return (
                <tr key={book.id}>
                  <td>
                    <Link href={href(`/books/${book.id}`)}>{title ? <Marked fragment={title.fragment} /> : book.title}</Link>
                    {others.map((h) => (
                      <div class="muted" key={h.field}>
                        {h.field}: <Marked fragment={h.fragment} />
                      </div>
                    ))}
                  </td>
                  <td>{isbn ? <Marked fragment={isbn.fragment} /> : book.isbn}</td>
                  <td>{book.price.toFixed(2)}</td>
                  <td>{book.stock === null ? <span class="muted">not tracked</span> : count(book.stock)}</td>
                  <td>{book.coverImageUrl ? 'yes' : <span class="muted">none</span>}</td>
                </tr>
              );
            })}
          </DataTable>
          <div class="search-row">
            <button type="button" class="button-secondary" disabled={offset === 0} onClick={() => go(Math.max(0, offset - PAGE))}>
              Previous
            </button>
            <button type="button" class="button-secondary" disabled={offset + PAGE >= page.data.total} onClick={() => go(offset + PAGE)}>
              Next
            </button>
          </div>
        </>
      ) : null}
    </>
  );
}
