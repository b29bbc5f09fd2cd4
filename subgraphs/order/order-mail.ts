/**
 * The order e-mails: a confirmation when `payment-success` makes the order (or, when its copies were
 * gone, `order-unfilled`: why, and that the refund is on its way), the cancellation with its
 * refund when `payment-refunded` arrives, and the shipment with its tracking number when an admin
 * moves the order to SHIPPED. Each is recorded in the transaction that handles its cause, keyed by
 * the event's id (a consumed event) or the order (shipped, which happens once), so handling a cause
 * twice records one e-mail. The customer's address and first name come with `payment-success` and
 * are kept per order for the e-mails after it.
 *
 * A refund an admin makes of part of an order (`payment-refund-succeeded`) has its own e-mail,
 * `order-refund`: the refunded lines or the amount, the reason in words, the admin's note, and
 * what has been refunded of the order's total so far. It is not sent for a refund that made the
 * payment REFUNDED (`full`): a cancel's refund is always one, and so is an admin's last refund;
 * each is followed, in the same transaction, by `payment-refunded`, whose e-mail (`order-refunded`,
 * the cancellation one for a cancelled order) already tells the customer, as it does for a refund
 * made in the provider's dashboard; so each refund makes one e-mail. Nor is it sent for an order
 * that is CANCELLED: the flags of a refund cannot tell a cancel's from an admin's (both can be
 * full without restock), but the order's status can, and the cancellation e-mail covers its money.
 */
import { Column, Entity, PrimaryColumn, Table, type EntityManager, type MigrationInterface, type QueryRunner } from 'typeorm';
import type { PaymentRefundSucceededEvent, PaymentRefundedEvent, PaymentSuccessEvent } from '../../platform/events/topics';
import { enqueueMail } from '../../platform/mail/outbox';
import type { MailTemplates } from '../../platform/mail/templates';
import { fromCents, toCents } from '../../platform/money';
import { validationError } from '../../platform/validation';
import { Order, OrderItem } from './entities';

@Entity({ name: 'order_mail_recipients' })
export class OrderRecipient {
  @PrimaryColumn({ name: 'order_id', type: 'varchar', length: 36 })
  orderId!: string;

  @Column({ type: 'varchar', length: 100 })
  email!: string;

  @Column({ name: 'first_name', type: 'varchar', length: 50 })
  firstName!: string;
}

export class OrderMailRecipients1732000000430 implements MigrationInterface {
  name = 'OrderMailRecipients1732000000430';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'order_mail_recipients',
        columns: [
          { name: 'order_id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'email', type: 'varchar', length: '100' },
          { name: 'first_name', type: 'varchar', length: '50' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('order_mail_recipients');
  }
}

/** `trackingNumber` of `PUT /api/orders/{id}/status?status=SHIPPED`: letters, digits, spaces and dashes, at most 64. */
export function parseTrackingNumber(value: unknown, status: string): string | null {
  if (value === undefined) return null;
  if (status !== 'SHIPPED') throw validationError('trackingNumber: only with status SHIPPED');
  if (typeof value !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9 -]{0,63}$/.test(value.trim())) {
    throw validationError('trackingNumber: must be 1 to 64 letters, digits, spaces or dashes');
  }
  return value.trim();
}

/** The refund reasons of CONTRACT §11 as the customer reads them; an unknown one reads as the last. */
const REFUND_REASONS: Record<string, string> = {
  REQUESTED_BY_CUSTOMER: 'at your request',
  DAMAGED: 'the books arrived damaged',
  DUPLICATE: 'a duplicate charge',
  FRAUDULENT: 'a fraudulent charge',
  OTHER: 'other',
};

interface Line {
  bookTitle: string;
  quantity: number;
  unitPriceCents: number;
}

export class OrderMail {
  constructor(
    private readonly templates: MailTemplates,
    private readonly currency: string,
  ) {}

