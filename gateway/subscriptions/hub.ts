/**
 * The live subscriptions of one gateway process (STYLE 18: live answers are queries run again).
 * Subscribers with the same selection (document, operation, variables) and the same rights share a
 * group: its answer is computed once (its first value, then once per event that concerns it) by
 * running the selection as a query through the federated query path with the token of one of its
 * members, and handed to every member. Events arriving while a run is under way make one more run
 * after it, so none is missed and a burst costs two runs, not one per event.
 */
import { createHash } from 'node:crypto';
import { Counter, Gauge, type Registry } from 'prom-client';
import { AFTER_EVENTS_MAX } from '../../platform/events/after-events';
import { GRAPHQL_CODES } from '../../platform/graphql-errors';
import type { Logger } from '../../platform/logger';
import { eventArgValues, type LiveField, type LiveRequest } from './live-fields';
import { LiveStream, endResult, type Answer, type Caller, type LiveResult, type Outlet } from './stream';

/** An event that made a run: its topic and id, so the subgraphs answer after applying it. */
export interface Cause {
  topic: string;
  eventId: string;
}

/** Runs a live request as a query with the caller's rights, answered after `after` were applied by the services that consume them. */
export type RunQuery = (request: LiveRequest, caller: Caller, after: readonly Cause[]) => Promise<LiveResult>;

/** Answers that end every member's stream: the same rights would get them again. */
const FINAL_CODES = new Set<string>([
  GRAPHQL_CODES.FORBIDDEN,
  GRAPHQL_CODES.NOT_FOUND,
  GRAPHQL_CODES.BAD_REQUEST,
  GRAPHQL_CODES.BAD_USER_INPUT,
  GRAPHQL_CODES.QUERY_TOO_COMPLEX,
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
]);

/** A run that failed for a passing reason is tried again after this, at most RETRIES times in a row. */
const RETRY_MS = 1000;
const RETRIES = 5;

interface Group {
  key: string;
  index: string;
  request: LiveRequest;
  members: Set<LiveStream>;
  answer: Answer | undefined;
  running: boolean;
  dirty: boolean;
  causes: Cause[];
  failures: number;
  retry: NodeJS.Timeout | undefined;
}

/** What a stream's members share: one group per selection and rights. ADMINs all see the same; a USER sees what is theirs. */
export function rightsOf(caller: Pick<Caller, 'role' | 'userId'>): string {
  return caller.role === 'ADMIN' ? 'ADMIN' : `USER:${caller.userId.toLowerCase()}`;
}

const revisionOf = (result: LiveResult) => createHash('sha256').update(JSON.stringify(result)).digest('base64url').slice(0, 22);

function codesOf(result: LiveResult): string[] {
  return (result.errors ?? []).map((error) => {
    const code = error.extensions?.code;
    return typeof code === 'string' ? code : GRAPHQL_CODES.INTERNAL_SERVER_ERROR;
  });
}

export interface LiveHubOptions {
  fields: ReadonlyMap<string, LiveField>;
  run: RunQuery;
  logger: Logger;
  registry?: Registry;
}

export class LiveHub {
  private readonly groups = new Map<string, Group>();
  /** `<field>\n<argument values>` → the groups an event with those values concerns. */
  private readonly byEvent = new Map<string, Set<Group>>();
  private readonly fieldsByTopic = new Map<string, LiveField[]>();
  private readonly streams = new Set<LiveStream>();
  private readonly runs: Counter;
  private readonly messages: Counter;
  private readonly open: Gauge;

  constructor(private readonly options: LiveHubOptions) {
    for (const field of options.fields.values()) {
      for (const topic of field.topics) this.fieldsByTopic.set(topic, [...(this.fieldsByTopic.get(topic) ?? []), field]);
    }
    const registers = options.registry ? [options.registry] : [];
    this.runs = new Counter({
      name: 'gateway_subscription_runs_total',
      help: 'Selections of live subscriptions run as queries (one per group and event, shared by its subscribers)',
      registers,
    });
    this.messages = new Counter({ name: 'gateway_subscription_answers_total', help: 'Answers handed to subscription streams', registers });
    this.open = new Gauge({ name: 'gateway_subscription_streams', help: 'Subscription streams open on this process', registers, collect: () => this.open.set(this.streams.size) });
  }

  /** The topics whose events concern some live field. */
  get topics(): string[] {
    return [...this.fieldsByTopic.keys()];
  }

  get size(): number {
    return this.streams.size;
  }

  /** Streams open for callers matching `which`. */
  count(which: (caller: Caller) => boolean): number {
    let n = 0;
    for (const stream of this.streams) if (which(stream.caller)) n += 1;
    return n;
  }

