/**
 * The order service's one call to the book service (platform/contracts/stock.ts): before a paid
 * order is confirmed, its copies are taken (its hold's, or what is free), all or none (CONTRACT §4,
 * §6). The book service answers the same for the same payment however often it is asked, so a
 * redelivered `payment-success` asks again safely. Down or slow is a 503, and the event waits.
 */
import { INTERNAL_KEY_HEADER } from '../../platform/auth';
import { STOCK_ROUTES, type StockCommitRequest, type StockCommitResponse, type StockShortage } from '../../platform/contracts/stock';
import { serviceUnavailable } from '../../platform/errors';
import { callService } from '../../platform/http';

export interface OrderStock {
  commit(request: StockCommitRequest): Promise<StockCommitResponse>;
}

export function httpOrderStock(bookUrl: () => string, internalApiKey: string): OrderStock {
  return {
    async commit(request) {
      const response = await callService(
        `${bookUrl()}${STOCK_ROUTES.commit}`,
        { method: 'POST', headers: { accept: 'application/json', 'content-type': 'application/json', [INTERNAL_KEY_HEADER]: internalApiKey }, body: JSON.stringify(request) },
        { service: 'book' },
      );
      if (!response.ok) throw serviceUnavailable(`The book service answered ${response.status}`, 'BOOK_UNAVAILABLE');
      return (await response.json()) as StockCommitResponse;
    },
  };
}

/** The order's cancellation reason, as a customer and an admin read it: "Out of stock: Dune (1 left), Emma (0 left)". */
export function outOfStockReason(shortages: readonly StockShortage[]): string {
  const books = shortages.map((short) => `${short.title} (${short.left} left)`).join(', ');
  return `Out of stock: ${books}`.slice(0, 500);
}
