import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inWorkflowTranscriptRuns, runningInvestigationsQuery } from '../src/client/drain-check';
import { investigationId } from '../src/schemas/event';
import type { InvestigationInput } from '../src/schemas/investigation';
import { settingsWith, ticket } from './support/investigate';
import { seededWorker } from './support/temporal';

// Before workers of the release that retired the in-workflow transcript take over, a deployment
// finds the running investigations that began in that mode (docs/deploy.md): their input's
// settings lack historyByReference. Such a run is started here from an input written as the
// release before wrote it with CASEWORK_HISTORY_BY_REFERENCE=false, beside one started today.

const ctx = seededWorker();

test('the drain check lists a running investigation whose input began in the in-workflow mode, and not one kept by reference', async () => {
  const { client, taskQueue } = ctx.tw;
  const start = async (message: string, settings: InvestigationInput['settings']) => {
    const event = ticket('cust_dana', message);
    const workflowId = investigationId(event.ticketId);
    // Signal-with-start waits for the customer's words: started bare, the run stays open without a model step.
    await client.workflow.start('investigation', { taskQueue, workflowId, args: [{ ticketId: event.ticketId, customerId: event.customerId, settings }] });
    return workflowId;
  };
  const { historyByReference, ...older } = settingsWith();
  assert.equal(historyByReference, true, 'runs started today say so in their settings');
  const today = await start('Where is order 5102?', settingsWith());
  const before = await start('Where is order 5102, please?', older);
  try {
    // Visibility is eventually consistent: wait until both are listed.
    const deadline = Date.now() + 30_000;
    while ((await client.workflow.count(runningInvestigationsQuery(taskQueue))).count < 2) {
      if (Date.now() > deadline) throw new Error('the two runs never showed in visibility');
      await new Promise((r) => setTimeout(r, 200));
    }
    const found = await inWorkflowTranscriptRuns(client, { taskQueue });
    assert.deepEqual(
      found.map((r) => r.workflowId),
      [before],
    );
    assert.ok(!found.some((r) => r.workflowId === today));
    assert.match(found[0]!.startedAt, /^\d{4}-\d\d-\d\dT/);
  } finally {
    for (const id of [today, before])
      await client.workflow
        .getHandle(id)
        .terminate('test over')
        .catch(() => undefined);
  }
});
