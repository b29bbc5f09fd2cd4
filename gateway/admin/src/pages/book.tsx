/** One catalogue book and what it sold: where the dashboard's best sellers link to. */
import { api } from '../api/operations';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { count, money } from '../format';
import { useRemote } from '../hooks';
import { href, Link } from '../router';

export function BookPage({ bookId }: { bookId: string }) {
  const remote = useRemote(() => api.book(bookId), [bookId]);
  const back = (
    <p class="breadcrumb">
      <Link href={href('/')}>Dashboard</Link> / Book
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
      <p class="muted">by {book.authors.join(', ')}</p>
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
          <dd>{count(book.stock)}</dd>
        </div>
      </dl>
      <section class="panel panel-wide" aria-labelledby="book-details-title">
        <h2 id="book-details-title">Details</h2>
        <dl class="details">
          <dt>ISBN</dt>
          <dd>{book.isbn}</dd>
          <dt>Language</dt>
          <dd>{book.language}</dd>
          <dt>Published</dt>
          <dd>{book.publishedDate}</dd>
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
