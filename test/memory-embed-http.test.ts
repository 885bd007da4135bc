import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHttpEmbedder, EmbeddingConfigError } from '../src/memory/embed-http';
import { UnavailableError } from '../src/errors';

// A stand-in for the hosted embeddings APIs on 127.0.0.1, strict about the documented request
// shapes: it answers 400 to any field it does not know or any field missing, as the real APIs do.

type Behaviour = { status?: number; headers?: Record<string, string>; body?: unknown };

const KEY = 'sk-test-right';
const MODELS = { voyage: 'voyage-3.5', openai: 'text-embedding-3-small' };

function vectorFor(text: string): number[] {
  // Deterministic and unnormalised, so the test can see the adapter normalise it.
  return [text.length, 1, 2];
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return JSON.parse(raw) as Record<string, unknown>;
}

describe('the hosted embeddings adapter', () => {
  let server: Server;
  let base: string;
  const queue: Behaviour[] = [];
  const seen: { path: string; auth?: string; body: Record<string, unknown> }[] = [];

  before(async () => {
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- a failing handler fails the test's request
    server = createServer(async (req, res) => {
      const body = await readJson(req);
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      };
      const next = queue.shift();
      if (next) return send(next.status ?? 200, next.body ?? {}, next.headers);
      const voyage = req.url === '/voyage/v1/embeddings';
      const openai = req.url === '/openai/v1/embeddings';
      if (!voyage && !openai) return send(404, { error: { message: 'no such route' } });
      if (req.headers.authorization !== `Bearer ${KEY}`) {
        return voyage
          ? send(401, { detail: 'Provided API key is invalid.' })
          : send(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
      }
      const allowed = voyage ? ['input', 'model', 'input_type', 'output_dimension', 'truncation'] : ['input', 'model', 'encoding_format', 'dimensions', 'user'];
      const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
      if (unknown.length || !Array.isArray(body.input) || typeof body.model !== 'string') return send(400, { detail: `bad request fields: ${unknown.join(', ')}` });
      if (voyage && !['query', 'document'].includes(String(body.input_type))) return send(400, { detail: 'input_type must be query or document' });
      if (openai && body.encoding_format !== 'float') return send(400, { error: { message: 'encoding_format must be float here' } });
      if (body.model !== (voyage ? MODELS.voyage : MODELS.openai)) {
        return voyage
          ? send(400, { detail: `Model ${String(body.model)} is not supported.` })
          : send(404, { error: { message: `The model \`${String(body.model)}\` does not exist`, code: 'model_not_found' } });
      }
      const inputs = body.input as string[];
      // Answered out of order on purpose: the adapter must order by index.
      const data = inputs.map((text, index) => ({ object: 'embedding', embedding: vectorFor(text), index })).reverse();
      return send(
        200,
        voyage
          ? { object: 'list', data, model: body.model, usage: { total_tokens: 3 } }
          : { object: 'list', data, model: body.model, usage: { prompt_tokens: 3, total_tokens: 3 } },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const noSleep = async () => undefined;

  it('speaks the Voyage AI shape: input_type from the purpose, vectors in input order, unit length', async () => {
    const embedder = createHttpEmbedder({ api: 'voyage', model: MODELS.voyage, apiKey: KEY, baseUrl: `${base}/voyage/v1`, sleep: noSleep });
    const vectors = await embedder.embed(['ab', 'abcd'], 'query');
    const request = seen.at(-1)!;
    assert.equal(request.path, '/voyage/v1/embeddings');
    assert.deepEqual(request.body, { input: ['ab', 'abcd'], model: MODELS.voyage, input_type: 'query' });
    assert.equal(vectors.length, 2);
    assert.ok(vectors[1]![0]! > vectors[0]![0]!, 'the longer text comes second, as sent');
    for (const v of vectors) assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-9);
    assert.equal(embedder.id, 'voyage:voyage-3.5');
    assert.equal(embedder.dimensions, 3);
  });

  it('speaks the OpenAI-compatible /v1/embeddings shape, asking for floats', async () => {
    const embedder = createHttpEmbedder({ api: 'openai', model: MODELS.openai, apiKey: KEY, baseUrl: `${base}/openai/v1/`, dimensions: 3, sleep: noSleep });
    const [v] = await embedder.embed(['hello'], 'document');
    assert.deepEqual(seen.at(-1)!.body, { input: ['hello'], model: MODELS.openai, encoding_format: 'float', dimensions: 3 });
    assert.equal(v!.length, 3);
    assert.equal(embedder.id, 'openai:text-embedding-3-small@3', 'the requested length is part of the id, so changing it re-embeds');
  });

  it('says the key is wrong, at once and without retrying', async () => {
    const embedder = createHttpEmbedder({ api: 'voyage', model: MODELS.voyage, apiKey: 'sk-wrong', baseUrl: `${base}/voyage/v1`, sleep: noSleep });
    const before = seen.length;
    await assert.rejects(embedder.embed(['x'], 'document'), (error: Error) => {
      assert.ok(error instanceof EmbeddingConfigError);
      assert.match(error.message, /refused the key \(HTTP 401: Provided API key is invalid\.\); check CASEWORK_EMBEDDINGS_API_KEY/);
      assert.doesNotMatch(error.message, /sk-wrong/, 'the key itself is never printed');
      return true;
    });
    assert.equal(seen.length - before, 1);
  });

  it('says the model is wrong, naming it, for either API', async () => {
    for (const api of ['voyage', 'openai'] as const) {
      const embedder = createHttpEmbedder({ api, model: 'no-such-model', apiKey: KEY, baseUrl: `${base}/${api}/v1`, sleep: noSleep });
      await assert.rejects(embedder.embed(['x'], 'document'), /does not accept model "no-such-model" \(HTTP 40[04]: .*no-such-model.*\); check CASEWORK_EMBEDDINGS_MODEL/);
    }
  });

  it('retries a 429 and a 503, waiting as retry-after says, then succeeds', async () => {
    const waits: number[] = [];
    const embedder = createHttpEmbedder({ api: 'openai', model: MODELS.openai, apiKey: KEY, baseUrl: `${base}/openai/v1`, sleep: async (ms) => waits.push(ms) });
    queue.push({ status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'rate limited' } } }, { status: 503, body: { error: { message: 'overloaded' } } });
    const [v] = await embedder.embed(['hello'], 'document');
    assert.equal(v!.length, 3);
    assert.deepEqual(waits, [2000, 500]);
  });

  it('gives up after its retries with an unavailable error naming the last problem', async () => {
    const embedder = createHttpEmbedder({ api: 'openai', model: MODELS.openai, apiKey: KEY, baseUrl: `${base}/openai/v1`, retries: 2, sleep: noSleep });
    queue.push({ status: 500, body: { error: { message: 'boom' } } }, { status: 502, body: {} }, { status: 500, body: { error: { message: 'still boom' } } });
    await assert.rejects(embedder.embed(['hello'], 'document'), (error: Error) => {
      assert.ok(error instanceof UnavailableError);
      assert.match(error.message, /failed 3 times \(HTTP 500: still boom\)/);
      return true;
    });
  });

  it('refuses an answer in a shape it does not understand instead of storing garbage', async () => {
    const embedder = createHttpEmbedder({ api: 'voyage', model: MODELS.voyage, apiKey: KEY, baseUrl: `${base}/voyage/v1`, sleep: noSleep });
    queue.push({ status: 200, body: { embeddings: [[1, 2, 3]] } });
    await assert.rejects(embedder.embed(['x'], 'document'), /answered in a shape casework does not understand/);
  });
});
