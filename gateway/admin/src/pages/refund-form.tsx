/**
 * The refund form of the order page: some copies of the order's lines, or an amount, with a reason,
 * a note and whether the copies go back in stock; it calls the payment service's refundPayment.
 *
 * What is left to refund counts every refund that has not FAILED: a PENDING one will most likely
 * succeed, and offering its copies or money again would only earn a refusal. Quantities are held to
 * what is left per book here; an amount is checked for its form only, and the payment service
 * answers one beyond what is left with its own message ("Refund exceeds the amount left: …"), shown
 * as it comes. "Put back in stock" is offered for lines only (an amount names no copies) and starts
 * unticked: copies a customer keeps or that came back damaged must not be sold again.
 */
import { useState } from 'preact/hooks';
import { api, type OrderDetail, type RefundInput, type RefundReason, type RefundRow } from '../api/operations';
import { cents, decimal, money } from '../format';

export const REFUND_REASONS: { value: RefundReason; label: string }[] = [
  { value: 'REQUESTED_BY_CUSTOMER', label: 'Requested by the customer' },
  { value: 'DAMAGED', label: 'Damaged' },
  { value: 'DUPLICATE', label: 'Duplicate' },
  { value: 'FRAUDULENT', label: 'Fraudulent' },
  { value: 'OTHER', label: 'Other' },
];

export const NOTE_MAX = 500;

type Payment = NonNullable<OrderDetail['payment']>;

export interface RefundableLine {
  bookId: string;
  bookTitle: string;
  price: string;
  /** Copies not refunded yet. */
  left: number;
}

const counted = (refunds: readonly RefundRow[]) => refunds.filter((refund) => refund.status !== 'FAILED');

/** The order's lines by book, each with the copies no refund that counts has covered. */
export function refundableLines(order: OrderDetail, refunds: readonly RefundRow[]): RefundableLine[] {
  const byBook = new Map<string, RefundableLine>();
  for (const item of order.items) {
    const line = byBook.get(item.bookId) ?? { bookId: item.bookId, bookTitle: item.bookTitle, price: item.price, left: 0 };
    line.left += item.quantity;
    byBook.set(item.bookId, line);
  }
  for (const refund of counted(refunds)) {
    for (const item of refund.items) {
      const line = byBook.get(item.bookId);
      if (line) line.left = Math.max(0, line.left - item.quantity);
    }
  }
  return [...byBook.values()];
}

/** The payment's amount less what came back and what pending refunds will give back, in cents. */
export function amountLeftCents(payment: Payment): number {
  const pending = payment.refunds.filter((refund) => refund.status === 'PENDING').reduce((sum, refund) => sum + cents(refund.amount), 0);
  return Math.max(0, cents(payment.amount) - cents(payment.refundedAmount) - pending);
}

export function RefundForm({ order, payment, onRefunded }: { order: OrderDetail; payment: Payment; onRefunded: (refund: RefundRow) => void }) {
  const lines = refundableLines(order, payment.refunds);
  const left = amountLeftCents(payment);
  const [mode, setMode] = useState<'lines' | 'amount'>('lines');
  const [quantities, setQuantities] = useState<Record<string, string>>({});
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState<RefundReason>('REQUESTED_BY_CUSTOMER');
  const [note, setNote] = useState('');
  const [restock, setRestock] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>();

  /** The input to send, or the reason the form cannot be sent yet. */
  const build = (): RefundInput | string => {
    const common = { reason, note: note.trim() || null };
    if (mode === 'amount') {
      const value = cents(amount);
      if (!(value > 0)) return 'Enter an amount above zero, with at most two decimals.';
      return { ...common, amount: decimal(value) };
    }
    const items = [];
    for (const line of lines) {
      const text = (quantities[line.bookId] ?? '').trim();
      if (text === '' || text === '0') continue;
      const quantity = Number(text);
      if (!Number.isInteger(quantity) || quantity < 0 || quantity > line.left) return `${line.bookTitle}: a whole number of copies from 0 to ${line.left}.`;
      items.push({ bookId: line.bookId, quantity });
    }
    if (items.length === 0) return 'Choose at least one copy to refund.';
    return { ...common, items, restock };
  };

  const onSubmit = async (event: Event) => {
    event.preventDefault();
    const input = build();
    if (typeof input === 'string') {
      setProblem(input);
      return;
    }
    setBusy(true);
    setProblem(undefined);
    try {
      onRefunded(await api.refundPayment(payment.paymentId, input));
      setQuantities({});
      setAmount('');
      setNote('');
      setRestock(false);
    } catch (caught) {
      setProblem(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="panel refund-form" onSubmit={(event) => void onSubmit(event)} aria-labelledby="refund-form-title" noValidate data-testid="refund-form">
      <h2 id="refund-form-title">Refund</h2>
      <fieldset class="choices" disabled={busy}>
        <legend>Refund by</legend>
        <label class="choice">
          <input type="radio" name="refund-mode" value="lines" checked={mode === 'lines'} onChange={() => setMode('lines')} /> Lines
        </label>
        <label class="choice">
          <input type="radio" name="refund-mode" value="amount" checked={mode === 'amount'} onChange={() => setMode('amount')} /> Amount
        </label>
      </fieldset>

      {mode === 'lines' ? (
        <fieldset class="choices refund-lines" disabled={busy}>
          <legend>Copies to refund</legend>
          {lines.map((line) => (
            <div class="field field-inline" key={line.bookId}>
              <label for={`refund-qty-${line.bookId}`}>
                {line.bookTitle} <span class="muted">at {money(line.price)}</span>
              </label>
              <input
                id={`refund-qty-${line.bookId}`}
                type="number"
                min={0}
                max={line.left}
                step={1}
                inputMode="numeric"
                value={quantities[line.bookId] ?? ''}
                placeholder="0"
                disabled={line.left === 0}
                onInput={(event) => setQuantities({ ...quantities, [line.bookId]: event.currentTarget.value })}
              />
              <small class="muted">{line.left === 0 ? 'all refunded' : `up to ${line.left}`}</small>
            </div>
          ))}
          <label class="choice">
            <input type="checkbox" checked={restock} onChange={(event) => setRestock(event.currentTarget.checked)} /> Put back in stock
          </label>
        </fieldset>
      ) : (
        <div class="field">
          <label for="refund-amount">Amount</label>
          <input
            id="refund-amount"
            inputMode="decimal"
            value={amount}
            disabled={busy}
            aria-describedby="refund-amount-hint"
            onInput={(event) => setAmount(event.currentTarget.value)}
          />
          <small id="refund-amount-hint" class="muted">
            Up to {money(decimal(left))}
          </small>
        </div>
      )}

      <div class="field">
        <label for="refund-reason">Reason</label>
        <select id="refund-reason" value={reason} disabled={busy} onChange={(event) => setReason(event.currentTarget.value as RefundReason)}>
          {REFUND_REASONS.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="refund-note">Note</label>
        <textarea
          id="refund-note"
          maxLength={NOTE_MAX}
          rows={3}
          value={note}
          disabled={busy}
          aria-describedby="refund-note-hint"
          onInput={(event) => setNote(event.currentTarget.value)}
        />
        <small id="refund-note-hint" class="muted">
          {NOTE_MAX - note.length} characters left.
        </small>
      </div>
      <button type="submit" disabled={busy}>
        {busy ? 'Refunding…' : 'Refund'}
      </button>
      {problem ? (
        <p class="field-error" role="alert" data-testid="refund-error">
          {problem}
        </p>
      ) : null}
    </form>
  );
}
