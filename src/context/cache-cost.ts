import type { PriceTable } from '../schemas/model';

// An exact cost model of the Messages API's prompt cache, over abstract requests: each request
// is a list of blocks (an identity and a token count) in prefix order (tools, system, messages)
// with cache_control breakpoints on some of them. It follows the documented rules: a cache
// entry is the prefix ending at a breakpoint; a request reads the longest cached prefix that
// ends at a block boundary no more than `lookbackBlocks` before one of its breakpoints; the
// tokens from there to each later breakpoint are written at that breakpoint's TTL (1.25x for
// five minutes, 2x for an hour); anything after the last breakpoint is plain input; an entry
// lives for its TTL and every hit refreshes it; prefixes under the minimum are never cached.
// Pure and deterministic: time is a parameter, prefix identities are counted, not hashed.

/** A cache_control TTL, as the API spells it. */
export type CacheTtl = '5m' | '1h';

/** Each TTL in milliseconds. */
export const CACHE_TTL_MS_OF: Readonly<Record<CacheTtl, number>> = Object.freeze({ '5m': 300_000, '1h': 3_600_000 });

/** What a one-hour cache write costs, as a multiple of the input price, when the price table does not say. */
export const DEFAULT_CACHE_WRITE_1H_MULTIPLIER = 2;

/** One block of a request as the cache sees it. */
export interface CostBlock {
  /** Identity of the block's content: equal keys at equal positions make equal prefixes. */
  key: string;
  tokens: number;
  /** A cache_control breakpoint on this block, with its TTL. */
  breakpoint?: CacheTtl;
}

/** One model call: when it is made (epoch ms) and its blocks in prefix order. */
export interface CostCall {
  at: number;
  blocks: readonly CostBlock[];
}

/** How the cache behaves; the defaults are the API's. */
export interface CacheRules {
  /** Block boundaries before a breakpoint at which the API looks for an earlier hit. */
  lookbackBlocks: number;
  /** Prefixes shorter than this are never cached (1,024 tokens on most models). */
  minCacheableTokens: number;
}

/** The API's rules: 20 blocks of lookback, a 1,024-token minimum. */
export const API_CACHE_RULES: CacheRules = Object.freeze({ lookbackBlocks: 20, minCacheableTokens: 1_024 });

/** One call's input, split the way the API bills it. */
export interface PricedCall {
  read_tokens: number;
  write_5m_tokens: number;
  write_1h_tokens: number;
  uncached_tokens: number;
  total_tokens: number;
  input_usd: number;
}

/** A malformed request: the API would refuse it, so the model refuses to price it. */
export class InvalidCacheRequestError extends Error {
  override name = 'InvalidCacheRequestError';
}

/** The most cache_control breakpoints one request may carry. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** The price of one call from its billed token split. */
export function inputCostUsd(call: Omit<PricedCall, 'input_usd' | 'total_tokens'>, prices: PriceTable): number {
  const perToken = prices.input_per_mtok / 1_000_000;
  const write1h = prices.cache_write_1h_multiplier ?? DEFAULT_CACHE_WRITE_1H_MULTIPLIER;
  return (
    perToken * (call.uncached_tokens + call.read_tokens * prices.cache_read_multiplier + call.write_5m_tokens * prices.cache_write_multiplier + call.write_1h_tokens * write1h)
  );
}

/** Why a request's breakpoints are not ones the API accepts, or null when they are. */
export function breakpointProblem(blocks: readonly CostBlock[]): string | null {
  const ttls = blocks.flatMap((b) => (b.breakpoint ? [b.breakpoint] : []));
  if (ttls.length > MAX_CACHE_BREAKPOINTS) return `${ttls.length} cache_control breakpoints, more than the ${MAX_CACHE_BREAKPOINTS} allowed`;
  // The API requires longer-lived entries to come first: a 1h breakpoint after a 5m one is refused.
  const late = ttls.findIndex((ttl, i) => ttl === '1h' && ttls.slice(0, i).includes('5m'));
  if (late >= 0) return `breakpoint ${late + 1} has ttl 1h after a 5m breakpoint; 1h entries must come first`;
  return null;
}

/** A prompt cache priced call by call; one per simulated run. */
export interface CacheCostModel {
  /** Prices one call at `call.at` and updates the cache; throws InvalidCacheRequestError on a request the API refuses. */
  price(call: CostCall): PricedCall;
  /** What `price` would report for this call, without changing the cache. */
  peek(call: CostCall): PricedCall;
  /** A copy with the same cache contents, for pricing alternatives from the same point. */
  fork(): CacheCostModel;
}

interface Entry {
  expiresAt: number;
  ttlMs: number;
}

