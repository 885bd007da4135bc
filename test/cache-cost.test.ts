import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_PRICES } from '../src/context/accounting';
import { createCacheCostModel, InvalidCacheRequestError, priceRun, type CostBlock } from '../src/context/cache-cost';
import { chooseSchedule, priceSchedule } from '../src/context/clearing-schedule';
import { overPeak, tailWorthWriting, ttlBeforeWait } from '../src/context/cache-schedule-rule';
import { pricesFromConfig } from '../src/settings';
import { runPolicy, schedulePolicies } from '../src/dev/bench/context-schedule';
import { scenarioWorkload } from '../src/dev/bench/context';

const blocks = (n: number, tokens = 100, prefix = 'b'): CostBlock[] => Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}`, tokens }));
const mark = (bs: CostBlock[], at: number, ttl: '5m' | '1h' = '5m') => bs.map((b, i) => (i === at ? { ...b, breakpoint: ttl } : b));
const usd = (tokens: number, multiplier: number) => (tokens * 4 * multiplier) / 1_000_000;
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} is not ${b}`);

describe('the prompt-cache cost model', () => {
  it('bills a first call as a write at 1.25x, the same prefix next as a read at 0.1x, and what follows the last breakpoint at 1x', () => {
    const model = createCacheCostModel(DEFAULT_PRICES);
    const first = model.price({ at: 0, blocks: mark(blocks(20), 19) });
    assert.deepEqual([first.write_5m_tokens, first.read_tokens, first.uncached_tokens], [2_000, 0, 0]);
    close(first.input_usd, usd(2_000, 1.25));
    const second = model.price({ at: 60_000, blocks: mark([...blocks(20), ...blocks(3, 100, 'new')], 19) });
    assert.deepEqual([second.read_tokens, second.write_5m_tokens, second.uncached_tokens], [2_000, 0, 300]);
    close(second.input_usd, usd(2_000, 0.1) + usd(300, 1));
  });

  it('bills an hour-TTL write at 2x and keeps it past five minutes; a five-minute entry expires', () => {
    const model = createCacheCostModel(DEFAULT_PRICES);
    const hour = model.price({ at: 0, blocks: mark(blocks(20), 19, '1h') });
    close(hour.input_usd, usd(2_000, 2));
    assert.equal(model.price({ at: 30 * 60_000, blocks: mark(blocks(20), 19) }).read_tokens, 2_000);
    const five = createCacheCostModel(DEFAULT_PRICES);
    five.price({ at: 0, blocks: mark(blocks(20), 19) });
    assert.equal(five.price({ at: 300_001, blocks: mark(blocks(20), 19) }).read_tokens, 0);
  });

  it('takes its prices from the configured table (CASEWORK_PRICE_*)', () => {
    const prices = pricesFromConfig({
      CASEWORK_PRICE_INPUT_PER_MTOK: 3,
      CASEWORK_PRICE_OUTPUT_PER_MTOK: 15,
      CASEWORK_PRICE_CACHE_WRITE_MULTIPLIER: 1.5,
      CASEWORK_PRICE_CACHE_READ_MULTIPLIER: 0.2,
    });
    const run = priceRun([{ at: 0, blocks: mark(blocks(20), 19) }], prices);
    close(run.input_usd, (2_000 * 3 * 1.5) / 1_000_000);
  });

  it('reads an earlier entry 20 blocks before a breakpoint, and not 21', () => {
    for (const [added, read] of [
      [20, 2_000],
      [21, 0],
    ] as const) {
      const model = createCacheCostModel(DEFAULT_PRICES);
      model.price({ at: 0, blocks: mark(blocks(20), 19) });
      const grown = [...blocks(20), ...blocks(added, 10, 'new')];
      assert.equal(model.price({ at: 1_000, blocks: mark(grown, grown.length - 1) }).read_tokens, read, `${added} blocks added`);
    }
  });

  it('refuses what the API refuses: five breakpoints, or an hour entry after a five-minute one', () => {
    const model = createCacheCostModel(DEFAULT_PRICES);
    const five = blocks(5).map((b) => ({ ...b, breakpoint: '5m' as const }));
    assert.throws(() => model.price({ at: 0, blocks: five }), InvalidCacheRequestError);
    assert.throws(() => model.price({ at: 0, blocks: mark(mark(blocks(5), 1), 3, '1h') }), /1h after a 5m/);
  });

  it('never caches a prefix under the minimum', () => {
    const model = createCacheCostModel(DEFAULT_PRICES);
    const small = model.price({ at: 0, blocks: mark(blocks(5), 4) });
    assert.deepEqual([small.write_5m_tokens, small.uncached_tokens], [0, 500]);
  });
});

