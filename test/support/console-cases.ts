import { createMemoryActivities } from '../../src/activities/memory';
import type { Pool } from 'pg';
import { createLocalEmbedder } from '../../src/memory/embed-local';
import { emptyCaseNotes } from '../../src/schemas/case-notes';
import { investigationId, type TicketEvent } from '../../src/schemas/event';
import type { InvestigationStatus } from '../../src/schemas/investigation';
import { settingsWith, ticket } from './investigate';
import { answer, calls, json, lastToolResults, toolUse, type ScriptedModel, type ScriptStep } from './scripted-model';
import { deliver } from './scripted-run';
import type { TestWorker } from './temporal';
import { recordWrongBuildingCase } from './memory-seed';

// The cases the console's tests look at, made by the scripted model on the real worker: a run
// paused on a refund, a long run with clearing batches and a compaction, and a customer's
// memory with a superseded note and a past case.

/** Approver limits for the runs: support-lead up to $10.00, so a $12.00 refund is over it. */
export const CONSOLE_RUN_ENV = { CASEWORK_APPROVERS: 'support-lead:1000,duty-manager:200000' };

/** A fresh ticket of Dana's whose workflow follows `script`. */
export function scriptedTicket(model: ScriptedModel, message: string, script: Parameters<ScriptedModel['script']>[1]): { event: TicketEvent; id: string } {
  const event = ticket('cust_dana', message);
  const id = investigationId(event.ticketId);
  model.script(id, script);
  return { event, id };
}

/** A paused run and the get_order result the agent saw before asking for the refund. */
export interface PendingRefund {
  id: string;
  status: InvestigationStatus;
  orderResult: string;
}

/** A run paused on a refund of `cents` on Dana's order 5102, having looked the order up first; `env` adds settings. */
export async function pendingRefund(tw: TestWorker, model: ScriptedModel, cents: number, reason: string, env: Record<string, string> = {}): Promise<PendingRefund> {
  const getOrder = toolUse('get_order', { order_id: '5102' });
  const { event, id } = scriptedTicket(model, 'My order 5102 never arrived.', [
    calls(getOrder),
    calls(toolUse('request_refund', { order_id: '5102', amount_cents: cents, reason })),
    answer('A colleague is reviewing your refund.'),
    answer('Your refund has been issued.'),
  ]);
  const status = await deliver(tw, model, event, settingsWith({ ...CONSOLE_RUN_ENV, ...env }));
  if (status.status !== 'awaiting_approval') throw new Error(`${id} should wait for approval, but is ${status.status}`);
  const orderResult = lastToolResults(model.requests(id, 'investigate')[1]!).find((r) => r.tool_use_id === getOrder.id)!.content;
  return { id, status, orderResult };
}

/** A 14-step run that clears every 4 steps and compacts once its chat passes 1,500 tokens. */
export async function clearingRun(tw: TestWorker, model: ScriptedModel): Promise<{ id: string; status: InvestigationStatus }> {
  const tools = [
    () => toolUse('get_order', { order_id: '5102' }),
    () => toolUse('get_tracking_events', { order_id: '5102', page: 1 }),
    () => toolUse('get_payments', { order_id: '5102' }),
    () => toolUse('lookup_policy', { topic: 'parcel marked delivered but not received' }),
  ];
  const replies: ScriptStep[] = [...Array.from({ length: 13 }, (_, i) => calls(tools[i % tools.length]!())), answer('I have looked into it.')];
  const { event, id } = scriptedTicket(model, 'Order 5102 never arrived.', { replies, purposes: { compact: () => json({ ...emptyCaseNotes(), order_ids: ['5102'] }) } });
  const status = await deliver(tw, model, event, settingsWith({ CASEWORK_CLEAR_EVERY: '4', CASEWORK_COMPACT_ABOVE_TOKENS: '1500' }));
  return { id, status };
}

/**
 * Memory for `customerId` as the remember tool writes it: an address, then a move (which
 * supersedes it), delivery instructions, and a past case; a day apart, from 2026-10-15.
 */
export async function seedConsoleMemory(pool: Pool, customerId: string): Promise<void> {
  let clock = Date.parse('2026-10-14T10:00:00.000Z');
  const memory = createMemoryActivities({ pool, embedder: createLocalEmbedder(), now: () => new Date((clock += 86_400_000)) });
  await recordWrongBuildingCase(memory, customerId);
  const say = (fact: string) => memory.remember({ name: 'remember', input: { fact }, context: { customerId, ticketId: 'T1', workflowId: 'investigation-T1', toolUseId: 't' } });
  await say('I live at 22 Oak Road, Leeds');
  await say('I have moved to 5 Elm Street, York');
  await say('Deliveries must go to Block B, not the main gate');
}
