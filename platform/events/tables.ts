/** The event tables every service has: the outbox it publishes from and the record of the events it applied. */
import { EventTables1732000000000 } from '../migrations/1732000000000-EventTables';
import { OutboxHeaders1732000001000 } from '../migrations/1732000001000-OutboxHeaders';
import { ProcessedEvent } from './consumer';
import { OutboxEvent } from './outbox';

export const EVENT_ENTITIES = [OutboxEvent, ProcessedEvent];
export const EVENT_MIGRATIONS = [EventTables1732000000000, OutboxHeaders1732000001000];