  /** Opens a stream: it gets the current value first (the group's, when it has one), then each change. */
  subscribe(request: LiveRequest, caller: Caller, outlet?: Outlet): LiveStream {
    const key = `${request.query}\n${request.operationName ?? ''}\n${JSON.stringify(request.variables)}\n${rightsOf(caller)}`;
    let group = this.groups.get(key);
    if (!group) {
      group = {
        key,
        index: `${request.field.name}\n${request.argValues.join('\n')}`,
        request,
        members: new Set(),
        answer: undefined,
        running: false,
        dirty: true,
        causes: [],
        failures: 0,
        retry: undefined,
      };
      this.groups.set(key, group);
      const concerned = this.byEvent.get(group.index) ?? new Set();
      concerned.add(group);
      this.byEvent.set(group.index, concerned);
    }
    const member = group;
    const stream = new LiveStream(caller, outlet, (ended) => this.leave(member, ended));
    this.streams.add(stream);
    group.members.add(stream);
    if (group.answer && !group.running && !group.dirty) this.hand(stream, group.answer);
    else void this.run(group);
    return stream;
  }

  /** An event from the bus: every group it concerns runs again (once, however many events arrive meanwhile). */
  onEvent(topic: string, payload: Record<string, unknown>): void {
    const eventId = typeof payload.eventId === 'string' ? payload.eventId : undefined;
    for (const field of this.fieldsByTopic.get(topic) ?? []) {
      const values = eventArgValues(field, payload);
      if (!values) continue;
      for (const group of this.byEvent.get(`${field.name}\n${values.join('\n')}`) ?? []) {
        if (eventId) group.causes = [...group.causes.slice(-(AFTER_EVENTS_MAX - 1)), { topic, eventId }];
        group.dirty = true;
        void this.run(group);
      }
    }
  }

  /** Ends, with `result`, the streams of callers matching `which` (a revoked session, a deleted user). */
  endWhere(which: (caller: Caller) => boolean, result: LiveResult): number {
    let ended = 0;
    for (const stream of [...this.streams]) {
      if (!which(stream.caller)) continue;
      stream.end(result);
      ended += 1;
    }
    return ended;
  }

  /** Ends every stream (the gateway stops). */
  close(): void {
    this.endWhere(() => true, endResult(GRAPHQL_CODES.SERVICE_UNAVAILABLE, 'The gateway is stopping: subscribe again'));
  }

  private hand(stream: LiveStream, answer: Answer): void {
    this.messages.inc();
    stream.offer(answer);
  }

  private leave(group: Group, stream: LiveStream): void {
    this.streams.delete(stream);
    group.members.delete(stream);
    if (group.members.size > 0) return;
    clearTimeout(group.retry);
    this.groups.delete(group.key);
    const concerned = this.byEvent.get(group.index);
    concerned?.delete(group);
    if (concerned?.size === 0) this.byEvent.delete(group.index);
  }

  /** The member whose token runs the selection: the one valid longest. */
  private runnerOf(group: Group): LiveStream | undefined {
    let runner: LiveStream | undefined;
    for (const member of group.members) if (!member.ended && (!runner || member.caller.expiresAtMs > runner.caller.expiresAtMs)) runner = member;
    return runner;
  }

  private async run(group: Group): Promise<void> {
    if (group.running) return;
    group.running = true;
    try {
      while (group.dirty && group.members.size > 0) {
        group.dirty = false;
        const causes = group.causes;
        group.causes = [];
        const runner = this.runnerOf(group);
        if (!runner) return;
        this.runs.inc();
        let result: LiveResult;
        try {
          result = await this.options.run(group.request, runner.caller, causes);
        } catch (error) {
          this.options.logger.error({ err: error, field: group.request.field.name }, 'live subscription run failed');
          result = endResult(GRAPHQL_CODES.INTERNAL_SERVER_ERROR, 'An unexpected error occurred');
        }
        this.settle(group, runner, result, causes);
      }
    } finally {
      group.running = false;
    }
  }

  /** What a run's result does: a value for every member, the end of the runner's or everyone's stream, or a retry. */
  private settle(group: Group, runner: LiveStream, result: LiveResult, causes: Cause[]): void {
    const codes = codesOf(result);
    const value = result.data?.[group.request.responseKey];
    if (codes.includes(GRAPHQL_CODES.UNAUTHENTICATED) && value == null) {
      // The runner's token no longer counts (revoked, expired): its stream ends, another member runs.
      runner.end(result);
      group.causes = [...causes, ...group.causes];
      group.dirty = true;
      return;
    }
    if (value == null && codes.some((code) => FINAL_CODES.has(code))) {
      for (const member of [...group.members]) member.end(result);
      return;
    }
    if (value === undefined) {
      // A passing failure (a service down): members without a value get it and end; the others keep theirs while it is tried again.
      for (const member of [...group.members]) if (!member.hasValue) member.end(result);
      group.failures += 1;
      if (group.failures <= RETRIES) {
        group.causes = [...causes, ...group.causes];
        clearTimeout(group.retry);
        group.retry = setTimeout(() => {
          group.dirty = true;
          void this.run(group);
        }, RETRY_MS);
        group.retry.unref();
      } else {
        this.options.logger.warn({ field: group.request.field.name, codes }, 'live subscription gave up running a selection after repeated failures');
      }
      return;
    }
    group.failures = 0;
    const revision = revisionOf(result);
    const changed = group.answer?.revision !== revision;
    if (changed) group.answer = { result, revision };
    const answer = group.answer as Answer;
    for (const member of group.members) if (changed || !member.hasValue) this.hand(member, answer);
  }
}
