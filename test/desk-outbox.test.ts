import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resumeUpdate } from '../src/workflows/investigation-api';
import { deskStack, openZendeskCase, postsSettled, postZendeskWebhook, ZENDESK_REQUESTER } from './support/desk-stack';
import { answer, calls, toolUse } from './support/scripted-model';
import { settle } from './support/scripted-run';

// The desk outbox lives in the workflow's state, so it outlives the run that filled it: posts
// queued or refused in one run are posted by the next one (continue-as-new, or a run recovered
// after the last one broke), each exactly once. Two model steps per run force continue-as-new.

const stack = deskStack({ settings: { CASEWORK_MAX_STEPS_PER_RUN: '2' } });

/** postToDesk activities each run of `workflowId` scheduled, oldest run first. */
async function postsPerRun(workflowId: string, runs: number): Promise<number[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found: { runId: string; start: number }[] = [];
    for await (const w of stack.tw.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) found.push({ runId: w.runId, start: w.startTime.getTime() });
    if (found.length >= runs) {
      found.sort((a, b) => a.start - b.start);
      const counts: number[] = [];
      for (const { runId } of found) {
        const history = await stack.tw.client.workflow.getHandle(workflowId, runId).fetchHistory();
        counts.push((history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'postToDesk').length);
      }
      return counts;
    }
    if (Date.now() > deadline) throw new Error(`${workflowId}: ${found.length} runs listed, expected ${runs}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const agentComments = (ticketId: number) => stack.standin.ticket(ticketId)!.comments.filter((c) => c.author_id === stack.standin.agent.id);
const publicReplies = (ticketId: number) =>
  agentComments(ticketId)
    .filter((c) => c.public)
    .map((c) => c.body);
const notes = (ticketId: number) => agentComments(ticketId).filter((c) => !c.public);

describe('the desk outbox across runs', () => {
  it('a note queued just before continue-as-new is carried into the next run and posted there, once', async () => {
    const { ticketId, workflowId, status } = await openZendeskCase(stack, 'Order 5102 never arrived, I want my money back.', [
      calls(toolUse('get_order', { order_id: '5102' })),
      calls(toolUse('request_refund', { order_id: '5102', amount_cents: 1000, reason: 'Marked delivered but never received.' })),
      answer('I have asked a colleague to approve a refund for order 5102.'),
    ]);
    assert.equal(status.status, 'awaiting_approval');
    const settled = await postsSettled(stack, workflowId, 2);
    assert.ok(settled.continuedAsNew >= 1, `continued as new ${settled.continuedAsNew} times`);
    // The first run queued the refund note and continued as new before posting anything; the second posted both.
    assert.deepEqual(await postsPerRun(workflowId, 2), [0, 2]);
    assert.equal(settled.desk!.posted, 2);
    assert.equal(notes(ticketId).length, 1);
    assert.match(notes(ticketId)[0]!.body, /awaits approval/);
    assert.deepEqual(publicReplies(ticketId), ['I have asked a colleague to approve a refund for order 5102.']);
  });

  it('a refused reply is carried across continue-as-new after a person resumes the case, and goes out once before the next', async () => {
    stack.standin.inject({ kind: 'unauthorized', count: 1 });
    const { ticketId, workflowId } = await openZendeskCase(stack, 'Where is order 5102?', [
      calls(toolUse('get_order', { order_id: '5102' })),
      answer('It left the warehouse yesterday.'),
      answer('Following up: it arrives tomorrow.'),
    ]);
    const refused = await postsSettled(stack, workflowId, 1);
    assert.equal(refused.status, 'needs_human');
    assert.deepEqual(
      refused.desk!.failed.map((f) => f.body),
      ['It left the warehouse yesterday.'],
    );
    assert.equal(agentComments(ticketId).length, 0);

    // Credentials fixed, a person resumes: the run has used its two steps, so the re-queued reply rides continue-as-new.
    await stack.tw.client.workflow.getHandle(workflowId).executeUpdate(resumeUpdate, { args: [{ by: 'sam', note: 'Token rotated.' }] });
    const done = await postsSettled(stack, workflowId, 2);
    assert.ok(done.continuedAsNew >= 1);
    assert.deepEqual(done.desk!.failed, []);
    assert.deepEqual(publicReplies(ticketId), ['It left the warehouse yesterday.', 'Following up: it arrives tomorrow.']);
    assert.deepEqual(await postsPerRun(workflowId, 2), [1, 2]);
  });

  it('a run recovered after the last one was terminated re-sends its refused reply once, then answers', async () => {
    stack.standin.inject({ kind: 'unauthorized', count: 1 });
    const { ticketId, workflowId } = await openZendeskCase(stack, 'Hello, is anyone there?', [
      answer('Hello! Let me check that for you.'),
      answer('Sorry for the delay on our side: your order ships today.'),
    ]);
    const refused = await postsSettled(stack, workflowId, 1);
    assert.equal(refused.status, 'needs_human');
    await stack.tw.client.workflow.getHandle(workflowId).terminate('test: the run broke');

    // The customer writes again: the webhook starts a run that carries the broken one's state, outbox included.
    const commentId = stack.standin.addCustomerComment(ticketId, ZENDESK_REQUESTER, 'Hello again?');
    await postZendeskWebhook(stack, ticketId, commentId);
    await settle(stack.tw, stack.model, workflowId, refused.step);
    const done = await postsSettled(stack, workflowId, 2);
    assert.equal(done.recoveredFrom?.runStatus, 'TERMINATED');
    assert.deepEqual(done.desk!.failed, []);
    assert.deepEqual(publicReplies(ticketId), ['Hello! Let me check that for you.', 'Sorry for the delay on our side: your order ships today.']);
  });
});
