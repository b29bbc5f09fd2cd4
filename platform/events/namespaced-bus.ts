/**
 * Puts every topic and consumer group of a bus under a prefix, so several systems (parallel test
 * suites, staging beside production) can share one broker without seeing each other's events.
 */
import type { BusMessage, EventBus, PublishOptions, SubscribeOptions, Subscription } from './bus';

export function namespacedBus(bus: EventBus, namespace: string): EventBus {
  if (!namespace) return bus;
  const inner = (topic: string) => `${namespace}${topic}`;
  const outer = (topic: string) => (topic.startsWith(namespace) ? topic.slice(namespace.length) : topic);
  return {
    kind: bus.kind,
    publish: (messages: BusMessage[], options?: PublishOptions) =>
      bus.publish(
        messages.map((m) => ({ ...m, topic: inner(m.topic) })),
        options,
      ),
    subscribe: (options: SubscribeOptions): Promise<Subscription> => {
      const { handle, handleBatch, onLag } = options;
      return bus.subscribe({
        ...options,
        groupId: inner(options.groupId),
        topics: options.topics.map(inner),
        handle: handle && ((message) => handle({ ...message, topic: outer(message.topic) })),
        handleBatch: handleBatch && ((messages) => handleBatch(messages.map((message) => ({ ...message, topic: outer(message.topic) })))),
        onLag: onLag && ((topic, behind) => onLag(outer(topic), behind)),
      });
    },
    health: () => bus.health(),
    close: () => bus.close(),
  };
}
