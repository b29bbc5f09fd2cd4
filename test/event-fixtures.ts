/**
 * A tiny service for the event tests: a counters table with its migration, one event type, and
 * throwaway databases (SQLite in a temp dir, or MySQL/MariaDB when DB_URL is set).
 */
import 'reflect-metadata';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { Equals, IsISO8601, IsInt, IsString, IsUUID, Min } from 'class-validator';
import { Column, Entity, PrimaryColumn, Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import type { Config } from '../platform/config';
import { openDatabase, type Database } from '../platform/database';
import { createLogger } from '../platform/logger';
import { KafkaBus, type KafkaBusOptions } from '../platform/events/kafka';
import type {
  EventEnvelope,
  OrderCancelledEvent,
  OrderCreatedEvent,
  PaymentRefundFailedEvent,
  PaymentRefundSucceededEvent,
  PaymentRefundedEvent,
  PaymentSuccessEvent,
} from '../platform/events/topics';
import { EVENT_ENTITIES, EVENT_MIGRATIONS } from '../platform/events/tables';
import { dropDatabases, runConfig, testConfig } from './stack';

export const testLogger = createLogger(runConfig.logLevel, { test: true });

@Entity({ name: 'counters' })
export class Counter {
  @PrimaryColumn({ type: 'varchar', length: 60 })
  name!: string;

  @Column({ type: 'int' })
  value!: number;
}

export class TestCounters1900000000000 implements MigrationInterface {
  name = 'TestCounters1900000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'counters',
        columns: [
          { name: 'name', type: 'varchar', length: '60', isPrimary: true },
          { name: 'value', type: 'int' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('counters');
  }
}

export class CounterIncremented implements EventEnvelope {
  @IsUUID()
  eventId!: string;

  @Equals('CounterIncremented')
  type!: 'CounterIncremented';

  @IsISO8601({ strict: true })
  occurredAt!: string;

  @IsString()
  counter!: string;

  @IsInt()
  @Min(0)
  seq!: number;
}

export function counterIncremented(counter: string, seq: number): CounterIncremented {
  return { eventId: randomUUID(), type: 'CounterIncremented', occurredAt: new Date().toISOString(), counter, seq };
}

/** A payment-success event as the payment service publishes it for `userId`: two lines worth 60.07 in all. */
export function paymentSuccessEvent(userId: string, overrides: Partial<PaymentSuccessEvent> = {}): PaymentSuccessEvent {
  return {
    eventId: randomUUID(),
    type: 'PaymentSuccessEvent',
    occurredAt: new Date().toISOString(),
    paymentId: randomUUID(),
    checkoutId: randomUUID(),
    userId,
    transactionId: `pi_${randomUUID().replace(/-/g, '')}`,
    amount: 60.07,
    items: [
      { bookId: randomUUID(), bookTitle: 'Middlemarch', quantity: 3, price: 19.99 },
      { bookId: randomUUID(), bookTitle: 'Bookmark', quantity: 1, price: 0.1 },
    ],
    email: 'reader@example.com',
    firstName: 'Ada',
    phoneNumber: '+14155550100',
    ...overrides,
  };
}

/** The payment-refunded event of a full refund of `payment`. */
export function paymentRefundedEvent(payment: Pick<PaymentRefundedEvent, 'paymentId' | 'userId' | 'transactionId' | 'amount'>): PaymentRefundedEvent {
  const { paymentId, userId, transactionId, amount } = payment;
  return { eventId: randomUUID(), type: 'PaymentRefundedEvent', occurredAt: new Date().toISOString(), paymentId, userId, transactionId, amount };
}

/** The payment-refund-failed event of an order whose refund the provider refused for good. */
export function paymentRefundFailedEvent(fields: Pick<PaymentRefundFailedEvent, 'paymentId' | 'orderId' | 'userId'>, reason = 'balance_insufficient'): PaymentRefundFailedEvent {
  return { eventId: randomUUID(), type: 'PaymentRefundFailedEvent', occurredAt: new Date().toISOString(), ...fields, reason };
}

/**
 * A payment-refund-succeeded event of an admin's partial refund of `payment`: by lines when `items`
 * are given (valued at their unit price), else of `amount`; no restock, not the last refund, unless
 * the fields say otherwise.
 */
export function paymentRefundSucceededEvent(
  payment: Pick<PaymentRefundSucceededEvent, 'paymentId' | 'userId' | 'paymentAmount'> & Partial<PaymentRefundSucceededEvent>,
): PaymentRefundSucceededEvent {
  const items = payment.items ?? [];
  const amount = payment.amount ?? Math.round(items.reduce((sum, item) => sum + item.price * item.quantity * 100, 0)) / 100;
  return {
    eventId: randomUUID(),
    type: 'PaymentRefundSucceededEvent',
    occurredAt: new Date().toISOString(),
    refundId: randomUUID(),
    orderId: null,
    reason: 'REQUESTED_BY_CUSTOMER',
    note: '',
    restock: false,
    full: false,
    refundedAmount: amount,
    ...payment,
    items,
    amount,
  };
}

type OrderFields = Pick<OrderCreatedEvent, 'orderId' | 'paymentId' | 'userId' | 'items'>;

/** An order-created event of a CONFIRMED order unless `status` says otherwise. */
export function orderCreatedEvent(fields: OrderFields & Pick<OrderCreatedEvent, 'totalAmount'> & Partial<OrderCreatedEvent>): OrderCreatedEvent {
  return { eventId: randomUUID(), type: 'OrderCreatedEvent', occurredAt: new Date().toISOString(), status: 'CONFIRMED', ...fields };
}

/** An order-cancelled event for `paymentId` with these lines, of an order with a new id unless given. */
export function orderCancelledEvent(fields: Pick<OrderCancelledEvent, 'paymentId' | 'userId' | 'items'> & Partial<OrderCancelledEvent>): OrderCancelledEvent {
  return { eventId: randomUUID(), type: 'OrderCancelledEvent', occurredAt: new Date().toISOString(), orderId: randomUUID(), ...fields };
}

export async function readCounter(db: Database, name: string): Promise<number> {
  return (await db.manager.findOneBy(Counter, { name }))?.value ?? 0;
}

/** Ports nothing listens on now, e.g. for a broker of a test's own or one that is not there. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer().once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export function makeKafkaBus(overrides: Partial<KafkaBusOptions> = {}): KafkaBus {
  return new KafkaBus({ brokers: runConfig.kafkaBrokers ?? [], clientId: 'bookstore-test', logger: testLogger, ...overrides });
}

/** Databases named with a prefix unique to this test file, all dropped by `dropAll()`. */
export class TestDatabases {
  readonly config: Pick<Config, 'dbUrl' | 'dbPrefix' | 'dataDir'>;
  private readonly opened: Database[] = [];
  private readonly services: string[] = [];

  constructor() {
    this.config = testConfig();
  }

  async open(service: string): Promise<Database> {
    const db = await openDatabase({
      service,
      config: this.config,
      entities: [Counter, ...EVENT_ENTITIES],
      migrations: [...EVENT_MIGRATIONS, TestCounters1900000000000],
    });
    this.opened.push(db);
    this.services.push(service);
    return db;
  }

  async dropAll(): Promise<void> {
    await Promise.all(this.opened.map((db) => db.close()));
    await dropDatabases(this.config, this.services);
  }
}
