import { deliverEvent, readStatus } from '../../src/client/investigations';
import { investigationId, type TicketEvent } from '../../src/schemas/event';
import type { InvestigationSettings, InvestigationStatus } from '../../src/schemas/investigation';
import { settingsWith } from './investigate';
import type { ScriptedModel } from './scripted-model';
import type { TestWorker } from './temporal';

const SETTLED = new Set<InvestigationStatus['status']>(['awaiting_approval', 'waiting_for_customer', 'needs_human', 'closed']);

/**
 * Waits until `workflowId` waits on someone (approval, customer) or closes past `afterStep`,
 * failing at once, with the fake's own message, when the scripted model refused a request or
 * ran out of replies, or when the run failed, instead of waiting for a timeout.
 */
export async function settle(tw: TestWorker, model: ScriptedModel, workflowId: string, afterStep = 0, timeoutMs = 120_000): Promise<InvestigationStatus> {
  const handle = tw.client.workflow.getHandle(workflowId);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failures = model.failures(workflowId);
    if (failures.length) throw new Error(failures[failures.length - 1]);
    const described = await handle.describe().catch(() => undefined);
    if (described && ['FAILED', 'TERMINATED', 'TIMED_OUT', 'CANCELLED'].includes(described.status.name)) {
      await handle.result();
    }
    const status = await readStatus(tw.client, workflowId).catch(() => undefined);
    if (status && (status.status === 'closed' || (SETTLED.has(status.status) && status.step > afterStep))) return status;
    if (Date.now() > deadline) throw new Error(`${workflowId} did not settle past step ${afterStep}; last status ${JSON.stringify(status?.status)} at step ${status?.step}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Delivers an event and waits for the investigation's answer to it (for ticket.closed: its result). */
export async function deliver(tw: TestWorker, model: ScriptedModel, event: TicketEvent, settings: InvestigationSettings = settingsWith()): Promise<InvestigationStatus> {
  const workflowId = investigationId(event.ticketId);
  const before = await readStatus(tw.client, workflowId).then(
    (s) => s.step,
    () => 0,
  );
  await deliverEvent(tw.client, tw.pool, event, { taskQueue: tw.taskQueue, settings });
  if (event.type === 'ticket.closed') {
    // The run's result, unless the scripted model refused something first (then its message).
    const result = tw.client.workflow.getHandle(workflowId).result();
    for (let done = false; !done;) {
      done = await Promise.race([result.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 100))]);
      const failures = model.failures(workflowId);
      if (failures.length) throw new Error(failures[failures.length - 1]);
    }
    return result;
  }
  return settle(tw, model, workflowId, before);
}

/**
 * Waits until `workflowId`'s status passes `ok`, failing at once with the scripted model's own
 * message when it refused a request, or after 90 s naming `what` did not happen and the last status.
 */
export async function untilStatus(tw: TestWorker, model: ScriptedModel, workflowId: string, what: string, ok: (s: InvestigationStatus) => boolean): Promise<InvestigationStatus> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const status = await readStatus(tw.client, workflowId).catch(() => undefined);
    if (status && ok(status)) return status;
    if (model.failures(workflowId).length) throw new Error(model.failures(workflowId).at(-1));
    if (Date.now() > deadline) throw new Error(`${workflowId}: ${what} did not happen; last status ${status?.status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
