import type { BusMessage } from '../bus';
import { PUBLISHER, PUBLISHER_HEADER } from '../bus';
import { MAX_REQUEST_BYTES, produceRequests } from './producer';

describe('a publish as produce requests', () => {
  const message = (topic: string, key: string, bytes: number, n: number): BusMessage => ({ topic, key, value: `${n}`.padEnd(bytes, '.'), headers: { eventId: `e${n}` } });
  const sent = (requests: ReturnType<typeof produceRequests>) =>
    requests.flatMap((request) => request.flatMap(({ topic, messages }) => messages.map((m) => ({ topic, key: m.key, n: Number.parseInt(m.value, 10) }))));

  it('keeps every message, in order per topic and key, in requests within the byte limit', () => {
    const messages = Array.from({ length: 5000 }, (_, n) => message(n % 2 ? 'a' : 'b', `k${n % 7}`, 300, n));
    const requests = produceRequests(messages, 64 << 10);
    expect(requests.length).toBeGreaterThan(1);
    for (const request of requests) {
      const bytes = request.reduce((sum, { messages: list }) => sum + list.reduce((s, m) => s + m.key.length + m.value.length, 0), 0);
      expect(bytes).toBeLessThanOrEqual(64 << 10);
    }
    const out = sent(requests);
    expect(out).toHaveLength(5000);
    for (const topic of ['a', 'b'])
      for (let k = 0; k < 7; k++) {
        const order = (list: { topic: string; key: string; n: number }[]) => list.filter((m) => m.topic === topic && m.key === `k${k}`).map((m) => m.n);
        expect(order(out)).toEqual(order(messages.map((m) => ({ topic: m.topic, key: m.key, n: Number.parseInt(m.value, 10) }))));
      }
  });

  it('sends a message larger than the limit alone, between the others', () => {
    const requests = produceRequests([message('a', 'k', 100, 1), message('a', 'k', 2000, 2), message('a', 'k', 100, 3)], 1000);
    expect(requests.map((request) => sent([request]).map((m) => m.n))).toEqual([[1], [2], [3]]);
  });

  it('sends a small publish in one request, each message with its headers and the publisher', () => {
    const requests = produceRequests([message('a', 'k', 10, 1), message('b', 'k', 10, 2)]);
    expect(requests).toHaveLength(1);
    expect(requests[0].map(({ topic }) => topic)).toEqual(['a', 'b']);
    expect(requests[0][0].messages[0].headers).toEqual({ eventId: 'e1', [PUBLISHER_HEADER]: PUBLISHER });
    expect(MAX_REQUEST_BYTES).toBeLessThan(1 << 20);
  });
});