describe("the cache-optimal clearing schedule on the design text's workload", () => {
  const w = scenarioWorkload(30);

  it("prices today's batch-10 schedule at $1.03, as the simulator does", () => {
    const batch10 = priceSchedule(w, [10, 20, 30], { prices: DEFAULT_PRICES });
    assert.equal(Math.round(batch10.input_usd * 100) / 100, 1.03);
    assert.equal(batch10.peak_tokens, 52_600);
  });

  it('finds a keep-3 schedule of at most $1.02 whose every request stays under 30,000 tokens', () => {
    const best = chooseSchedule(w, { prices: DEFAULT_PRICES, peakTokens: 30_000 });
    assert.ok(best);
    assert.ok(best.peak_tokens <= 30_000, `peak ${best.peak_tokens}`);
    assert.ok(best.input_usd <= 1.02, `$${best.input_usd}`);
    // Exhaustive over the last batch: moving it a step either way never costs less.
    for (const shift of [-1, 1]) {
      const moved = [...best.batches.slice(0, -1), best.batches.at(-1)! + shift];
      const priced = priceSchedule(w, moved, { prices: DEFAULT_PRICES, skipTailBeforeBatch: true });
      if (priced.peak_tokens <= 30_000) assert.ok(priced.input_usd >= best.input_usd - 1e-12);
    }
  });

  it("the workflow's online rule reaches the same bound without seeing the future", () => {
    const online = schedulePolicies(DEFAULT_PRICES).find((p) => p.name.startsWith('online rule'))!;
    const run = runPolicy(w, online, DEFAULT_PRICES);
    assert.ok(run.peak_tokens <= 30_000, `peak ${run.peak_tokens}`);
    assert.ok(run.input_usd <= 1.02, `$${run.input_usd}`);
  });

  it('reports no schedule when the placeholders alone pass the bound', () => {
    assert.equal(chooseSchedule(scenarioWorkload(300), { prices: DEFAULT_PRICES, peakTokens: 30_000 }), null);
  });
});

describe('the online rule', () => {
  it('clears when the request passes the bound, and past the point clearing can reach it, only when a batch frees half the bound', () => {
    assert.equal(overPeak({ tokensIfUnchanged: 29_000, tokensIfCleared: 15_000, peakTokens: 30_000 }), false);
    assert.equal(overPeak({ tokensIfUnchanged: 31_000, tokensIfCleared: 15_400, peakTokens: 30_000 }), true);
    assert.equal(overPeak({ tokensIfUnchanged: 48_000, tokensIfCleared: 44_000, peakTokens: 30_000 }), false);
    assert.equal(overPeak({ tokensIfUnchanged: 60_000, tokensIfCleared: 44_000, peakTokens: 30_000 }), true);
  });

  it('does not write the tail when the next step will clear', () => {
    assert.equal(tailWorthWriting({ contextTokens: 27_000, stepGrowthTokens: 4_000, tokensIfCleared: 15_000, peakTokens: 30_000 }), false);
    assert.equal(tailWorthWriting({ contextTokens: 23_000, stepGrowthTokens: 4_000, tokensIfCleared: 15_000, peakTokens: 30_000 }), true);
  });

  it('takes the hour TTL before a wait only when the answers that come inside the hour pay its premium', () => {
    const v = { contextTokens: 27_000, writtenTokens: 4_000, clearedTokens: 15_000, prices: DEFAULT_PRICES };
    assert.equal(ttlBeforeWait({ ...v, withinHourShare: 0.5 }), '1h');
    assert.equal(ttlBeforeWait({ ...v, withinHourShare: 0.1 }), '5m');
    assert.equal(ttlBeforeWait({ ...v, withinHourShare: 0 }), '5m');
  });
});
