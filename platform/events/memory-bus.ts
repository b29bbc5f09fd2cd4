/**
 * The embedded default's bus: an in-process log per topic with Kafka's delivery model (every
 * consumer group sees every message once, in order per key, redelivered while its handler fails).
 */
import type { BusMessage, ConsumedMessage, EventBus, SubscribeOptions, Subscription } from './bus';
import { PUBLISHER, PUBLISHER_HEADER, RETRY_BACKOFF_MS, deliver, nextBackoff } from './bus';

interface Member {
  options: SubscribeOptions;
  stopped: boolean;
}

class Group {
  readonly members: Member[] = [];
  /** Next offset to deliver, per topic. */
  readonly cursors = new Map<string, number>();
  private running = false;

  constructor(
    readonly id: string,
    private readonly bus: MemoryBus,
  ) {}

  /** Delivers every pending message in log order: one at a time, or in batches to a batch handler. */
  async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const first = this.nextPending(this.cursors);
        if (!first) return;
        const member = this.memberFor(first.message.key, first.topic);
        if (!member) return;
        const limit = member.options.handleBatch ? (member.options.maxBatchSize ?? 500) : 1;
        const cursors = new Map(this.cursors);
        const batch: ConsumedMessage[] = [];
        while (batch.length < limit) {
          const next = this.nextPending(cursors);
          if (!next || this.memberFor(next.message.key, next.topic) !== member) break;
          batch.push({ ...next.message, partition: 0, offset: String(next.offset) });
          cursors.set(next.topic, next.offset + 1);
        }
        let backoff = RETRY_BACKOFF_MS.initial;
        for (;;) {
          if (member.stopped) break;
          try {
            await deliver(member.options, batch);
            for (const [topic, cursor] of cursors) this.cursors.set(topic, cursor);
            break;
          } catch {
            await new Promise((resolve) => setTimeout(resolve, backoff));
            backoff = nextBackoff(backoff);
          }
        }
      }
    } finally {
      this.running = false;
    }
  }

  private nextPending(cursors: Map<string, number>): { topic: string; offset: number; message: BusMessage } | undefined {
    let best: { topic: string; offset: number; message: BusMessage; seq: number } | undefined;
    for (const [topic, cursor] of cursors) {
      const log = this.bus.log(topic);
      if (cursor < log.length) {
        const entry = log[cursor];
        if (!best || entry.seq < best.seq) best = { topic, offset: cursor, message: entry.message, seq: entry.seq };
      }
    }
    return best;
  }

  /** Like partitions: one key always goes to the same live member. */
  private memberFor(key: string, topic: string): Member | undefined {
    const live = this.members.filter((m) => !m.stopped && m.options.topics.includes(topic));
    if (live.length === 0) return undefined;
    let hash = 0;
    for (const char of key) hash = (hash * 31 + char.charCodeAt(0)) | 0;
    return live[Math.abs(hash) % live.length];
  }
}

export class MemoryBus implements EventBus {
  readonly kind = 'memory' as const;
  private readonly logs = new Map<string, { seq: number; message: BusMessage }[]>();
  private readonly groups = new Map<string, Group>();
  private seq = 0;
  private closed = false;

  log(topic: string): { seq: number; message: BusMessage }[] {
    let log = this.logs.get(topic);
    if (!log) {
      log = [];
      this.logs.set(topic, log);
    }
    return log;
  }

  async publish(messages: BusMessage[]): Promise<void> {
    if (this.closed) throw new Error('The event bus is closed');
    for (const message of messages) {
      this.log(message.topic).push({ seq: this.seq++, message: { ...message, headers: { ...message.headers, [PUBLISHER_HEADER]: PUBLISHER } } });
    }
    for (const group of this.groups.values()) void group.drain();
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    let group = this.groups.get(options.groupId);
    if (!group) {
      group = new Group(options.groupId, this);
      this.groups.set(options.groupId, group);
    }
    for (const topic of options.topics) {
      if (!group.cursors.has(topic)) group.cursors.set(topic, options.fromBeginning === false ? this.log(topic).length : 0);
    }
    const member: Member = { options, stopped: false };
    group.members.push(member);
    void group.drain();
    const owner = group;
    return {
      stop: async () => {
        member.stopped = true;
        owner.members.splice(owner.members.indexOf(member), 1);
        void owner.drain();
      },
    };
  }

  async health(): Promise<void> {
    if (this.closed) throw new Error('The event bus is closed');
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const group of this.groups.values()) for (const member of group.members) member.stopped = true;
  }
}
