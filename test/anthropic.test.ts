import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { createModelActivities } from '../src/activities/model';
import { CONTEXT_MANAGEMENT_BETA, createAnthropicModel, type AnthropicModelOptions } from '../src/model/anthropic';
import { MissingApiKeyError, retryAfterMs, withModelFailures } from '../src/model/errors';
import type { Model } from '../src/model/port';
import type { ModelRequest } from '../src/schemas/model';
import { contextManagementEdits } from '../src/context/clearing';
import { COMPACTION_BETA, compactionEdit } from '../src/context/server-context';

/** One request the fake Messages API received. */
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
}

/** What the fake API answers, in order; `hang` never answers (for timeouts). */
type Answer = { status: number; headers?: Record<string, string>; body: unknown } | 'hang';

const servers: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.all(servers.map((close) => close()));
});

/** A local server on 127.0.0.1 that speaks like POST /v1/messages and records what it was sent. */
async function startApi(...answers: Answer[]) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : {} });
      const answer = answers.shift() ?? { status: 500, body: { type: 'error', error: { type: 'api_error', message: 'no answer left' } } };
      if (answer === 'hang') return;
      res.writeHead(answer.status, { 'content-type': 'application/json', 'request-id': 'req_test', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  servers.push(close);
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}`, received, close };
}

function message(overrides: Record<string, unknown> = {}) {
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'text', text: 'Let me look up the order.' },
      { type: 'tool_use', id: 'toolu_01', name: 'get_order', input: { order_id: 'ord_42' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 1200, output_tokens: 85, cache_creation_input_tokens: 900, cache_read_input_tokens: 4000 },
    ...overrides,
  };
}

const ok = (overrides: Record<string, unknown> = {}): Answer => ({ status: 200, body: message(overrides) });
const apiError = (status: number, type: string, text: string, headers?: Record<string, string>): Answer => ({
  status,
  headers,
  body: { type: 'error', error: { type, message: text } },
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    purpose: 'investigate',
    system: [{ type: 'text', text: 'You are a support investigator.', cache_control: { type: 'ephemeral' } }],
    tools: [
      {
        name: 'get_order',
        description: 'Looks up one order.',
        input_schema: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
        cache_control: { type: 'ephemeral' },
      },
    ],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Where is order ord_42?', cache_control: { type: 'ephemeral' } }] }],
    max_tokens: 1024,
    ...overrides,
  };
}

function model(baseURL: string | undefined, overrides: Partial<AnthropicModelOptions> = {}) {
  return createAnthropicModel({ apiKey: 'sk-test-key', baseURL, model: 'claude-sonnet-4-5', maxTokens: 2048, timeoutMs: 5_000, ...overrides });
}

/** Runs a call that must fail and returns its error as an ApplicationFailure. */
async function failureOf(call: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await call.then(
    () => assert.fail('expected the call to fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(error)}`);
  return error;
}

