/**
 * Refund on cancel (CONTRACT §6): `order-cancelled` has the payment's PaymentIntent refunded in
 * full through the provider. The provider call is keyed by the orderId, so an event delivered again
 * (or published again under another event id) refunds once. A refund the provider refuses rejects,
 * and the consumer redelivers the event with a back-off until the provider takes it: it is never
 * dropped. The payment becomes REFUNDED when the provider's `charge.refunded` webhook arrives
 * (webhook.ts), exactly as for a refund made in the provider's dashboard.
 */
import type { Database } from '../../platform/database';
import type { OrderCancelledEvent } from '../../platform/events/topics';
import type { Logger } from '../../platform/logger';
import { Payment } from './entities';
import type { PaymentProvider } from './provider';

/** The provider's idempotency key for the refund of one order. */
export const refundIdempotencyKey = (orderId: string) => `order-cancelled-refund-${orderId.toLowerCase()}`;

export class RefundOnCancel {
  constructor(
    private readonly db: Database,
    private readonly provider: PaymentProvider,
    private readonly logger: Logger,
  ) {}

  async refund(event: OrderCancelledEvent): Promise<void> {
    const orderId = event.orderId.toLowerCase();
    const payment = await this.db.manager.findOne(Payment, { where: { id: event.paymentId.toLowerCase() } });
    if (!payment) {
      this.logger.warn({ orderId, paymentId: event.paymentId }, 'cancelled order for an unknown payment; nothing to refund');
      return;
    }
    if (payment.status !== 'SUCCESS' || !payment.paymentIntentId) {
      this.logger.info({ orderId, paymentId: payment.id, status: payment.status }, 'cancelled order whose payment holds no money; nothing to refund');
      return;
    }
    const refundId = await this.provider.refundInFull({
      paymentIntentId: payment.paymentIntentId,
      metadata: { orderId, paymentId: payment.id },
      idempotencyKey: refundIdempotencyKey(orderId),
    });
    if (refundId) this.logger.info({ orderId, paymentId: payment.id, refundId }, 'refund requested for a cancelled order');
    else this.logger.info({ orderId, paymentId: payment.id }, 'cancelled order already refunded at the provider');
  }
}
