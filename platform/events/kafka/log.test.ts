import { logLevel, type LogEntry } from 'kafkajs';
import { captureLog } from '../../../test/hostile';
import { KafkaJSConnectionError, KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError } from 'kafkajs';
import { PASSING_RECOVERIES, consumerStopIsPassing } from './errors';
import { kafkaLogCreator } from './log';

describe("kafkajs's log lines in ours", () => {
  const entry = (level: logLevel, log: { message: string; [key: string]: unknown }): LogEntry => ({
    namespace: 'Producer',
    level,
    label: 'ERROR',
    log: { timestamp: 'now', logger: 'kafkajs', ...log },
  });

  it('logs a failure kafkajs retries at warn, and any other failure at error', () => {
    const capture = captureLog('debug');
    const write = kafkaLogCreator(capture.logger)();
    const concurrent = 'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing';
    write(entry(logLevel.ERROR, { message: `Failed to send messages: ${concurrent}`, retryCount: 0 }));
    write(entry(logLevel.ERROR, { message: 'Response AddPartitionsToTxn(key: 24, version: 1)', error: concurrent }));
    write(entry(logLevel.ERROR, { message: 'Failed to send messages: The request included a message larger than the max message size the server will accept' }));
    write(entry(logLevel.ERROR, { message: 'Crash: something unexpected' }));
    write(entry(logLevel.ERROR, { message: 'Crash: KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator' }));
    write(entry(logLevel.ERROR, { message: 'Crash: KafkaJSNonRetriableError: Offset out of range' }));
    write(entry(logLevel.ERROR, { message: "Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests for this group" }));
    write(entry(logLevel.ERROR, { message: 'Crash: KafkaJSProtocolError: The group member needs to have a valid member id before actually entering a consumer group' }));
    write(entry(logLevel.ERROR, { message: 'Restarting the consumer in 100ms', retryTime: 100 }));
    write(entry(logLevel.ERROR, { message: 'Response CreateTopics(key: 19, version: 3)', error: 'Topic creation errors' }));
    write(entry(logLevel.ERROR, { message: 'Crash: KafkaJSProtocolError: Not authorized to access topics: [Topic authorization failed.]' }));
    write(entry(logLevel.ERROR, { message: 'Response Heartbeat(key: 12, version: 3)', error: 'The group is rebalancing, so a rejoin is needed' }));
    expect(capture.entriesAtLeast(40).map((line) => [line.level, line.msg])).toEqual([
      [40, `Failed to send messages: ${concurrent}`],
      [40, 'Response AddPartitionsToTxn(key: 24, version: 1)'],
      [50, 'Failed to send messages: The request included a message larger than the max message size the server will accept'],
      [50, 'Crash: something unexpected'],
      [40, 'Crash: KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator'],
      [50, 'Crash: KafkaJSNonRetriableError: Offset out of range'],
      [40, "Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests for this group"],
      [50, 'Crash: KafkaJSProtocolError: The group member needs to have a valid member id before actually entering a consumer group'],
      [40, 'Restarting the consumer in 100ms'],
      [40, 'Response CreateTopics(key: 19, version: 3)'],
      [50, 'Crash: KafkaJSProtocolError: Not authorized to access topics: [Topic authorization failed.]'],
      [40, 'Response Heartbeat(key: 12, version: 3)'],
    ]);
  });

  it('calls a consumer stopped by a lost coordinator or connection a passing stop until it keeps happening, and anything else a crash', () => {
    // kafkajs's typings leave out the message its constructor needs (cluster/index.js passes one).
    const CoordinatorNotFound = KafkaJSGroupCoordinatorNotFound as unknown as new (message: string) => Error;
    const lostCoordinator = new CoordinatorNotFound('Failed to find group coordinator');
    expect(consumerStopIsPassing(lostCoordinator, 1)).toBe(true);
    expect(consumerStopIsPassing(new KafkaJSConnectionError('Connection error: ECONNREFUSED'), PASSING_RECOVERIES)).toBe(true);
    expect(consumerStopIsPassing(lostCoordinator, PASSING_RECOVERIES + 1)).toBe(false);
    expect(consumerStopIsPassing(new KafkaJSNonRetriableError('Offset out of range'), 1)).toBe(false);
    expect(consumerStopIsPassing(new Error('a handler bug'), 1)).toBe(false);
  });
});
