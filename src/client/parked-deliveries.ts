import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { mapRequester, markParkedDelivered, waitingFor, type ParkingDesk } from '../db/parked-deliveries';
import { EventRefusedError } from '../db/tickets';
import type { Requester } from '../desk/customers';
import { completeEvent } from '../desk/finish';
import type { DeskRef, TicketEventDraft } from '../desk/types';
import type { InvestigationSettings } from '../schemas/investigation';
import type { BodyCodec } from '../schemas/transcript-log';
import { deliverEvent, InvestigationNotFoundError } from './investigations';

// A person maps a desk requester to a customer; the deliveries parked for that requester then go
// on to their investigations, oldest first, through the same gate as every event. Run from the
// CLI or the console, on any replica: everything it reads and records is in Postgres.

/** What a parked delivery's body holds (routes/webhooks.ts writes it). */
export interface ParkedWebhook {
  draft: TicketEventDraft;
  requester: Requester;
  ref: DeskRef;
}

/** What mapping a requester did. */
export interface MappedRequester {
  mapping: 'mapped' | 'already';
  /** Event ids delivered now (duplicates included: the gate had them already). */
  delivered: string[];
  /** Parked deliveries that still wait, and why (the gate refused them, or they cannot be read). */
  stillParked: { id: number; eventId: string; why: string }[];
}

/**
 * Maps `requester` of `desk` to `customerId` (refused when mapped to another customer), then
 * delivers every delivery parked for that requester. Safe to run again: a delivery already
 * delivered is a duplicate at the gate and is marked as delivered.
 */
export async function mapRequesterAndDeliver(
  deps: { client: Client; pool: Pool; codec: BodyCodec },
  input: { desk: ParkingDesk; requester: string; customerId: string; by: string },
  options: { taskQueue: string; settings: InvestigationSettings },
): Promise<MappedRequester> {
  const mapping = await mapRequester(deps.pool, input);
  const parked = await waitingFor<ParkedWebhook>(deps.pool, deps.codec, input.desk, input.requester);
  const result: MappedRequester = { mapping, delivered: [], stillParked: [] };
  for (const delivery of parked) {
    const { draft, requester, ref } = delivery.body;
    const completed = completeEvent(input.desk, draft, input.customerId, requester, ref);
    if (completed.outcome !== 'accepted') {
      result.stillParked.push({ id: delivery.id, eventId: delivery.eventId, why: completed.message });
      continue;
    }
    try {
      await deliverEvent(deps.client, deps.pool, completed.event, options);
    } catch (error) {
      // A close for a ticket casework never investigated closes nothing: it is done with.
      if (error instanceof InvestigationNotFoundError) {
        await markParkedDelivered(deps.pool, { id: delivery.id, by: input.by, customerId: input.customerId });
        result.delivered.push(delivery.eventId);
        continue;
      }
      if (!(error instanceof EventRefusedError)) throw error;
      result.stillParked.push({ id: delivery.id, eventId: delivery.eventId, why: error.message });
      continue;
    }
    await markParkedDelivered(deps.pool, { id: delivery.id, by: input.by, customerId: input.customerId });
    result.delivered.push(delivery.eventId);
  }
  return result;
}
