/**
 * One catalogue book, what it sold and its stock (on the shelf, held by checkouts not yet paid, and
 * available to a new checkout), with its cover and a form to upload a new one.
 */
import { useState } from 'preact/hooks';
import { catalogue, coverOnThisOrigin } from '../api/catalogue';
import { api } from '../api/operations';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { count, money } from '../format';
import { useRemote } from '../hooks';
import { href, Link } from '../router';

export function BookPage({ bookId }: { bookId: string }) {
  const remote = useRemote(() => api.book(bookId), [bookId]);
  const back = (
    <p class="breadcrumb">
      <Link href={href('/books')}>Books</Link> / Book
    </p>
  );
  if (remote.status === 'loading') return <Loading what="the book" />;
  if (remote.status === 'error') return <ErrorMessage error={remote.error} what="the book" onRetry={remote.reload} />;
  const book = remote.data.book;
  if (!book) {
    return (
      <>
        {back}
        <h1>Book not found</h1>
        <Empty>
          The book <code>{bookId}</code> is no longer in the catalogue.
        </Empty>
      </>
    );
  }
  return (
    <>
      {back}
      <h1>{book.title}</h1>
      <p class="muted">by {book.authors.map((author) => [author.firstName, author.lastName].filter(Boolean).join(' ')).join(', ')}</p>
      <dl class="cards" data-testid="book-sales">
        <div class="card">
          <dt>Copies sold</dt>
          <dd>{count(book.sales.quantitySold)}</dd>
        </div>
        <div class="card">
          <dt>Revenue</dt>
          <dd>{money(book.sales.revenue)}</dd>
        </div>
        <div class="card">
          <dt>Price</dt>
          <dd>{money(book.price)}</dd>
        </div>
        <div class="card">
          <dt>In stock</dt>
          <dd data-testid="book-stock">{book.stock === null ? <span class="muted">not tracked</span> : count(book.stock)}</dd>
        </div>
        {book.stock === null ? null : (
          <>
            <div class="card">
              <dt>Held by checkouts</dt>
              <dd data-testid="book-held">{count(book.heldStock ?? 0)}</dd>
            </div>
            <div class="card">
              <dt>Available</dt>
              <dd data-testid="book-available">{count(book.availableStock ?? 0)}</dd>
            </div>
          </>
        )}
      </dl>
      <CoverPanel bookId={book.id} url={book.coverImageUrl} onUploaded={remote.reload} />
      <section class="panel panel-wide" aria-labelledby="book-details-title">
        <h2 id="book-details-title">Details</h2>
        <dl class="details">
          <dt>ISBN</dt>
          <dd>{book.isbn}</dd>
          <dt>Language</dt>
          <dd>{book.language}</dd>
          <dt>Category</dt>
          <dd>{book.category?.name ?? <span class="muted">none</span>}</dd>
          <dt>Publisher</dt>
          <dd>{book.publisher?.name ?? <span class="muted">none</span>}</dd>
          <dt>Published</dt>
          <dd>{book.publishedDate ?? <span class="muted">unknown</span>}</dd>
          <dt>Description</dt>
          <dd>{book.description ?? <span class="muted">none</span>}</dd>
          <dt>Id</dt>
          <dd>
            <code>{book.id}</code>
          </dd>
        </dl>
      </section>
    </>
  );
}

/** The cover as stored, and a file field that replaces it (JPEG, PNG or WebP up to 5 MB, checked by the server). */
function CoverPanel({ bookId, url, onUploaded }: { bookId: string; url: string | null; onUploaded: () => void }) {
  const [file, setFile] = useState<File | undefined>();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const shown = url ? coverOnThisOrigin(url) : undefined;

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    if (!file) {
      setProblem('Choose an image first.');
      return;
    }
    setBusy(true);
    setProblem(undefined);
    setNotice(undefined);
    try {
      await catalogue.uploadCover(bookId, file);
      setNotice('Cover uploaded.');
      onUploaded();
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel panel-wide" aria-labelledby="book-cover-title">
      <h2 id="book-cover-title">Cover</h2>
      {url ? (
        shown ? (
          <img class="cover" src={shown} alt="The book's cover" data-testid="book-cover" />
        ) : (
          <p>
            <a href={url} data-testid="book-cover-link">
              The cover image
            </a>
          </p>
        )
      ) : (
        <p class="muted">No cover yet.</p>
      )}
      <form class="profile-form" onSubmit={(event) => void onSubmit(event)} noValidate>
        <div class="field">
          <label for="cover-file">New cover (JPEG, PNG or WebP, at most 5 MB)</label>
          <input id="cover-file" type="file" accept="image/jpeg,image/png,image/webp" onChange={(event) => setFile(event.currentTarget.files?.[0])} />
        </div>
        <button type="submit" disabled={busy}>
          Upload
        </button>
        {problem ? (
          <p class="state state-error" role="alert" data-testid="cover-error">
            {problem}
          </p>
        ) : null}
        {notice ? (
          <p class="notice" role="status">
            {notice}
          </p>
        ) : null}
      </form>
    </section>
  );
}
