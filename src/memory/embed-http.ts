import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { BadInputError, UnavailableError } from '../errors';
import { normalise, type Embedder, type EmbedPurpose } from './embedder';

// A hosted embeddings API over HTTP, in one of two request shapes:
// - Voyage AI (which Anthropic recommends): POST {base}/embeddings with
//   { input: string[], model, input_type: 'query' | 'document', output_dimension? },
//   answering { object: 'list', data: [{ object: 'embedding', embedding: number[], index }], model, usage: { total_tokens } };
// - the OpenAI-compatible shape local servers speak too: POST {base}/embeddings with
//   { input: string[], model, encoding_format: 'float', dimensions? }, answering
//   { object: 'list', data: [{ object: 'embedding', index, embedding }], model, usage: { prompt_tokens, total_tokens } }.
// Retries network failures, 429 and 5xx with backoff (honouring retry-after); a wrong key or
// model fails at once, saying which, because retrying cannot fix configuration.

/** Which request shape the API speaks. */
export type EmbeddingApi = 'voyage' | 'openai';

/** Where the hosted APIs live unless configured otherwise. */
export const DEFAULT_BASE_URLS: Readonly<Record<EmbeddingApi, string>> = {
  voyage: 'https://api.voyageai.com/v1',
  openai: 'https://api.openai.com/v1',
};

/** Options of the HTTP embedder. */
export interface HttpEmbedderOptions {
  api: EmbeddingApi;
  model: string;
  apiKey?: string;
  baseUrl?: string;
  /** Ask the API for vectors of this length (both shapes accept it for models that can). */
  dimensions?: number;
  timeoutMs?: number;
  /** Attempts after the first for retryable failures. */
  retries?: number;
  /** Texts per request (Voyage accepts up to 128, OpenAI 2048). */
  batch?: number;
  fetch?: typeof fetch;
  /** Waits between retries; replaced in tests so they do not sleep. */
  sleep?: (ms: number) => Promise<unknown>;
}

/** The hosted API refused the key or the model: a configuration error, never retried. */
export class EmbeddingConfigError extends BadInputError {}

const Response = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()), index: z.number().int().nonnegative() })).min(1),
});

function errorMessage(body: string): string {
  try {
    const json = JSON.parse(body) as { detail?: unknown; error?: { message?: unknown } | string; message?: unknown };
    const message = typeof json.error === 'object' ? json.error?.message : (json.error ?? json.detail ?? json.message);
    if (typeof message === 'string') return message;
  } catch {
    // Not JSON: use the text itself.
  }
  return body.slice(0, 200);
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.min(30_000, Math.max(0, seconds * 1000));
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.min(30_000, Math.max(0, at - Date.now()));
}

/** The hosted embedder. Its id names the API shape, model and requested length, so any change re-embeds. */
export function createHttpEmbedder(options: HttpEmbedderOptions): Embedder {
  const base = (options.baseUrl || DEFAULT_BASE_URLS[options.api]).replace(/\/+$/, '');
  const url = `${base}/embeddings`;
  const doFetch = options.fetch ?? fetch;
  const wait = options.sleep ?? ((ms: number) => sleep(ms));
  const retries = options.retries ?? 3;
  const batch = options.batch ?? (options.api === 'voyage' ? 128 : 256);
  const timeoutMs = options.timeoutMs ?? 15_000;
  const name = options.api === 'voyage' ? 'Voyage AI' : 'OpenAI-compatible';
  let dimensions = options.dimensions ?? 0;

  const body = (texts: string[], purpose: EmbedPurpose) =>
    options.api === 'voyage'
      ? { input: texts, model: options.model, input_type: purpose, ...(options.dimensions ? { output_dimension: options.dimensions } : {}) }
      : { input: texts, model: options.model, encoding_format: 'float', ...(options.dimensions ? { dimensions: options.dimensions } : {}) };

  async function request(texts: string[], purpose: EmbedPurpose): Promise<number[][]> {
    let lastProblem = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      let delay = Math.min(8_000, 250 * 2 ** attempt);
      try {
        const response = await doFetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
          body: JSON.stringify(body(texts, purpose)),
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await response.text();
        if (response.ok) {
          const parsed = Response.safeParse(JSON.parse(text));
          if (!parsed.success || parsed.data.data.length !== texts.length) {
            throw new EmbeddingConfigError(`the ${name} embeddings API at ${url} answered in a shape casework does not understand (is CASEWORK_EMBEDDINGS right for it?)`);
          }
          return [...parsed.data.data].sort((a, b) => a.index - b.index).map((d) => normalise(d.embedding));
        }
        const message = errorMessage(text);
        if (response.status === 401 || response.status === 403) {
          throw new EmbeddingConfigError(`the ${name} embeddings API refused the key (HTTP ${response.status}: ${message}); check CASEWORK_EMBEDDINGS_API_KEY`);
        }
        if (response.status === 404 || (response.status === 400 && /model/i.test(message))) {
          throw new EmbeddingConfigError(
            `the ${name} embeddings API does not accept model "${options.model}" (HTTP ${response.status}: ${message}); check CASEWORK_EMBEDDINGS_MODEL`,
          );
        }
        if (response.status !== 429 && response.status < 500) {
          throw new EmbeddingConfigError(`the ${name} embeddings API rejected the request (HTTP ${response.status}: ${message})`);
        }
        lastProblem = `HTTP ${response.status}: ${message}`;
        delay = retryAfterMs(response.headers.get('retry-after')) ?? delay;
      } catch (error) {
        if (error instanceof EmbeddingConfigError) throw error;
        lastProblem = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message;
      }
      if (attempt < retries) await wait(delay);
    }
    throw new UnavailableError(`the ${name} embeddings API at ${url} failed ${retries + 1} times (${lastProblem})`);
  }

  return {
    id: `${options.api}:${options.model}${options.dimensions ? `@${options.dimensions}` : ''}`,
    get dimensions() {
      return dimensions;
    },
    label: `${name} embeddings (${options.model})`,
    offThread: true,
    async embed(texts, purpose) {
      const vectors: number[][] = [];
      for (let i = 0; i < texts.length; i += batch) vectors.push(...(await request(texts.slice(i, i + batch), purpose)));
      if (vectors.length) dimensions = vectors[0]!.length;
      return vectors;
    },
  };
}
