/**
 * The payment service's calls to the book and user services, forwarding the caller's
 * Authorization header. Down or slow is 503; a rejected token stays 401.
 */
import { callService } from '../../platform/http';
import { toCents } from '../../platform/money';
import { AppError, notFound, serviceUnavailable, unauthenticated } from '../../rest-compat/errors';

export interface CatalogueBook {
  id: string;
  title: string;
  priceCents: number;
}

export interface Buyer {
  email: string;
  firstName: string;
  phoneNumber: string;
}

export interface CheckoutDirectory {
  books(ids: string[], authorization: string | undefined): Promise<CatalogueBook[]>;
  buyer(userId: string, authorization: string | undefined): Promise<Buyer>;
}

function failure(service: string, status: number): AppError {
  if (status === 401) return unauthenticated();
  return serviceUnavailable(`The ${service} service answered ${status}`, `${service.toUpperCase()}_UNAVAILABLE`);
}

export function httpCheckoutDirectory(urls: { book: string; user: string }): CheckoutDirectory {
  const headers = (authorization: string | undefined): Record<string, string> => ({
    accept: 'application/json',
    ...(authorization ? { authorization } : {}),
  });
  return {
    async books(ids, authorization) {
      const response = await callService(
        `${urls.book}/api/books/batch`,
        { method: 'POST', headers: { ...headers(authorization), 'content-type': 'application/json' }, body: JSON.stringify(ids) },
        { service: 'book' },
      );
      if (!response.ok) throw failure('book', response.status);
      const books = (await response.json()) as { id: string; title: string; price: number }[];
      return books.map((book) => ({ id: book.id, title: book.title, priceCents: toCents(book.price) }));
    },
    async buyer(userId, authorization) {
      const response = await callService(`${urls.user}/api/user/${userId}`, { headers: headers(authorization) }, { service: 'user' });
      if (response.status === 404) throw notFound(`User not found with id: ${userId}`, 'USER_NOT_FOUND');
      if (!response.ok) throw failure('user', response.status);
      const profile = (await response.json()) as Buyer;
      return { email: profile.email, firstName: profile.firstName, phoneNumber: profile.phoneNumber };
    },
  };
}
