import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { erasuresOf, recordErasure, ticketsOf, type ErasureRecord } from '../db/customer-keys';
import { scrubParkedDeliveries } from '../db/erasure';
import { BadInputError, ConflictError } from '../errors';
import { forgetMemory, parseCustomerId } from '../memory/control';
import { investigationId } from '../schemas/event';
import type { CustomerKeys } from '../temporal/codec/customer-keys';

// Erasing a customer (docs/payload-privacy.md, "Erasure"): their memory rows deleted, their
// data key destroyed (so their transcript entries and kept replies can be decrypted by no
// one), their parked deliveries emptied, and an audit row of who erased whom and when.
// A running investigation must still replay and answer, so erasure refuses while one runs and
// names it: close it first (resolve it, or let it finish), then erase.

/** The customer still has investigations running: they are named, nothing was erased. */
export class RunningInvestigationsError extends ConflictError {
  constructor(
    readonly customerId: string,
    readonly workflowIds: string[],
  ) {
    super(
      `customer ${customerId} has ${workflowIds.length} running investigation(s): ${workflowIds.join(', ')}. ` +
        'A running investigation must still read its own conversation, so nothing was erased; close them first, then erase.',
    );
  }
}

/** What an erasure did, as counts (never content). */
export interface ErasureReport {
  erasure: ErasureRecord;
  deleted: { notes: number; cases: number; profile_fields: number };
  keyVersionsDestroyed: number[];
  parkedDeliveriesEmptied: number;
  tickets: number;
}

/** Where an erasure acts: the app pool, the process's customer keys, Temporal to find running investigations. */
export interface ErasureDeps {
  pool: Pool;
  keys: CustomerKeys;
  client: Client;
}

/** The customer's investigations that are running now (described one by one: visibility may lag, a describe does not). */
export async function runningInvestigations(deps: Pick<ErasureDeps, 'pool' | 'client'>, customerId: string): Promise<string[]> {
  const running: string[] = [];
  for (const ticketId of await ticketsOf(deps.pool, customerId)) {
    const workflowId = investigationId(ticketId);
    const description = await deps.client.workflow
      .getHandle(workflowId)
      .describe()
      .catch((error: unknown) => {
        if ((error as Error).name === 'WorkflowNotFoundError') return undefined;
        throw error;
      });
    if (description?.status.name === 'RUNNING') running.push(workflowId);
  }
  return running;
}

/** Erases the customer (see the module note); refuses with RunningInvestigationsError while one of their investigations runs. */
export async function eraseCustomer(deps: ErasureDeps, input: { customerId: string; by: string }): Promise<ErasureReport> {
  const customerId = parseCustomerId(input.customerId);
  const by = input.by.trim().slice(0, 200);
  if (!by) throw new BadInputError('an erasure names who does it (--by <name>)');
  const running = await runningInvestigations(deps, customerId);
  if (running.length) throw new RunningInvestigationsError(customerId, running);
  const tickets = (await ticketsOf(deps.pool, customerId)).length;
  const forgot = await forgetMemory(deps.pool, customerId, { actor: `erasure by ${by}` });
  const keyVersionsDestroyed = await deps.keys.destroy(customerId);
  const parkedDeliveriesEmptied = await scrubParkedDeliveries(deps.pool, customerId, by);
  const deleted = { notes: forgot.deleted.notes, cases: forgot.deleted.cases, profile_fields: forgot.deleted.profile_fields };
  const erasure = await recordErasure(deps.pool, {
    customerId,
    erasedBy: by,
    detail: { ...deleted, key_versions_destroyed: keyVersionsDestroyed, parked_deliveries_emptied: parkedDeliveriesEmptied, tickets },
  });
  return { erasure, deleted, keyVersionsDestroyed, parkedDeliveriesEmptied, tickets };
}

/** The customer's erasures, oldest first (the audit trail). */
export function erasureHistory(pool: Pool, customerId: string): Promise<ErasureRecord[]> {
  return erasuresOf(pool, parseCustomerId(customerId));
}
