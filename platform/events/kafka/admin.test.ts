import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { testLogger } from '../../../test/event-fixtures';
import { describeIf } from '../../../test/skip';
import { runConfig } from '../../../test/stack';
import { waitFor } from '../../../test/wait';
import { KafkaAdmin } from './admin';

describeIf(runConfig.kafkaBrokers !== undefined, 'creating topics', 'set KAFKA_BROKERS to run', () => {
  it('has a caller wait for a topic another caller is creating, instead of taking "already exists" for ready', async () => {
    const kafka = new Kafka({ brokers: runConfig.kafkaBrokers ?? [], clientId: 'admin-test', logLevel: logLevel.NOTHING });
    const calls: string[][] = [];
    const order: string[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const original = kafka.admin.bind(kafka);
    kafka.admin = (...args: Parameters<Kafka['admin']>): Admin => {
      const admin = original(...args);
      const create = admin.createTopics.bind(admin);
      admin.createTopics = async (options) => {
        const call = calls.push(options.topics.map((t) => t.topic));
        const created = await create(options);
        // The first creation is held after the broker took it, as a slow wait for its leaders would be.
        if (call === 1) await held;
        return created;
      };
      return admin;
    };
    const admin = new KafkaAdmin(kafka, { logger: testLogger, numPartitions: 3, closed: () => false });
    const [shared, other] = [`admin-${randomUUID()}`, `admin-${randomUUID()}`];
    try {
      const first = admin.ensureTopics([shared]);
      await waitFor(() => calls.length, { what: 'the first creation to reach the broker', accept: (n) => n === 1 });
      const second = admin.ensureTopics([shared, other]).then(() => order.push('second caller done'));
      await waitFor(() => calls.length, { what: 'the second caller to create what nobody creates', accept: (n) => n === 2 });
      order.push('first creation released');
      release();
      await Promise.all([first, second]);
      expect(calls).toEqual([[shared], [other]]);
      expect(order).toEqual(['first creation released', 'second caller done']);
    } finally {
      release();
      await admin.close();
    }
  });
});
