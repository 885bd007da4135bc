import type { PoolClient } from 'pg';
import { z } from 'zod';
import { upsertCase } from './cases';
import { normaliseFact, tidyFact } from './classify';
import { addDays, addMonths, isCalendarDate } from './dates';
import { upsertCommitment } from './notes';
import { CustomerId, type CaseRecord } from './schemas';
import { findSensitive, redactSensitive } from './sensitive';

/** How long a commitment stays in memory after its due date: long enough to notice it was missed. */
export const COMMITMENT_GRACE_DAYS = 30;

const day = z.string().refine(isCalendarDate, 'a calendar date written YYYY-MM-DD');

/** The post-run record of one investigation, as the workflow sends it. */
export const RecordCaseInput = z.object({
  customerId: CustomerId,
  workflowId: z.string().trim().min(1, 'a workflow id is required').max(200),
  ticketId: z.string().trim().min(1, 'a ticket id is required').max(100),
  orderIds: z.array(z.string().trim().min(1).max(40)).max(20).default([]),
  summary: z.string().max(20_000),
  resolution: z.string().max(20_000).default(''),
  closedOn: day,
  commitments: z
    .array(z.object({ text: z.string().max(2_000), due: day.nullable().optional() }))
    .max(20)
    .default([]),
});
/** The post-run record of one investigation. */
export type RecordCaseInput = z.input<typeof RecordCaseInput>;

/** What recordCase() stored. `written` is false when a retry found the same record already there. */
export interface RecordCaseResult {
  case: CaseRecord;
  written: boolean;
  commitments: { note_id: number; text: string; due_on: string | null }[];
  /** Commitments not stored, with why (empty, or they held something memory never keeps). */
  skipped: string[];
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Records a closed case and its commitments for the customer the transaction is scoped to.
 * Case text is kept, with any sentence memory must never hold replaced by a marker; a
 * commitment holding such a thing is skipped. Idempotent on the workflow id.
 */
export async function recordClosedCase(client: PoolClient, raw: RecordCaseInput, options: { now: string; ttlMonths: number }): Promise<RecordCaseResult> {
  const input = RecordCaseInput.parse(raw);
  const problem = clip(redactSensitive(tidyFact(input.summary)), 2000) || 'Support case';
  const resolution = clip(redactSensitive(tidyFact(input.resolution)), 2000);
  const { record, written } = await upsertCase(client, {
    customerId: input.customerId,
    sourceRun: input.workflowId,
    ticketId: input.ticketId,
    orderIds: [...new Set(input.orderIds)],
    problem,
    resolution,
    closedOn: input.closedOn,
    recordedAt: options.now,
  });

  const commitments: RecordCaseResult['commitments'] = [];
  const skipped: string[] = [];
  for (const commitment of input.commitments) {
    const text = clip(tidyFact(commitment.text), 500);
    const textKey = normaliseFact(text);
    const finding = textKey ? findSensitive(text) : { reason: 'it is empty' };
    if (finding) {
      skipped.push(`commitment ${commitments.length + skipped.length + 1}: ${finding.reason}`);
      continue;
    }
    const dueOn = commitment.due ?? null;
    const expiresAt = dueOn ? addDays(`${dueOn}T00:00:00.000Z`, COMMITMENT_GRACE_DAYS) : addMonths(options.now, options.ttlMonths);
    const note = await upsertCommitment(client, {
      customerId: input.customerId,
      text,
      textKey,
      dueOn,
      sourceRun: input.workflowId,
      writtenAt: options.now,
      expiresAt,
    });
    if (note) commitments.push({ note_id: note.note_id, text: note.text, due_on: note.due_on });
    else skipped.push(`commitment ${commitments.length + skipped.length + 1}: the same words are already stored as another note`);
  }
  return { case: record, written, commitments, skipped };
}
