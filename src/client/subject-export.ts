import type { Pool } from 'pg';
import { erasuresOf, ticketsOf } from '../db/customer-keys';
import { refundTrailOf, type RefundTrailEntry } from '../db/refund-trail-read';
import type { TranscriptLog } from '../db/transcript-log';
import { showMemory, parseCustomerId, type ShownNote } from '../memory/control';
import type { CaseRecord, Profile } from '../memory/schemas';
import { investigationId } from '../schemas/event';
import { CustomerErasedError } from '../temporal/codec/customer-keys';

// A subject-access export: everything casework holds about one customer as one JSON document
// (docs/payload-privacy.md, "Export"). The schema is named and versioned in the document itself.

/** The schema name every export carries; a change of shape gets a new version. */
export const SUBJECT_EXPORT_SCHEMA = 'casework.subject-access/v1';

/** One investigation of the customer, its conversation decoded (or the date it was erased). */
export interface ExportedInvestigation {
  workflow_id: string;
  ticket_id: string;
  /** Every message entry of the transcript log, in order; null when it was erased (see erased_on). */
  transcript: { seq: number; role: string | null; block: unknown }[] | null;
  erased_on: string | null;
}

/** The export document (schema SUBJECT_EXPORT_SCHEMA). */
export interface SubjectExport {
  schema: typeof SUBJECT_EXPORT_SCHEMA;
  generated_at: string;
  customer_id: string;
  profile: Profile;
  /** Every note, current, expired and superseded (the status says which). */
  notes: ShownNote[];
  /** The memory of closed cases. */
  cases: CaseRecord[];
  refund_trail: RefundTrailEntry[];
  investigations: ExportedInvestigation[];
  /** Erasures done before (who, when, counts). */
  erasures: { erased_by: string; erased_at: string }[];
}

/** Everything casework holds about the customer; the read is recorded in their memory audit trail. */
export async function exportCustomer(deps: { pool: Pool; log: TranscriptLog }, input: { customerId: string; actor: string; now?: string }): Promise<SubjectExport> {
  const customerId = parseCustomerId(input.customerId);
  const generatedAt = input.now ?? new Date().toISOString();
  const memory = await showMemory(deps.pool, customerId, { actor: input.actor, now: generatedAt });
  const investigations: ExportedInvestigation[] = [];
  for (const ticketId of await ticketsOf(deps.pool, customerId)) {
    const workflowId = investigationId(ticketId);
    try {
      const entries = await deps.log.all(workflowId, ['message']);
      investigations.push({ workflow_id: workflowId, ticket_id: ticketId, transcript: entries.map((e) => ({ seq: e.seq, role: e.role ?? null, block: e.body })), erased_on: null });
    } catch (error) {
      if (!(error instanceof CustomerErasedError)) throw error;
      investigations.push({ workflow_id: workflowId, ticket_id: ticketId, transcript: null, erased_on: error.erasedAt.slice(0, 10) });
    }
  }
  return {
    schema: SUBJECT_EXPORT_SCHEMA,
    generated_at: generatedAt,
    customer_id: customerId,
    profile: memory.profile,
    notes: memory.notes,
    cases: memory.cases,
    refund_trail: await refundTrailOf(deps.pool, customerId),
    investigations,
    erasures: (await erasuresOf(deps.pool, customerId)).map((e) => ({ erased_by: e.erasedBy, erased_at: e.erasedAt })),
  };
}
