import { randomUUID } from 'node:crypto';
import { plainToInstance, type ClassConstructor } from 'class-transformer';
import { validate } from 'class-validator';
import { parseEvent } from './consumer';
import { passesQuickly } from './quick-validation';
import {
  OrderCancelledEvent,
  OrderCreatedEvent,
  PaymentCompletedEvent,
  PaymentCreatedEvent,
  PaymentFailedEvent,
  PaymentRefundedEvent,
  PaymentSuccessEvent,
  SessionsRevokedEvent,
  UserDeletedEvent,
  type EventEnvelope,
} from './topics';

const item = () => ({ bookId: randomUUID(), bookTitle: 'Dracula', quantity: 2, price: 12.99 });
const envelope = (type: string) => ({ eventId: randomUUID(), type, occurredAt: '2026-11-21T10:00:00.000Z' });
const checkout = (type: string) => ({ ...envelope(type), paymentId: randomUUID(), checkoutId: randomUUID(), userId: randomUUID(), amount: 25.98 });
const order = (type: string) => ({ ...envelope(type), orderId: randomUUID(), paymentId: randomUUID(), userId: randomUUID(), items: [item()] });

const VALID: [ClassConstructor<EventEnvelope>, Record<string, unknown>][] = [
  [PaymentCreatedEvent, { ...checkout('PaymentCreatedEvent'), items: [item(), item()] }],
  [PaymentSuccessEvent, { ...checkout('PaymentSuccessEvent'), transactionId: 'pi_1', items: [item()], email: 'a@example.com', firstName: 'A', phoneNumber: '+1' }],
  [PaymentFailedEvent, { ...checkout('PaymentFailedEvent'), transactionId: 'pi_1', reason: 'card_declined' }],
  [PaymentFailedEvent, { ...checkout('PaymentFailedEvent'), transactionId: 'pi_1', reason: 'checkout_expired', holdId: randomUUID() }],
  [PaymentRefundedEvent, { ...envelope('PaymentRefundedEvent'), paymentId: randomUUID(), userId: randomUUID(), transactionId: 'pi_1', amount: 0 }],
  [PaymentCompletedEvent, { ...envelope('PaymentCompletedEvent'), paymentId: randomUUID(), orderId: randomUUID(), transactionId: 'pi_1', amount: 3 }],
  [OrderCreatedEvent, { ...order('OrderCreatedEvent'), totalAmount: 25.98, status: 'CONFIRMED' }],
  [OrderCancelledEvent, { ...order('OrderCancelledEvent'), items: [] }],
  [UserDeletedEvent, { ...envelope('UserDeletedEvent'), userId: randomUUID() }],
  [SessionsRevokedEvent, { ...envelope('SessionsRevokedEvent'), userId: randomUUID(), sessionIds: [randomUUID()] }],
];

/** Changes that break (or, for some, keep) a valid payload; each is tried on every payload that has the field. */
const CHANGES: [string, unknown][] = [
  ['eventId', 'not-a-uuid'],
  ['eventId', undefined],
  ['eventId', 42],
  ['type', 'SomethingElse'],
  ['type', undefined],
  ['occurredAt', '2026-11-21'],
  ['occurredAt', '2026-13-45T10:00:00Z'],
  ['occurredAt', null],
  ['paymentId', randomUUID().toUpperCase()],
  ['paymentId', ''],
  ['userId', {}],
  ['amount', 1.005],
  ['amount', -1],
  ['amount', '12.99'],
  ['amount', null],
  ['amount', 1e21],
  ['totalAmount', Number.MAX_SAFE_INTEGER],
  ['transactionId', 7],
  ['reason', undefined],
  ['holdId', 'nope'],
  ['holdId', null],
  ['status', ['CONFIRMED']],
  ['email', ''],
  ['items', []],
  ['items', {}],
  ['items', [[]]],
  ['items', [null]],
  ['items', ['x']],
  ['items', [{}]],
  ['items', [{ bookTitle: 'x', quantity: 1, price: 1 }]],
  ['items', [{ ...item(), quantity: 0 }]],
  ['items', [{ ...item(), quantity: 1.5 }]],
  ['items', [{ ...item(), price: 1.234 }]],
  ['items', [{ ...item(), price: -0.01 }]],
  ['items', [{ ...item(), bookTitle: 3 }]],
  ['items', [{ ...item(), extra: true }]],
  ['items', [item(), { ...item(), bookId: 'nope' }]],
  ['items', undefined],
  ['sessionIds', []],
  ['sessionIds', ['nope']],
  ['sessionIds', 'nope'],
  ['extra', 'ignored'],
];

/** What class-validator alone decides for `payload`: the messages, empty when it accepts. */
async function classValidatorVerdict(schema: ClassConstructor<EventEnvelope>, payload: unknown): Promise<string[]> {
  const errors = await validate(plainToInstance(schema, payload) as object, { forbidUnknownValues: true });
  return errors.flatMap((e) => Object.values(e.constraints ?? { [e.property]: 'is invalid' }));
}

async function parseVerdict(schema: ClassConstructor<EventEnvelope>, payload: unknown): Promise<string[]> {
  try {
    await parseEvent(schema, JSON.stringify(payload));
    return [];
  } catch (error) {
    return [(error as Error).message];
  }
}

describe('quick validation of event payloads', () => {
  const cases = VALID.flatMap(([schema, valid]) => [
    { name: `${schema.name} as produced`, schema, payload: valid },
    ...CHANGES.filter(([field]) => field in valid || field === 'extra').map(([field, value]) => ({
      name: `${schema.name} with ${field} = ${JSON.stringify(value)}`,
      schema,
      payload: JSON.parse(JSON.stringify({ ...valid, [field]: value })) as Record<string, unknown>,
    })),
  ]);

  it.each(cases.map((c) => [c.name, c] as const))('decides %s as class-validator does, with its messages', async (_name, { schema, payload }) => {
    const expected = await classValidatorVerdict(schema, payload);
    const instance = plainToInstance(schema, payload) as object;
    // Never a pass that class-validator would refuse.
    if (passesQuickly(instance)) expect(expected).toEqual([]);
    const got = await parseVerdict(schema, payload);
    expect(got).toEqual(expected.length === 0 ? [] : [`payload failed validation: ${expected.join('; ')}`]);
  });

  it('passes every valid payload quickly', () => {
    for (const [schema, payload] of VALID) expect(passesQuickly(plainToInstance(schema, payload) as object)).toBe(true);
  });

  it('leaves a class without validation metadata to class-validator', () => {
    class Unknown {
      value = 1;
    }
    expect(passesQuickly(new Unknown())).toBe(false);
  });
});