describe('the Anthropic model adapter', () => {
  it('maps a tool_use reply to a ModelReply with its ids, stop_reason and usage', async () => {
    const api = await startApi(ok());
    const reply = await model(api.baseURL).create(request());
    assert.deepEqual(reply, {
      id: 'msg_01',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'text', text: 'Let me look up the order.' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_order', input: { order_id: 'ord_42' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 1200, output_tokens: 85, cache_creation_input_tokens: 900, cache_read_input_tokens: 4000 },
    });
  });

  it('sends system, tools and messages with cache_control intact, the configured model, and the API key as a bearer token', async () => {
    const api = await startApi(ok());
    const sent = request();
    await model(api.baseURL, { model: 'claude-opus-4-5' }).create(sent);
    assert.equal(api.received.length, 1);
    const [received] = api.received;
    assert.ok(received, 'the API received the request');
    const { method, url, headers, body } = received;
    assert.equal(method, 'POST');
    assert.equal(url, '/v1/messages');
    // SDK 1.15 sends apiKey as `Authorization: Bearer`, no longer as x-api-key.
    assert.equal(headers.authorization, 'Bearer sk-test-key');
    assert.equal(headers['x-api-key'], undefined);
    assert.equal(body.model, 'claude-opus-4-5');
    assert.equal(body.max_tokens, 1024);
    assert.deepEqual(body.system, sent.system);
    assert.deepEqual(body.tools, sent.tools);
    assert.deepEqual(body.messages, sent.messages);
  });

  it('caps max_tokens at the configured limit', async () => {
    const api = await startApi(ok());
    await model(api.baseURL, { maxTokens: 512 }).create(request({ max_tokens: 8000 }));
    assert.equal(api.received[0]?.body.max_tokens, 512);
  });

  it('leaves tools out when none are offered, and passes extra fields such as thinking through', async () => {
    const api = await startApi(ok());
    await model(api.baseURL).create(request({ tools: [], extra: { thinking: { type: 'enabled', budget_tokens: 1024 } } }));
    const [received] = api.received;
    assert.ok(received, 'the API received the request');
    const { body } = received;
    assert.equal('tools' in body, false);
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 1024 });
  });

  it('does not let extra fields replace the model, messages or token limit', async () => {
    const api = await startApi(ok());
    await model(api.baseURL).create(request({ extra: { model: 'other', max_tokens: 99_999, messages: [] } }));
    const [received] = api.received;
    assert.ok(received, 'the API received the request');
    const { body } = received;
    assert.equal(body.model, 'claude-sonnet-4-5');
    assert.equal(body.max_tokens, 1024);
    assert.equal(body.messages.length, 1);
  });

  it('honours ANTHROPIC_BASE_URL when no baseURL is configured', async () => {
    const api = await startApi(ok());
    const previous = process.env.ANTHROPIC_BASE_URL;
    process.env.ANTHROPIC_BASE_URL = api.baseURL;
    try {
      const reply = await model(undefined).create(request());
      assert.equal(reply.id, 'msg_01');
      assert.equal(api.received.length, 1);
    } finally {
      if (previous === undefined) delete process.env.ANTHROPIC_BASE_URL;
      else process.env.ANTHROPIC_BASE_URL = previous;
    }
  });

  it('counts cache usage the API reports as null as zero', async () => {
    const api = await startApi(ok({ usage: { input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: null, cache_read_input_tokens: null } }));
    const reply = await model(api.baseURL).create(request());
    assert.deepEqual(reply.usage, { input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  it('asks for native structured output when an output schema is set, and the reply is one text block of JSON', async () => {
    const schema = { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'], additionalProperties: false };
    const api = await startApi(ok({ content: [{ type: 'text', text: '{"summary":"Order ord_42 shipped late."}' }], stop_reason: 'end_turn' }));
    const reply = await model(api.baseURL).create(request({ purpose: 'compact', tools: [], output_schema: schema, extra: { output_config: { effort: 'low' } } }));
    assert.deepEqual(api.received[0]?.body.output_config, { effort: 'low', format: { type: 'json_schema', schema } });
    assert.equal(reply.content.length, 1);
    const [block] = reply.content;
    assert.equal(block?.type, 'text');
    assert.deepEqual(JSON.parse(block?.type === 'text' ? block.text : ''), { summary: 'Order ord_42 shipped late.' });
  });

  it('sends context_management through the beta Messages API with its beta header', async () => {
    const api = await startApi(ok({ context_management: { applied_edits: [] } }));
    const context_management = { edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 3 } }] };
    const reply = await model(api.baseURL).create(request({ extra: { context_management } }));
    const [received] = api.received;
    assert.ok(received, 'the API received the request');
    const { url, headers, body } = received;
    assert.match(url, /^\/v1\/messages/);
    assert.ok(String(headers['anthropic-beta']).split(',').includes(CONTEXT_MANAGEMENT_BETA));
    assert.deepEqual(body.context_management, context_management);
    assert.equal('betas' in body, false);
    assert.equal(reply.stop_reason, 'tool_use');
  });

  it("sends server-side compaction under its own beta header, beside context editing's", async () => {
    const api = await startApi(ok({ context_management: { applied_edits: [] } }));
    const context_management = { edits: [contextManagementEdits(3).edits![0]!, compactionEdit({ triggerInputTokens: 60_000 })] };
    await model(api.baseURL).create(request({ extra: { context_management } }));
    const { headers, body } = api.received[0]!;
    assert.deepEqual(String(headers['anthropic-beta']).split(',').sort(), [COMPACTION_BETA, CONTEXT_MANAGEMENT_BETA].sort());
    assert.deepEqual(body.context_management.edits[1], { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 60_000 } });
  });

  it('names itself after the model and is not the offline double', () => {
    const adapter = model('http://127.0.0.1:1');
    assert.equal(adapter.label, 'anthropic:claude-sonnet-4-5');
    assert.equal(adapter.offline, false);
  });

  it('refuses to start without an API key', () => {
    assert.throws(() => model('http://127.0.0.1:1', { apiKey: '' }), MissingApiKeyError);
  });
});