/** Interns prefixes: the same chain of keys always gets the same number within one model. */
class PrefixIds {
  private readonly ids = new Map<string, number>();
  of(parent: number, key: string): number {
    const name = `${parent}\u0000${key}`;
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.ids.size + 1;
      this.ids.set(name, id);
    }
    return id;
  }
}

function createModel(prices: PriceTable, rules: CacheRules, ids: PrefixIds, entries: Map<number, Entry>): CacheCostModel {
  function evaluate(call: CostCall, commit: boolean): PricedCall {
    const problem = breakpointProblem(call.blocks);
    if (problem) throw new InvalidCacheRequestError(problem);
    const now = call.at;
    const live = (id: number) => {
      const entry = entries.get(id);
      return entry !== undefined && entry.expiresAt > now;
    };
    const prefix: number[] = [];
    const upTo: number[] = [];
    let parent = 0;
    let sum = 0;
    for (const block of call.blocks) {
      if (!Number.isFinite(block.tokens) || block.tokens < 0) throw new InvalidCacheRequestError(`block "${block.key}" has ${block.tokens} tokens`);
      parent = ids.of(parent, block.key);
      sum += block.tokens;
      prefix.push(parent);
      upTo.push(sum);
    }
    const breakpoints = call.blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let readEnd = -1;
    for (const b of breakpoints) {
      for (let j = b; j >= Math.max(0, b - rules.lookbackBlocks) && j > readEnd; j -= 1) {
        if (live(prefix[j]!)) {
          readEnd = j;
          break;
        }
      }
    }
    const read = readEnd >= 0 ? upTo[readEnd]! : 0;
    let written = read;
    let write5m = 0;
    let write1h = 0;
    for (const b of breakpoints) {
      if (b <= readEnd || upTo[b]! < rules.minCacheableTokens) continue;
      const tokens = upTo[b]! - written;
      if (call.blocks[b]!.breakpoint === '1h') write1h += tokens;
      else write5m += tokens;
      written = upTo[b]!;
    }
    const total = sum;
    const billed = { read_tokens: read, write_5m_tokens: write5m, write_1h_tokens: write1h, uncached_tokens: total - written };
    if (commit) {
      // A hit refreshes the entry it read; every cacheable breakpoint holds (or renews) its entry.
      if (readEnd >= 0) {
        const hit = entries.get(prefix[readEnd]!)!;
        hit.expiresAt = Math.max(hit.expiresAt, now + hit.ttlMs);
      }
      for (const b of breakpoints) {
        if (upTo[b]! < rules.minCacheableTokens) continue;
        const id = prefix[b]!;
        const ttlMs = CACHE_TTL_MS_OF[call.blocks[b]!.breakpoint!];
        const entry = entries.get(id);
        if (entry && entry.expiresAt > now) {
          entry.expiresAt = Math.max(entry.expiresAt, now + ttlMs);
          entry.ttlMs = Math.max(entry.ttlMs, ttlMs);
        } else entries.set(id, { expiresAt: now + ttlMs, ttlMs });
      }
    }
    return { ...billed, total_tokens: total, input_usd: inputCostUsd(billed, prices) };
  }
  return {
    price: (call) => evaluate(call, true),
    peek: (call) => evaluate(call, false),
    fork: () => createModel(prices, rules, ids, new Map([...entries].map(([id, e]) => [id, { ...e }]))),
  };
}

/** A cache with nothing in it, priced with `prices` under `rules` (the API's by default). */
export function createCacheCostModel(prices: PriceTable, rules: CacheRules = API_CACHE_RULES): CacheCostModel {
  return createModel(prices, rules, new PrefixIds(), new Map());
}

/** The priced run: every call's split, the total input cost and the largest request. */
export interface PricedRun {
  calls: PricedCall[];
  input_usd: number;
  peak_tokens: number;
  read_tokens: number;
  write_tokens: number;
  total_tokens: number;
}

/** Prices a whole run, call by call, from an empty cache. */
export function priceRun(calls: readonly CostCall[], prices: PriceTable, rules: CacheRules = API_CACHE_RULES): PricedRun {
  const model = createCacheCostModel(prices, rules);
  const priced = calls.map((call) => model.price(call));
  return summarise(priced);
}

/** Totals over priced calls. */
export function summarise(calls: PricedCall[]): PricedRun {
  return {
    calls,
    input_usd: calls.reduce((n, c) => n + c.input_usd, 0),
    peak_tokens: calls.reduce((n, c) => Math.max(n, c.total_tokens), 0),
    read_tokens: calls.reduce((n, c) => n + c.read_tokens, 0),
    write_tokens: calls.reduce((n, c) => n + c.write_5m_tokens + c.write_1h_tokens, 0),
    total_tokens: calls.reduce((n, c) => n + c.total_tokens, 0),
  };
}
