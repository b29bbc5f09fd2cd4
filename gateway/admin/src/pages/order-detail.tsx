/**
 * One order: its customer, lines and status, its payment's refunds (amount, reason, status, date)
 * with what has come back of the total, and the refund form (refund-form.tsx).
 *
 * The form is offered while the payment is SUCCESS and the order is neither CANCELLED nor REFUNDED:
 * a cancel refunds what is left by itself, and a REFUNDED payment has nothing left. Once a refund is
 * made the page reads the order again, so the list, the totals and what is left follow the payment
 * service's word rather than a sum made here.
 */
import { useState } from 'preact/hooks';
import { api, type OrderDetail, type RefundRow } from '../api/operations';
import { Empty, ErrorMessage, Loading, StatusBadge } from '../components/states';
import { DataTable } from '../components/table';
import { fullName, money, shortId, timestamp } from '../format';
import { useRemote } from '../hooks';
import { href, Link } from '../router';
import { REFUND_REASONS, RefundForm } from './refund-form';

const reasonLabel = (reason: string) => REFUND_REASONS.find((option) => option.value === reason)?.label ?? reason;

function Refunds({ order, payment }: { order: OrderDetail; payment: NonNullable<OrderDetail['payment']> }) {
  const titles = new Map(order.items.map((item) => [item.bookId, item.bookTitle]));
  return (
    <section class="panel panel-wide" aria-labelledby="refunds-title">
      <h2 id="refunds-title">Refunds</h2>
      <p data-testid="refunded-total">
        Refunded <strong>{money(payment.refundedAmount)}</strong> of {money(payment.amount)}
      </p>
      {payment.refunds.length === 0 ? (
        <Empty>No refund yet.</Empty>
      ) : (
        <DataTable testId="refunds" columns={[{ label: 'Amount', numeric: true }, 'Reason', 'Lines', 'Status', 'Date']}>
          {payment.refunds.map((refund) => (
            <tr key={refund.refundId} data-refund-id={refund.refundId}>
              <td class="num">{money(refund.amount)}</td>
              <td>
                {reasonLabel(refund.reason)}
                {refund.note ? <div class="muted small">{refund.note}</div> : null}
              </td>
              <td>
                {refund.items.length === 0 ? (
                  <span class="muted">{refund.orderId ? "the cancel's: what was left" : 'an amount'}</span>
                ) : (
                  refund.items.map((item) => `${item.quantity} × ${titles.get(item.bookId) ?? shortId(item.bookId)}`).join(', ')
                )}
                {refund.restock ? <div class="muted small">put back in stock</div> : null}
              </td>
              <td>
                <StatusBadge status={refund.status} />
                {refund.failureReason ? <div class="muted small">{refund.failureReason}</div> : null}
              </td>
              <td>{timestamp(refund.createdAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}

export function OrderDetailPage({ orderId }: { orderId: string }) {
  const order = useRemote(() => api.order(orderId), [orderId]);
  const [made, setMade] = useState<RefundRow | undefined>();

  const onRefunded = (refund: RefundRow) => {
    setMade(refund);
    order.reload();
  };

  return (
    <>
      <p>
        <Link href={href('/orders')}>← Orders</Link>
      </p>
      <h1>Order {shortId(orderId)}</h1>
      <p class="notice" role="status" aria-live="polite" data-testid="refund-announcement" hidden={!made}>
        {made ? `Refund of ${money(made.amount)}: ${made.status}.` : ''}
      </p>
      {order.status === 'loading' ? <Loading what="the order" /> : null}
      {order.status === 'error' ? <ErrorMessage error={order.error} what="the order" onRetry={order.reload} /> : null}
      {order.status === 'ready' && !order.data ? <Empty>No order {orderId}.</Empty> : null}
      {order.status === 'ready' && order.data ? <Order order={order.data} onRefunded={onRefunded} /> : null}
    </>
  );
}

function Order({ order, onRefunded }: { order: OrderDetail; onRefunded: (refund: RefundRow) => void }) {
  const payment = order.payment;
  const refundable = payment?.status === 'SUCCESS' && order.status !== 'CANCELLED' && order.status !== 'REFUNDED';
  return (
    <>
      <dl class="facts">
        <dt>Customer</dt>
        <dd>
          <Link href={href(`/users/${order.userId}`)}>{order.user ? fullName(order.user) : shortId(order.userId)}</Link>
          {order.user ? <span class="muted"> {order.user.email}</span> : null}
        </dd>
        <dt>Status</dt>
        <dd data-testid="order-status">
          <StatusBadge status={order.status} />
          {order.refundStatus ? <span class="muted"> refund {order.refundStatus}</span> : null}
        </dd>
        {order.cancellationReason ? (
          <>
            <dt>Cancelled because</dt>
            <dd data-testid="order-cancellation-reason">{order.cancellationReason}</dd>
          </>
        ) : null}
        <dt>Created</dt>
        <dd>{timestamp(order.createdAt)}</dd>
      </dl>
      <DataTable testId="order-lines" columns={['Book', { label: 'Quantity', numeric: true }, { label: 'Price', numeric: true }]}>
        {order.items.map((item) => (
          <tr key={item.bookId}>
            <td>
              <Link href={href(`/books/${item.bookId}`)}>{item.bookTitle}</Link>
            </td>
            <td class="num">{item.quantity}</td>
            <td class="num">{money(item.price)}</td>
          </tr>
        ))}
      </DataTable>
      <p>
        Total <strong>{money(order.totalAmount)}</strong>
      </p>
      {payment ? <Refunds order={order} payment={payment} /> : <Empty>The payment of this order cannot be read now.</Empty>}
      {payment && refundable ? <RefundForm key={payment.refunds.length} order={order} payment={payment} onRefunded={onRefunded} /> : null}
    </>
  );
}
