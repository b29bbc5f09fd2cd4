/**
 * Reading a partition's log as Kafka's DumpLogSegments lists it (`--deep-iteration`), which the
 * replica suite quotes when a wait times out. The listings are the tool's own format, Kafka 3.9.
 */
import { readPartitionLog } from './infra';

const batch = (base: number, last: number, producerId: number, transactional: boolean, control: boolean) =>
  `baseOffset: ${base} lastOffset: ${last} count: ${last - base + 1} baseSequence: -1 lastSequence: -1 producerId: ${producerId} producerEpoch: 0 partitionLeaderEpoch: 0 isTransactional: ${transactional} isControl: ${control} deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1795422445019 size: 88 magic: 2 compresscodec: none crc: 2867615030 isvalid: true`;
const record = (offset: number) => `| offset: ${offset} CreateTime: 1795422445019 keySize: 1 valueSize: 1 sequence: 0 headerKeys: [publisher]`;
const marker = (offset: number, kind: 'COMMIT' | 'ABORT') =>
  `| offset: ${offset} CreateTime: 1795422445197 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ${kind} coordinatorEpoch: 0`;

describe('readPartitionLog', () => {
  it('counts committed and aborted transactions and finds none open when every one ended', () => {
    const listing = [
      'Dumping /tmp/data/tt-0/00000000000000000000.log',
      'Log starting offset: 0',
      batch(0, 1, 1, true, false),
      record(0),
      record(1),
      batch(2, 2, 1, true, true),
      marker(2, 'COMMIT'),
      batch(3, 3, 1, true, false),
      record(3),
      batch(4, 4, 1, true, true),
      marker(4, 'ABORT'),
    ].join('\n');
    expect(readPartitionLog(listing)).toEqual({ end: 5, committed: 1, aborted: 1, open: [] });
  });

  it('names the transactions still open, first offset first, while other producers commit after them', () => {
    const listing = [
      batch(0, 0, 7, true, false),
      record(0),
      batch(1, 2, 3, true, false),
      record(1),
      record(2),
      batch(3, 3, 3, true, true),
      marker(3, 'COMMIT'),
      batch(4, 4, 5, true, false),
      record(4),
      batch(5, 5, 3, true, false),
      record(5),
      batch(6, 6, 3, true, true),
      marker(6, 'COMMIT'),
    ].join('\n');
    expect(readPartitionLog(listing)).toEqual({
      end: 7,
      committed: 2,
      aborted: 0,
      open: [
        { producerId: '7', firstOffset: 0 },
        { producerId: '5', firstOffset: 4 },
      ],
    });
  });

  it('does not count records written outside a transaction as open', () => {
    expect(readPartitionLog([batch(0, 2, -1, false, false), record(0), record(1), record(2)].join('\n'))).toEqual({ end: 3, committed: 0, aborted: 0, open: [] });
  });
});
