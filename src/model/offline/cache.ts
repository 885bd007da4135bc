import { createHash } from 'node:crypto';
import type { ContentBlockParam, MessageParam, TextBlockParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import type { TokenUsage } from '../../schemas/model';
import { CACHE_TTL_MS } from '../../context/clearing';
import { estimateBlockTokens, estimateTokens, estimateToolTokens } from '../../context/tokens';

// A deterministic stand-in for the Messages API's prompt cache, so offline runs and the
// benchmark report cache writes and reads the way the real API would. It follows the API's
// rules: the prefix is tools, then system, then messages; an entry is written at each
// cache_control breakpoint whose prefix is long enough; a later request reads the longest
// cached prefix ending at a block boundary up to `lookbackBlocks` before one of its
// breakpoints; a hit refreshes the entry's lifetime. Times are parameters, never a clock.

/** How the simulated cache behaves; defaults match the API. */
export interface CacheOptions {
  /** Entry lifetime, refreshed on every hit (the ephemeral cache's five minutes). */
  ttlMs: number;
  /** Shorter prefixes are never cached (the API's minimum is 1,024 tokens on most models). */
  minCacheableTokens: number;
  /** Block boundaries before a breakpoint the API checks for an earlier hit. */
  lookbackBlocks: number;
}

/** The API's behaviour: five-minute TTL, 1,024-token minimum, about 20 blocks of lookback. */
export const CACHE_DEFAULTS: CacheOptions = Object.freeze({ ttlMs: CACHE_TTL_MS, minCacheableTokens: 1_024, lookbackBlocks: 20 });

/** The cache's contents: prefix hash → when the entry expires (epoch ms). JSON-safe. */
export interface CacheState {
  entries: Record<string, number>;
}

/** A request as far as caching is concerned. */
export interface CacheableRequest {
  system: readonly TextBlockParam[];
  tools: readonly Tool[];
  messages: readonly MessageParam[];
}

/** A cache with nothing in it. */
export function emptyCacheState(): CacheState {
  return { entries: {} };
}

/** JSON with keys sorted at every level, so equal values always serialise to equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

interface Segment {
  /** Canonical text of the block, without its cache_control (a mark does not change the prefix). */
  text: string;
  tokens: number;
  breakpoint: boolean;
}

function unmarked(block: object): { body: Record<string, unknown>; marked: boolean } {
  const { cache_control, ...body } = block as Record<string, unknown>;
  return { body, marked: Boolean(cache_control) };
}

/** The request as the cache sees it: one segment per tool, system block and message block, in prefix order. */
function segments(request: CacheableRequest): Segment[] {
  const out: Segment[] = [];
  for (const tool of request.tools) {
    const { body, marked } = unmarked(tool);
    out.push({ text: `tool:${canonicalJson(body)}`, tokens: estimateToolTokens(tool), breakpoint: marked });
  }
  for (const block of request.system) {
    const { body, marked } = unmarked(block);
    out.push({ text: `system:${canonicalJson(body)}`, tokens: estimateTokens(block.text), breakpoint: marked });
  }
  request.messages.forEach((message, index) => {
    const blocks: ContentBlockParam[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    blocks.forEach((block, position) => {
      const { body, marked } = unmarked(block);
      // The role and message boundary are part of the prefix: the same blocks in other messages differ.
      const where = position === 0 ? `message ${index} ${message.role}:` : 'block:';
      out.push({ text: `${where}${canonicalJson(body)}`, tokens: estimateBlockTokens(block), breakpoint: marked });
    });
  });
  return out;
}

function prefixHashes(parts: Segment[]): string[] {
  let previous = '';
  return parts.map((part) => {
    previous = createHash('sha256').update(previous).update('\n').update(part.text).digest('hex').slice(0, 32);
    return previous;
  });
}

/** Element `i` of a per-block array; every index comes from the request's own blocks, so a miss is a bug. */
function at<T>(xs: readonly T[], i: number): T {
  const x = xs[i];
  if (x === undefined) throw new RangeError(`block ${i} is outside the request's ${xs.length} blocks`);
  return x;
}

/** The outcome of one request against the cache. */
export interface CacheResult {
  usage: TokenUsage;
  state: CacheState;
}

/**
 * Accounts one request against the cache at workflow time `nowMs`, returning its usage in the
 * API's fields (input_tokens is the uncached remainder) and the cache afterwards. Pure: the
 * given state is not changed.
 */
export function simulateCache(state: CacheState, request: CacheableRequest, nowMs: number, options: Partial<CacheOptions> = {}, outputTokens = 0): CacheResult {
  const { ttlMs, minCacheableTokens, lookbackBlocks } = { ...CACHE_DEFAULTS, ...options };
  const entries: Record<string, number> = {};
  for (const [hash, expiresAt] of Object.entries(state.entries)) if (expiresAt > nowMs) entries[hash] = expiresAt;

  const parts = segments(request);
  const hashes = prefixHashes(parts);
  const upTo: number[] = [];
  parts.reduce((sum, part, i) => (upTo[i] = sum + part.tokens), 0);
  const total = upTo.at(-1) ?? 0;
  const breakpoints = parts.flatMap((part, i) => (part.breakpoint ? [i] : []));

  let readEnd = -1;
  for (const b of breakpoints) {
    for (let j = b; j >= Math.max(0, b - lookbackBlocks); j -= 1) {
      if (j > readEnd && entries[at(hashes, j)] !== undefined) readEnd = j;
    }
  }
  const read = readEnd >= 0 ? at(upTo, readEnd) : 0;
  const cacheable = breakpoints.filter((b) => at(upTo, b) >= minCacheableTokens);
  const writeEnd = cacheable.at(-1) ?? -1;
  const written = writeEnd > readEnd ? at(upTo, writeEnd) - read : 0;

  for (const b of cacheable) entries[at(hashes, b)] = nowMs + ttlMs;
  if (readEnd >= 0) entries[at(hashes, readEnd)] = nowMs + ttlMs;

  return {
    usage: {
      input_tokens: total - read - written,
      output_tokens: outputTokens,
      cache_creation_input_tokens: written,
      cache_read_input_tokens: read,
    },
    state: { entries },
  };
}

/** A prompt cache that keeps its own state, for the offline model: one per worker (or per test). */
export interface PromptCache {
  /** Accounts one request at workflow time `nowMs`; `outputTokens` fills usage.output_tokens. */
  account(request: CacheableRequest, nowMs: number, outputTokens?: number): TokenUsage;
  /** Forgets everything cached. */
  reset(): void;
}

/** Creates a stateful prompt cache over simulateCache. */
export function createPromptCache(options: Partial<CacheOptions> = {}): PromptCache {
  let state = emptyCacheState();
  return {
    account(request, nowMs, outputTokens = 0) {
      const result = simulateCache(state, request, nowMs, options, outputTokens);
      state = result.state;
      return result.usage;
    },
    reset() {
      state = emptyCacheState();
    },
  };
}