describe('model errors as Temporal sees them', () => {
  const callModel = (baseURL: string) => createModelActivities({ model: withModelFailures(model(baseURL)) }).callModel;

  it('does not retry a 429 itself; the failure is retryable after the retry-after wait, and the next attempt succeeds', async () => {
    const api = await startApi(apiError(429, 'rate_limit_error', 'Number of request tokens has exceeded your rate limit.', { 'retry-after': '7' }), ok());
    const call = callModel(api.baseURL);

    const failure = await failureOf(call(request()));
    assert.equal(api.received.length, 1, 'exactly one HTTP request per attempt');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.type, 'ModelRateLimited');
    assert.equal(failure.nextRetryDelay, 7_000);
    assert.match(failure.message, /rate_limit_error: Number of request tokens/);

    const reply = await call(request());
    assert.equal(reply.id, 'msg_01');
    assert.equal(api.received.length, 2);
  });

  it('fails a 400 for good, carrying the API error message', async () => {
    const api = await startApi(apiError(400, 'invalid_request_error', 'messages.0.content: tool_result block(s) missing'));
    const failure = await failureOf(callModel(api.baseURL)(request()));
    assert.equal(failure.nonRetryable, true);
    assert.equal(failure.type, 'ModelRequestRejected');
    assert.equal(failure.message, 'invalid_request_error: messages.0.content: tool_result block(s) missing');
    assert.equal(api.received.length, 1);
  });

  it('fails a 401 for good', async () => {
    const api = await startApi(apiError(401, 'authentication_error', 'invalid x-api-key'));
    const failure = await failureOf(callModel(api.baseURL)(request()));
    assert.equal(failure.nonRetryable, true);
    assert.equal(failure.type, 'ModelRequestRejected');
    assert.equal(failure.message, 'authentication_error: invalid x-api-key');
  });

  it('retries a 529 overloaded', async () => {
    const api = await startApi(apiError(529, 'overloaded_error', 'Overloaded'));
    const failure = await failureOf(callModel(api.baseURL)(request()));
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.type, 'ModelOverloaded');
    assert.equal(api.received.length, 1);
  });

  it('retries a 500', async () => {
    const api = await startApi(apiError(500, 'api_error', 'Internal server error'));
    const failure = await failureOf(callModel(api.baseURL)(request()));
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.type, 'ModelUnavailable');
  });

  it('retries when the connection is refused', async () => {
    const api = await startApi();
    await api.close();
    const failure = await failureOf(callModel(api.baseURL)(request()));
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.type, 'ModelConnectionFailed');
  });

  it('retries when the API does not answer within the timeout', async () => {
    const api = await startApi('hang');
    const call = createModelActivities({ model: withModelFailures(model(api.baseURL, { timeoutMs: 150 })) }).callModel;
    const failure = await failureOf(call(request()));
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.type, 'ModelTimedOut');
    assert.equal(api.received.length, 1);
  });

  it('passes errors that are not API errors through unchanged', async () => {
    const broken = new Error('offline investigator has no script for this ticket');
    const offline: Model = { label: 'offline investigator', offline: true, create: () => Promise.reject(broken) };
    await assert.rejects(createModelActivities({ model: withModelFailures(offline) }).callModel(request()), (e) => e === broken);
  });

  it('reads retry-after as seconds, as an HTTP date, and prefers retry-after-ms', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '2' }), now), 2_000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }), now), 30_000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '2', 'retry-after-ms': '250' }), now), 250);
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '0' }), now), undefined);
    assert.equal(retryAfterMs(new Headers(), now), undefined);
  });
});
