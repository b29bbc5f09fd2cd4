/**
 * The payment service's calls to the book and user services: the profile on the caller's behalf
 * (their Authorization and the request id from the request context), the stock holds with the
 * internal key (platform/contracts/stock.ts). Down or slow is 503; a rejected token stays 401; the
 * book service's own refusals (an unknown book, too few copies, a customer's hold cap) reach the
 * client as it gave them.
 */
import { INTERNAL_KEY_HEADER } from '../../platform/auth';
import { callService } from '../../platform/http';
import { toCents } from '../../platform/money';
import { STOCK_ROUTES, type StockHoldRequest, type StockHoldResponse, type StockReleaseRequest } from '../../platform/contracts/stock';
import type { UserResponseDto } from '../../platform/contracts/profiles';
import { AppError, notFound, serviceUnavailable, unauthenticated } from '../../platform/errors';

export interface CatalogueBook {
  id: string;
  title: string;
  priceCents: number;
}

export interface CheckoutHold {
  /** The cart's books in its order, priced. */
  books: CatalogueBook[];
  expiresAt: Date | null;
  replacedPaymentIds: string[];
}

export type Buyer = Pick<UserResponseDto, 'email' | 'firstName' | 'phoneNumber'>;

export interface CheckoutDirectory {
  /** Prices the cart and holds its tracked lines (CONTRACT §4); 404 unknown book, 409 too few copies or past the hold cap. */
  hold(request: StockHoldRequest): Promise<CheckoutHold>;
  /** Ends a hold at once (a checkout that will not go on). */
  release(request: StockReleaseRequest): Promise<void>;
  buyer(userId: string): Promise<Buyer>;
}

function failure(service: string, status: number): AppError {
  if (status === 401) return unauthenticated();
  return serviceUnavailable(`The ${service} service answered ${status}`, `${service.toUpperCase()}_UNAVAILABLE`);
}

/** The book service's 404 and 409 (an unknown book, too few copies, the hold cap), passed on as they are. */
async function refusalOf(response: Response): Promise<AppError | undefined> {
  if (response.status !== 404 && response.status !== 409) return undefined;
  const body = (await response.json().catch(() => ({}))) as { message?: unknown };
  if (typeof body.message !== 'string') return undefined;
  const code = response.status === 404 ? 'BOOK_NOT_FOUND' : body.message.startsWith('Not enough stock') ? 'NOT_ENOUGH_STOCK' : 'HOLD_LIMIT';
  return new AppError(code, body.message, response.status);
}

export function httpCheckoutDirectory(urls: { book: string; user: string }, internalApiKey: string): CheckoutDirectory {
  const internal = (path: string, body: unknown) =>
    callService(
      `${urls.book}${path}`,
      { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json', [INTERNAL_KEY_HEADER]: internalApiKey }, body: JSON.stringify(body) },
      { service: 'book' },
    );
  return {
    async hold(request) {
      const response = await internal(STOCK_ROUTES.hold, request);
      if (!response.ok) throw (await refusalOf(response)) ?? failure('book', response.status);
      const held = (await response.json()) as StockHoldResponse;
      return {
        books: held.books.map((book) => ({ id: book.id, title: book.title, priceCents: toCents(book.price) })),
        expiresAt: held.expiresAt === null ? null : new Date(held.expiresAt),
        replacedPaymentIds: held.replacedPaymentIds,
      };
    },
    async release(request) {
      const response = await internal(STOCK_ROUTES.release, request);
      if (!response.ok) throw failure('book', response.status);
    },
    async buyer(userId) {
      const response = await callService(`${urls.user}/api/user/${userId}`, { headers: { accept: 'application/json' } }, { service: 'user', asCaller: true });
      if (response.status === 404) throw notFound(`User not found with id: ${userId}`, 'USER_NOT_FOUND');
      if (!response.ok) throw failure('user', response.status);
      const profile = (await response.json()) as Buyer;
      return { email: profile.email, firstName: profile.firstName, phoneNumber: profile.phoneNumber };
    },
  };
}
