/**
 * The payment service's calls to the book and user services on the caller's behalf: they carry the
 * caller's Authorization and the request id from the request context. Down or slow is 503; a
 * rejected token stays 401.
 */
import { callService } from '../../platform/http';
import { toCents } from '../../platform/money';
import type { BookResponseDto } from '../../platform/contracts/books';
import type { UserResponseDto } from '../../platform/contracts/profiles';
import { type AppError, notFound, serviceUnavailable, unauthenticated } from '../../platform/errors';

export interface CatalogueBook {
  id: string;
  title: string;
  priceCents: number;
  /** Copies in stock; null when the book's inventory is not tracked. */
  stock: number | null;
}

export type Buyer = Pick<UserResponseDto, 'email' | 'firstName' | 'phoneNumber'>;

export interface CheckoutDirectory {
  books(ids: string[]): Promise<CatalogueBook[]>;
  buyer(userId: string): Promise<Buyer>;
}

function failure(service: string, status: number): AppError {
  if (status === 401) return unauthenticated();
  return serviceUnavailable(`The ${service} service answered ${status}`, `${service.toUpperCase()}_UNAVAILABLE`);
}

export function httpCheckoutDirectory(urls: { book: string; user: string }): CheckoutDirectory {
  return {
    async books(ids) {
      const response = await callService(
        `${urls.book}/api/books/batch`,
        { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json' }, body: JSON.stringify(ids) },
        { service: 'book', asCaller: true },
      );
      if (!response.ok) throw failure('book', response.status);
      const books = (await response.json()) as Pick<BookResponseDto, 'id' | 'title' | 'price' | 'stock'>[];
      return books.map((book) => ({ id: book.id, title: book.title, priceCents: toCents(book.price), stock: book.stock ?? null }));
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
