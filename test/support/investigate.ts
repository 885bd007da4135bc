import { loadConfig } from '../../src/config';
import { deliverAndWait } from '../../src/client/investigations';
import { exampleEvent } from '../../src/dev/demo/run';
import { parseTicketEvent, type TicketEvent } from '../../src/schemas/event';
import type { InvestigationSettings, InvestigationStatus } from '../../src/schemas/investigation';
import { investigationSettings } from '../../src/settings';
import { unique } from './db';
import type { TestWorker } from './temporal';

/** Settings from the environment plus `env` overrides, e.g. { CASEWORK_MAX_STEPS: '5' }. */
export function settingsWith(env: Record<string, string> = {}): InvestigationSettings {
  return investigationSettings(loadConfig({ ...process.env, ...env }));
}

/** An example event (examples/events/<name>.json) on a ticket of its own. */
export function example(name: string, overrides: Partial<TicketEvent> = {}): TicketEvent {
  return exampleEvent(name, unique('t').replace(/[^A-Za-z0-9_-]/g, ''), overrides);
}

/** A ticket event for `customerId` with `message`, on a fresh ticket unless one is given. */
export function ticket(customerId: string, message: string, overrides: Partial<TicketEvent> = {}): TicketEvent {
  return parseTicketEvent({
    eventId: unique('evt'),
    type: 'ticket.created',
    ticketId: unique('T'),
    customerId,
    message,
    receivedAt: new Date().toISOString(),
    ...overrides,
  });
}

/** Sends an event and waits until the investigation waits on someone (approval, customer) or closes. */
export function send(tw: TestWorker, event: TicketEvent, settings: InvestigationSettings = settingsWith()): Promise<InvestigationStatus> {
  return deliverAndWait(tw.client, tw.pool, event, { taskQueue: tw.taskQueue, settings, timeoutMs: 240_000 });
}