  async confirmed(manager: EntityManager, event: PaymentSuccessEvent, order: Order): Promise<void> {
    const recipient = { orderId: order.id, email: event.email, firstName: event.firstName.slice(0, 50) };
    await manager.insert(OrderRecipient, recipient);
    await this.record(manager, event.eventId, 'order-confirmation', recipient, order, await this.lines(manager, order.id));
  }

  /** A paid order whose copies were gone (CONTRACT §6): why, and that the money is on its way back. */
  async unfilled(manager: EntityManager, event: PaymentSuccessEvent, order: Order): Promise<void> {
    const recipient = { orderId: order.id, email: event.email, firstName: event.firstName.slice(0, 50) };
    await manager.insert(OrderRecipient, recipient);
    const shortage = (order.cancellationReason ?? '').replace(/^Out of stock: /, '');
    await this.record(manager, event.eventId, 'order-unfilled', recipient, order, await this.lines(manager, order.id), {
      shortage: `we no longer have enough copies of ${shortage}`,
    });
  }

  async refunded(manager: EntityManager, event: PaymentRefundedEvent): Promise<void> {
    const order = await manager.findOne(Order, { where: { paymentId: event.paymentId.toLowerCase() } });
    const recipient = order && (await manager.findOne(OrderRecipient, { where: { orderId: order.id } }));
    if (!order || !recipient) return;
    await this.record(manager, event.eventId, 'order-refunded', recipient, order, await this.lines(manager, order.id), {
      cancelled: order.status === 'CANCELLED',
      refunded: this.money(toCents(event.amount)),
    });
  }

  async refundSucceeded(manager: EntityManager, event: PaymentRefundSucceededEvent): Promise<void> {
    if (event.full) return;
    const order = await manager.findOne(Order, { where: { paymentId: event.paymentId.toLowerCase() } });
    const recipient = order && (await manager.findOne(OrderRecipient, { where: { orderId: order.id } }));
    if (!order || !recipient || order.status === 'CANCELLED') return;
    const lines = event.items.map((item) => ({ bookTitle: item.bookTitle, quantity: item.quantity, unitPriceCents: toCents(item.price) }));
    await this.record(manager, event.eventId, 'order-refund', recipient, order, lines, {
      byLines: lines.length > 0,
      refunded: this.money(toCents(event.amount)),
      refundedTotal: this.money(toCents(event.refundedAmount)),
      reason: REFUND_REASONS[event.reason] ?? REFUND_REASONS.OTHER,
      note: event.note.trim(),
    });
  }

  async shipped(manager: EntityManager, order: Order, trackingNumber: string | null): Promise<void> {
    const recipient = await manager.findOne(OrderRecipient, { where: { orderId: order.id } });
    if (!recipient) return;
    await this.record(manager, order.id, 'order-shipped', recipient, order, await this.lines(manager, order.id), { trackingNumber });
  }

  private lines(manager: EntityManager, orderId: string): Promise<OrderItem[]> {
    return manager.find(OrderItem, { where: { orderId }, order: { position: 'ASC' } });
  }

  private record(manager: EntityManager, cause: string, template: string, recipient: OrderRecipient, order: Order, lines: Line[], extra: Record<string, unknown> = {}) {
    return enqueueMail(manager, this.templates, {
      cause,
      template,
      to: recipient.email,
      data: {
        firstName: recipient.firstName,
        orderId: order.id,
        orderNumber: order.id.slice(0, 8).toUpperCase(),
        lines: lines.map((line) => ({
          title: line.bookTitle,
          quantity: line.quantity,
          price: this.money(line.unitPriceCents),
          lineTotal: this.money(line.unitPriceCents * line.quantity),
        })),
        total: this.money(order.totalCents),
        ...extra,
      },
    });
  }

  private money(cents: number): string {
    return `${fromCents(cents).toFixed(2)} ${this.currency.toUpperCase()}`;
  }
}
