import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runContextBench, scenarioStepTokens, SCENARIO, type ContextBenchRow } from '../src/dev/bench/context';

const lines: string[] = [];
const result = runContextBench({ out: (line) => lines.push(line) });
const row = (policy: string): ContextBenchRow => {
  const found = result.rows.find((r) => r.policy === policy);
  assert.ok(found, `a row for ${policy}`);
  return found;
};
const cents = (usd: number) => Math.round(usd * 100) / 100;

describe('the context benchmark replays the reference design scenario', () => {
  it('builds steps of exactly 4,000 tokens that shrink to 100 once cleared', () => {
    const { assistant, result: toolResult } = scenarioStepTokens(7);
    assert.equal(assistant + toolResult, SCENARIO.step_tokens);
    assert.equal(assistant + 19, SCENARIO.cleared_step_tokens); // 19 tokens: the placeholder
  });

  it('reproduces 119,000 tokens at step 30 and $7.32 without clearing', () => {
    const none = row('no clearing');
    assert.equal(none.tokens_at_step_30, 119_000);
    assert.equal(none.total_input_tokens, 1_830_000);
    assert.equal(cents(none.cost_full_price_usd), 7.32);
  });

  it('reproduces 17,600 tokens at step 30 and $1.84 at full price when clearing every call', () => {
    const every = row('clear every call');
    assert.equal(every.tokens_at_step_30, 3_000 + 3 * 4_000 + 26 * 100);
    assert.equal(every.peak_tokens, 17_600);
    assert.equal(cents(every.cost_full_price_usd), 1.84);
  });

  it('shows that with caching, clearing every call costs more than not clearing at all, and batches cost least', () => {
    const none = row('no clearing');
    const every = row('clear every call');
    const batch = row('batch every 10 steps');
    assert.ok(every.cost_with_caching_usd > none.cost_with_caching_usd);
    assert.ok(batch.cost_with_caching_usd < none.cost_with_caching_usd);
    assert.equal(batch.tokens_at_step_30, 17_600);
    assert.equal(batch.clearing_batches, 3);
  });

  it('shows the cold-cache rule paying off after a long pause', () => {
    const batch = row('batch every 10 steps');
    const cold = row('batch every 10 + cold cache');
    assert.equal(cold.cost_with_caching_usd, batch.cost_with_caching_usd);
    assert.ok(cold.cost_with_caching_and_pause_usd < batch.cost_with_caching_and_pause_usd);
  });

  it('prints one table with a row per policy, and the same table as JSON on request', () => {
    const header = lines.find((l) => l.startsWith('policy'));
    assert.ok(header && /tokens at step 30.*peak tokens.*total input tokens.*cost, full price.*cost, with caching/.test(header));
    for (const r of result.rows)
      assert.ok(
        lines.some((l) => l.startsWith(r.policy)),
        r.policy,
      );
    const json: string[] = [];
    const again = runContextBench({ json: true, out: (line) => json.push(line) });
    const [line] = json;
    assert.ok(line !== undefined && json.length === 1, `one JSON line, not ${json.length}`);
    assert.deepEqual(JSON.parse(line), JSON.parse(JSON.stringify(again)));
    assert.deepEqual(again, result);
  });

  it('prints the schedule tables for 30, 100 and 300 steps, each naming the strategy the model chooses', () => {
    assert.deepEqual(
      result.schedules.map((t) => t.steps),
      [30, 100, 300],
    );
    for (const t of result.schedules) {
      assert.ok(lines.some((l) => l.startsWith(`${t.steps} steps, peak bound 30,000:`)));
      assert.ok(lines.some((l) => l === `  chosen by the model: ${t.chosen}`));
    }
  });

  it("reaches $1.02 or less with every request under 30,000 tokens on the 30-step workload, online and offline, where today's policies do not", () => {
    const [thirty] = result.schedules;
    const at = (prefix: string) => thirty!.rows.find((r) => r.policy.startsWith(prefix))!;
    for (const name of ['online rule', 'cache-optimal']) {
      const r = at(name);
      assert.ok(r.peak_tokens <= 30_000 && r.cost_usd <= 1.02, `${name}: $${r.cost_usd} at ${r.peak_tokens}`);
    }
    for (const name of ['batch every 10', 'over 40k']) assert.ok(at(name).peak_tokens > 30_000, name);
    // Server-side compaction cannot be set under 50,000 tokens, so it never keeps this bound.
    for (const t of result.schedules) assert.ok(t.rows.find((r) => r.policy.startsWith('server-side compaction'))!.peak_tokens > 30_000);
  });
});
