/**
 * Orders: every order newest first, filtered by status (`?status=`), a page at a time (`?page=`),
 * and each moved on only to the statuses its current one allows. An order's id opens its page
 * (order-detail.tsx), where its payment is refunded in part.
 */
import { useState } from 'preact/hooks';
import { api, ORDER_STATUSES, type OrderRow, type OrderStatus } from '../api/operations';
import { Empty, ErrorMessage, Loading, StatusBadge } from '../components/states';
import { DataTable } from '../components/table';
import { fullName, money, shortId, timestamp } from '../format';
import { useRemote } from '../hooks';
import { href, Link, navigate, type Location } from '../router';

const PAGE_SIZE = 25;

function StatusChange({ order, onChanged }: { order: OrderRow; onChanged: (order: OrderRow) => void }) {
  const options = order.allowedNextStatuses;
  const [next, setNext] = useState<OrderStatus | ''>('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  if (options.length === 0) return <span class="muted">final</span>;

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    if (!next) return;
    setBusy(true);
    setError(undefined);
    try {
      const changed = await api.updateOrderStatus(order.orderId, next);
      onChanged({ ...order, ...changed });
      setNext('');
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  };

  const id = `next-${order.orderId}`;
  return (
    <form class="status-form" onSubmit={(event) => void onSubmit(event)}>
      <label for={id} class="visually-hidden">
        New status for order {shortId(order.orderId)}
      </label>
      <select id={id} value={next} onChange={(event) => setNext(event.currentTarget.value as OrderStatus | '')} disabled={busy}>
        <option value="">Move to…</option>
        {options.map((status) => (
          <option key={status} value={status}>
            {status}
          </option>
        ))}
      </select>
      <button type="submit" disabled={busy || !next}>
        {busy ? 'Saving…' : 'Apply'}
      </button>
      {error ? (
        <small class="field-error" role="alert">
          {error}
        </small>
      ) : null}
    </form>
  );
}

export function OrdersPage({ location }: { location: Location }) {
  const wanted = location.query.get('status');
  const status = ORDER_STATUSES.find((s) => s === wanted);
  const page = Math.max(1, Number.parseInt(location.query.get('page') ?? '1', 10) || 1);
  const orders = useRemote(() => api.orders(status, PAGE_SIZE, (page - 1) * PAGE_SIZE), [status, page]);
  const [changed, setChanged] = useState<Record<string, OrderRow>>({});
  const [announcement, setAnnouncement] = useState('');

  const goTo = (query: { status?: string; page?: number }) =>
    navigate(href('/orders', { status: query.status, page: query.page && query.page > 1 ? String(query.page) : undefined }));

  const onChanged = (order: OrderRow) => {
    setChanged((all) => ({ ...all, [order.orderId]: order }));
    setAnnouncement(`Order ${shortId(order.orderId)} is now ${order.status}.`);
  };

  return (
    <>
      <h1>Orders</h1>
      <div class="toolbar">
        <label for="status-filter">Status</label>
        <select id="status-filter" value={status ?? ''} onChange={(event) => goTo({ status: event.currentTarget.value || undefined })}>
          <option value="">All</option>
          {ORDER_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <p class="notice" role="status" aria-live="polite" data-testid="order-announcement" hidden={!announcement}>
        {announcement}
      </p>

      {orders.status === 'loading' ? <Loading what="orders" /> : null}
      {orders.status === 'error' ? <ErrorMessage error={orders.error} what="orders" onRetry={orders.reload} /> : null}
      {orders.status === 'ready' && orders.data.length === 0 ? (
        <Empty>{page > 1 ? 'No more orders.' : status ? `No ${status} orders.` : 'No orders yet: they appear here once a payment succeeds.'}</Empty>
      ) : null}
      {orders.status === 'ready' && orders.data.length > 0 ? (
        <DataTable testId="orders" columns={['Order', 'Customer', 'Items', { label: 'Total', numeric: true }, 'Status', 'Created', 'Change status']}>
          {orders.data.map((original) => {
            const order = changed[original.orderId] ?? original;
            return (
              <tr key={order.orderId} data-order-id={order.orderId}>
                <td>
                  <Link href={href(`/orders/${order.orderId}`)}>
                    <code title={order.orderId}>{shortId(order.orderId)}</code>
                  </Link>
                </td>
                <td>
                  <Link href={href(`/users/${order.userId}`)}>{order.user ? fullName(order.user) : shortId(order.userId)}</Link>
                  {order.user ? <div class="muted small">{order.user.email}</div> : null}
                </td>
                <td>{order.items.map((item) => `${item.quantity} × ${item.bookTitle}`).join(', ')}</td>
                <td class="num">{money(order.totalAmount)}</td>
                <td data-testid="order-status">
                  <StatusBadge status={order.status} />
                </td>
                <td>{timestamp(order.createdAt)}</td>
                <td>
                  <StatusChange key={order.status} order={order} onChanged={onChanged} />
                </td>
              </tr>
            );
          })}
        </DataTable>
      ) : null}
      {orders.status === 'ready' && (page > 1 || orders.data.length === PAGE_SIZE) ? (
        <nav class="pager" aria-label="Pages">
          <button type="button" class="button-secondary" disabled={page <= 1} onClick={() => goTo({ status, page: page - 1 })}>
            Previous
          </button>
          <span>Page {page}</span>
          <button type="button" class="button-secondary" disabled={orders.data.length < PAGE_SIZE} onClick={() => goTo({ status, page: page + 1 })}>
            Next
          </button>
        </nav>
      ) : null}
    </>
  );
}
