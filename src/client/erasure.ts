import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { Config } from '../config';
import { erasuresOf, recordErasure, ticketsOf, type ErasureRecord } from '../db/customer-keys';
import { scrubParkedDeliveries } from '../db/erasure';
import { createPostToDesk } from '../desk/post';
import { deskSettings } from '../desk/settings';
import { BadInputError } from '../errors';
import { forgetMemory, parseCustomerId } from '../memory/control';
import { customerKeysOf } from '../temporal/codec/body-codec';
import type { CustomerKeys } from '../temporal/codec/customer-keys';
import { codecFor } from '../temporal/data-converter';
import { closeOpenInvestigations, type ClosedCase, type ClosingDeps } from './erasure-closing';

// Erasing a customer (docs/payload-privacy.md, "Erasure"): their open investigations closed
// first (erasure-closing.ts: a running workflow must still replay, so it ends before its key
// goes), their memory rows deleted, their data key destroyed (so their transcript entries, kept
// replies and stored payloads can be decrypted by no one), their parked deliveries emptied, and
// an audit row of who erased whom and when.

/** What an erasure did, as counts and identifiers (never content). */
export interface ErasureReport {
  erasure: ErasureRecord;
  /** The investigations that were open, closed first: refund withdrawn, customer and team told. */
  closed: ClosedCase[];
  deleted: { notes: number; cases: number; profile_fields: number };
  keyVersionsDestroyed: number[];
  parkedDeliveriesEmptied: number;
  tickets: number;
}

/** Where an erasure acts: the app pool, the process's customer keys, Temporal to close open investigations, the desk to tell. */
export interface ErasureDeps extends ClosingDeps {
  keys: CustomerKeys;
}

/** An erasure's dependencies from configuration: the customer keys of the configured codec and the configured desks. */
export function erasureDepsOf(config: Config, pool: Pool, client: Client): ErasureDeps {
  const { clients } = deskSettings(config);
  return { pool, client, keys: customerKeysOf(pool, codecFor(config)), ...(clients.size ? { post: createPostToDesk({ clients }) } : {}) };
}

/**
 * Erases the customer (see the module note). Their open investigations are closed first and
 * waited for: CasesNotClosedError names those that did not end in time, and nothing is erased.
 */
export async function eraseCustomer(deps: ErasureDeps, input: { customerId: string; by: string }): Promise<ErasureReport> {
  const customerId = parseCustomerId(input.customerId);
  const by = input.by.trim().slice(0, 200);
  if (!by) throw new BadInputError('an erasure names who does it (--by <name>)');
  const closed = await closeOpenInvestigations(deps, { customerId, by });
  const tickets = (await ticketsOf(deps.pool, customerId)).length;
  const forgot = await forgetMemory(deps.pool, customerId, { actor: `erasure by ${by}` });
  const keyVersionsDestroyed = await deps.keys.destroy(customerId);
  const parkedDeliveriesEmptied = await scrubParkedDeliveries(deps.pool, customerId, by);
  const deleted = { notes: forgot.deleted.notes, cases: forgot.deleted.cases, profile_fields: forgot.deleted.profile_fields };
  const erasure = await recordErasure(deps.pool, {
    customerId,
    erasedBy: by,
    detail: {
      ...deleted,
      key_versions_destroyed: keyVersionsDestroyed,
      parked_deliveries_emptied: parkedDeliveriesEmptied,
      tickets,
      investigations_closed: closed.map((c) => c.workflowId),
      refunds_withdrawn: closed.flatMap((c) => (c.refundWithdrawn ? [c.refundWithdrawn] : [])),
    },
  });
  return { erasure, closed, deleted, keyVersionsDestroyed, parkedDeliveriesEmptied, tickets };
}

/** The customer's erasures, oldest first (the audit trail). */
export function erasureHistory(pool: Pool, customerId: string): Promise<ErasureRecord[]> {
  return erasuresOf(pool, parseCustomerId(customerId));
}
