/**
 * What the bus asks Kafka's admin API: the topics it uses, created with our partition count so
 * nothing depends on broker auto-creation; a consumer group's offsets against the partitions' ends;
 * and whether the cluster answers at all.
 */
import { AssignerProtocol, type Admin, type Kafka } from 'kafkajs';
import type { Logger } from '../../logger';
import { RETRY_BACKOFF_MS, nextBackoff } from '../bus';
import { CLIENT_RETRY, Reconnecting } from './connection';
import { isTopicNotServedYet } from './errors';

/** How long creating topics (and waiting for them to be served) may take. */
const TOPIC_CREATION_TIMEOUT_MS = 30000;

/** One partition of a topic as a consumer group sees it (KafkaBus.partitionLag). */
export interface PartitionLag {
  partition: number;
  /** The offset the group committed; -1: none yet. */
  committed: number;
  /** The last stable offset: what read-committed readers can reach. */
  readableEnd: number;
  /** Messages between the two (from the log's start when nothing is committed). */
  behind: number;
}

/** Messages behind over all the partitions of a topic. */
export function totalBehind(partitions: readonly PartitionLag[]): number {
  return partitions.reduce((sum, { behind }) => sum + behind, 0);
}

/** One member of a consumer group as the broker describes it (KafkaBus.groupMembers). */
export interface GroupMember {
  memberId: string;
  clientId: string;
  clientHost: string;
  /** Per topic, the partitions the group's last assignment gave this member. */
  assignment: Record<string, number[]>;
}

export interface KafkaAdminOptions {
  logger: Logger;
  /** Partitions of the topics it creates. */
  numPartitions: number;
  healthTimeoutMs?: number;
  /** True once the bus is closing: topics are no longer created, nor their creation retried. */
  closed: () => boolean;
}

export class KafkaAdmin {
  private readonly admin: Reconnecting<Admin>;
  private readonly ensuredTopics = new Set<string>();
  /** Topics being created by a call of ensureTopics, with its creation. */
  private readonly creating = new Map<string, Promise<void>>();

  constructor(
    kafka: Kafka,
    private readonly options: KafkaAdminOptions,
  ) {
    this.admin = new Reconnecting(() => kafka.admin({ retry: CLIENT_RETRY }));
  }

  async health(): Promise<void> {
    await this.admin.use('Kafka health check', this.options.healthTimeoutMs ?? 3000, (admin) => admin.describeCluster());
  }

  /** See KafkaBus.partitionLag. */
  async partitionLag(groupId: string, topic: string): Promise<PartitionLag[]> {
    return this.admin.use('reading committed offsets', this.options.healthTimeoutMs ?? 10000, async (admin) => {
      const [ends, committed] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
      const committedOf = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
      return ends
        .map(({ partition, high, low }) => {
          const from = committedOf.get(partition) ?? -1;
          return { partition, committed: from, readableEnd: Number(high), behind: Math.max(0, Number(high) - (from >= 0 ? from : Number(low))) };
        })
        .sort((a, b) => a.partition - b.partition);
    });
  }

  /** See KafkaBus.groupMembers. */
  async groupMembers(groupId: string): Promise<{ state: string; members: GroupMember[] }> {
    return this.admin.use('describing a consumer group', this.options.healthTimeoutMs ?? 10000, async (admin) => {
      const { groups } = await admin.describeGroups([groupId]);
      const group = groups[0];
      return {
        state: group?.state ?? 'Unknown',
        members: (group?.members ?? []).map(({ memberId, clientId, clientHost, memberAssignment }) => ({
          memberId,
          clientId,
          clientHost,
          assignment: memberAssignment.length > 0 ? (AssignerProtocol.MemberAssignment.decode(memberAssignment)?.assignment ?? {}) : {},
        })),
      };
    });
  }

  /**
   * Creates missing topics with our partition count; `force` checks topics created before again. A
   * topic another caller of this bus is creating is waited for, not created again: the broker would
   * answer "already exists" at once, before the topic's partitions are served, and a consumer
   * joining then would be refused them.
   */
  async ensureTopics(topics: string[], force = false): Promise<void> {
    const wanted = topics.filter((topic) => force || !this.ensuredTopics.has(topic));
    if (wanted.length === 0 || this.options.closed()) return;
    const waits = new Set(wanted.flatMap((topic) => this.creating.get(topic) ?? []));
    const mine = wanted.filter((topic) => !this.creating.has(topic));
    if (mine.length > 0) {
      const creation = this.create(mine);
      for (const topic of mine) this.creating.set(topic, creation);
      const done = () => {
        for (const topic of mine) if (this.creating.get(topic) === creation) this.creating.delete(topic);
      };
      creation.then(done, done);
      waits.add(creation);
    }
    await Promise.all(waits);
  }

  private async create(missing: string[]): Promise<void> {
    // Topics created a moment ago (by this process or a neighbour) may not be served yet: kafkajs's
    // wait for their leaders gives up on `This server does not host this topic-partition`, which
    // only means "not yet". Such errors are waited out here, within the same bound.
    const deadline = Date.now() + TOPIC_CREATION_TIMEOUT_MS;
    for (let delayMs = RETRY_BACKOFF_MS.initial; ; delayMs = nextBackoff(delayMs)) {
      try {
        await this.admin.use('creating Kafka topics', Math.max(1000, deadline - Date.now()), (admin) =>
          admin.createTopics({ waitForLeaders: true, topics: missing.map((topic) => ({ topic, numPartitions: this.options.numPartitions })) }),
        );
        break;
      } catch (error) {
        if (this.options.closed() || !isTopicNotServedYet(error) || Date.now() + delayMs > deadline) throw error;
        this.options.logger.warn({ topics: missing, error: (error as Error).message, retryInMs: delayMs }, 'Kafka topics not ready yet; retrying');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
    for (const topic of missing) this.ensuredTopics.add(topic);
  }

  /** Every topic is checked again before its next use, in case the cluster itself was replaced. */
  forgetTopics(): void {
    this.ensuredTopics.clear();
  }

  close(): Promise<void> {
    return this.admin.close();
  }
}
