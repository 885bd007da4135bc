import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../src/config';
import { accountCall, addCall, costOf, DEFAULT_PRICES, emptyTotals, fullPriceCost, totalsOf } from '../src/context/accounting';
import { pricesFromConfig } from '../src/settings';

const million = 1_000_000;
const close = (actual: number, expected: number) => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} ≈ ${expected}`);

describe('token and cost accounting', () => {
  it('prices input at $4 per million, cache writes at 1.25x, reads at 0.1x and output at $20 per million by default', () => {
    assert.deepEqual({ ...DEFAULT_PRICES }, { input_per_mtok: 4, output_per_mtok: 20, cache_write_multiplier: 1.25, cache_read_multiplier: 0.1 });
    close(costOf({ input_tokens: million, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }), 4);
    close(costOf({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: million, cache_read_input_tokens: 0 }), 5);
    close(costOf({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: million }), 0.4);
    close(costOf({ input_tokens: 0, output_tokens: million, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }), 20);
  });

  it('splits one call into uncached, cache write, cache read and output', () => {
    const account = accountCall({ input_tokens: 1_000, output_tokens: 200, cache_creation_input_tokens: 4_000, cache_read_input_tokens: 10_000 });
    assert.equal(account.total_input_tokens, 15_000);
    close(account.cost.uncached_usd, 0.004);
    close(account.cost.cache_write_usd, 0.02);
    close(account.cost.cache_read_usd, 0.004);
    close(account.cost.output_usd, 0.004);
    close(account.cost.total_usd, 0.032);
    close(account.full_price_usd, 15_000 * 4e-6 + 200 * 20e-6);
  });

  it('reproduces the reference design: 1,830,000 input tokens at full price is $7.32', () => {
    close(fullPriceCost({ input_tokens: 1_830_000, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }), 7.32);
  });

  it('reads the price table from configuration', () => {
    const prices = pricesFromConfig(loadConfig({ CASEWORK_PRICE_INPUT_PER_MTOK: '3', CASEWORK_PRICE_OUTPUT_PER_MTOK: '15' }));
    assert.deepEqual(prices, { input_per_mtok: 3, output_per_mtok: 15, cache_write_multiplier: 1.25, cache_read_multiplier: 0.1 });
    close(costOf({ input_tokens: million, output_tokens: million, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, prices), 18);
  });

  it('keeps running totals with the peak input of any one call', () => {
    const a = { input_tokens: 100, output_tokens: 10, cache_creation_input_tokens: 3_000, cache_read_input_tokens: 0 };
    const b = { input_tokens: 50, output_tokens: 20, cache_creation_input_tokens: 500, cache_read_input_tokens: 3_000 };
    const totals = totalsOf([a, b]);
    assert.equal(totals.calls, 2);
    assert.deepEqual(totals.usage, { input_tokens: 150, output_tokens: 30, cache_creation_input_tokens: 3_500, cache_read_input_tokens: 3_000 });
    assert.equal(totals.peak_input_tokens, 3_550);
    close(totals.cost_usd, costOf(a) + costOf(b));
    assert.deepEqual(addCall(emptyTotals(), a), totalsOf([a]));
  });
});
