import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ModelReply, ModelRequest } from '../src/schemas/model';
import { answer, calls, requestProblem, scriptedModel, toolUse, type ScriptedModel } from './support/scripted-model';

// The scripted model the workflow tests drive the workflow with: it must be as strict as the
// Messages API, or a workflow test could pass on a transcript the real model would refuse.

const user = (...content: MessageParam['content'][]): MessageParam[] => content.map((c) => ({ role: 'user', content: c }));
const request = (messages: MessageParam[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  purpose: 'investigate',
  system: [{ type: 'text', text: 'rules' }],
  tools: [],
  messages,
  max_tokens: 1024,
  ...extra,
});
const use = { type: 'tool_use' as const, id: 'toolu_1', name: 'get_order', input: { order_id: '5102' } };
const result = { type: 'tool_result' as const, tool_use_id: 'toolu_1', content: '{}' };
const hello = { type: 'text' as const, text: 'hello' };

describe('the scripted model refuses what the Messages API refuses', () => {
  test('accepts a valid tool round trip', () => {
    assert.equal(requestProblem(request([...user([hello]), { role: 'assistant', content: [use] }, ...user([result, hello])])), null);
  });

  test('roles must alternate, starting with the user', () => {
    assert.match(requestProblem(request([{ role: 'assistant', content: [hello] }]))!, /alternate starting with "user"/);
    assert.match(requestProblem(request(user([hello], [hello])))!, /messages\.1: roles must alternate/);
  });

  test('no empty messages or empty text', () => {
    assert.match(requestProblem(request([]))!, /at least one message/);
    assert.match(requestProblem(request(user([])))!, /non-empty content/);
    assert.match(requestProblem(request(user([{ type: 'text', text: '' }])))!, /text content blocks must be non-empty/);
    assert.match(requestProblem(request(user([hello]), { system: [{ type: 'text', text: '' }] }))!, /system\.0/);
  });

  test('every tool_use is answered first in the very next user message, with its id', () => {
    const asked: MessageParam = { role: 'assistant', content: [use] };
    assert.match(requestProblem(request([...user([hello]), asked]))!, /without tool_result/);
    assert.match(requestProblem(request([...user([hello]), asked, ...user([hello, result])]))!, /without tool_result blocks immediately after: toolu_1/);
    assert.match(requestProblem(request([...user([hello]), asked, ...user([{ ...result, tool_use_id: 'toolu_2' }])]))!, /toolu_1/);
  });

  test('a tool_result must answer a call of the previous message, and ids are unique', () => {
    assert.match(requestProblem(request(user([result])))!, /unexpected tool_use_id/);
    const twice = request([...user([hello]), { role: 'assistant', content: [use] }, ...user([result]), { role: 'assistant', content: [use] }, ...user([result])]);
    assert.match(requestProblem(twice)!, /must be unique/);
  });

  test('at most four cache_control breakpoints', () => {
    const marked = { ...hello, cache_control: { type: 'ephemeral' as const } };
    assert.equal(requestProblem(request(user([marked, marked, marked, marked]))), null);
    assert.match(
      requestProblem(request(user([marked, marked, marked, marked]), { system: [{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral' } }] }))!,
      /maximum of 4 blocks with cache_control.*Found 5/,
    );
  });

  test('hour entries before five-minute ones', () => {
    const hour = { ...hello, cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } };
    const five = { ...hello, cache_control: { type: 'ephemeral' as const } };
    assert.equal(requestProblem(request(user([hour, five]))), null);
    assert.match(requestProblem(request(user([five, hour])))!, /ttl='1h'.*must not come after.*ttl='5m'/);
  });
});

describe('the scripted model serves scripts per workflow', () => {
  /** Calls the model as the callModel activity of `workflowId` would. */
  const as = (model: ScriptedModel, workflowId: string, sent: ModelRequest): Promise<ModelReply> =>
    new MockActivityEnvironment({ workflowExecution: { workflowId, runId: 'run-1' } }).run(() => model.create(sent));

  test('answers each workflow from its own script, in order, and records deep copies of what it was sent', async () => {
    const model = scriptedModel();
    const call = toolUse('get_order', { order_id: '5102' });
    model.script('investigation-a', [calls(call), answer('a done')]);
    model.script('investigation-b', [answer('b done')]);
    const sent = request(user([hello]));
    const b = await as(model, 'investigation-b', sent);
    const a1 = await as(model, 'investigation-a', sent);
    sent.messages.push({ role: 'assistant', content: [call] }, ...user([{ ...result, tool_use_id: call.id }]));
    const a2 = await as(model, 'investigation-a', sent);
    assert.deepEqual(
      [b.content, a1.stop_reason, a2.content],
      [[{ type: 'text', text: 'b done', citations: null }], 'tool_use', [{ type: 'text', text: 'a done', citations: null }]],
    );
    assert.equal(model.requests('investigation-a')[0]!.messages.length, 1, 'the recorded request is a copy, not the caller’s object');
    assert.equal(model.requests('investigation-a').length, 2);
    assert.ok(a1.usage.input_tokens + a1.usage.cache_creation_input_tokens > 0 && a1.usage.output_tokens > 0, 'usage is filled in');
  });

  test('fails loudly and without retry, naming the workflow and step, when a script runs out', async () => {
    const model = scriptedModel();
    model.script('investigation-c', [answer('only one')]);
    await as(model, 'investigation-c', request(user([hello])));
    await assert.rejects(as(model, 'investigation-c', request(user([hello]))), (error: Error & { nonRetryable?: boolean }) => {
      assert.match(error.message, /investigation-c ran out at investigate step 2/);
      assert.equal(error.nonRetryable, true);
      return true;
    });
    assert.equal(model.failures('investigation-c').length, 1);
  });

  test('refuses an invalid request with a non-retryable 400, before using up the script', async () => {
    const model = scriptedModel();
    model.script('investigation-d', [answer('fine')]);
    await assert.rejects(as(model, 'investigation-d', request(user([result]))), (error: Error & { nonRetryable?: boolean; type?: string }) => {
      assert.match(error.message, /^400 invalid_request_error .*investigation-d, call 1.*unexpected tool_use_id/);
      assert.deepEqual([error.nonRetryable, error.type], [true, 'invalid_request_error']);
      return true;
    });
    assert.equal(model.remaining('investigation-d'), 1);
  });

  test('answers other purposes from a function of the request, leaving the investigate replies alone', async () => {
    const model = scriptedModel();
    model.script('investigation-e', { replies: [answer('reply')], purposes: { compact: (r) => answer(`summarised ${r.messages.length}`) } });
    const summary = await as(model, 'investigation-e', request(user([hello]), { purpose: 'compact' }));
    assert.deepEqual(summary.content, [{ type: 'text', text: 'summarised 1', citations: null }]);
    assert.equal(model.remaining('investigation-e'), 1);
    await assert.rejects(as(model, 'investigation-e', request(user([hello]), { purpose: 'bulk_read' })), /no answer for a bulk_read request/);
  });
});
