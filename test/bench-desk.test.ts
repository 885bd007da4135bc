import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config';
import type { Database } from '../src/db/pool';
import { runDeskBench, type DeskBenchResult } from '../src/dev/bench/desk';
import { runDeskStorm, type StormResult } from '../src/dev/bench/desk-storm';
import { openTestDatabase } from './support/db';

// The desk benchmark at a tiny size: the table's shape and the bench's own exactly-once checks,
// never its timings (those are for people reading the printed table).

describe('casework bench desk', () => {
  let db: Database;
  let result: DeskBenchResult;
  const lines: string[] = [];
  before(async () => {
    db = await openTestDatabase();
    result = await runDeskBench(loadConfig(), { out: (line) => lines.push(line), deliveries: 4, replies: 6, concurrency: [1, 3], pool: db.app });
  });
  after(async () => {
    await db?.close();
  });

  it('has a fresh and a duplicate row per desk and concurrency, each delivery answered exactly once', () => {
    assert.deepEqual(
      result.webhooks.map((r) => `${r.desk}/${r.delivery}/${r.concurrency}`),
      [1, 3].flatMap((c) => ['zendesk', 'intercom', 'freshdesk'].flatMap((d) => [`${d}/fresh/${c}`, `${d}/duplicate/${c}`])),
    );
    for (const row of result.webhooks) {
      assert.equal(row.sent, 4);
      assert.equal(row.answered, 4, `${row.desk} ${row.delivery}: ${JSON.stringify(row.statuses)}`);
      // Fresh: 202 accepted (handed to Temporal), or 503 with Retry-After when the suite's load
      // kept Postgres or Temporal past the server's deadline (the desk delivers again); the
      // redelivery: 200 duplicate, nothing started.
      if (row.delivery === 'fresh') {
        assert.ok(row.statuses[202], `${row.desk}: some fresh deliveries are accepted: ${JSON.stringify(row.statuses)}`);
        assert.deepEqual(
          Object.keys(row.statuses).filter((code) => code !== '202' && code !== '503'),
          [],
          `${row.desk}: ${JSON.stringify(row.statuses)}`,
        );
      } else {
        // A delivery refused with 503 the first time may be admitted on its redelivery, never more.
        const fresh = result.webhooks.find((r) => r.desk === row.desk && r.concurrency === row.concurrency && r.delivery === 'fresh');
        const refused = fresh?.statuses[503] ?? 0;
        assert.ok((row.statuses[200] ?? 0) >= 4 - refused, `${row.desk} redelivery: ${JSON.stringify(row.statuses)} after ${refused} refused`);
      }
      assert.ok(row.p50Ms <= row.p95Ms && row.p95Ms <= row.p99Ms && row.p99Ms <= row.maxMs);
    }
  });

  it('starts one workflow per fresh delivery, none for the redeliveries', () => {
    assert.equal(result.freshDeliveries, 3 * 5 + 2 * 3 * 4);
    assert.equal(result.workflowsStarted, result.freshDeliveries);
  });

  it('posts every reply once on each path, and posts nothing when postToDesk is retried', () => {
    assert.deepEqual(
      result.replies.map((r) => `${r.path}/${r.concurrency}`),
      [1, 3].flatMap((c) => [`client/${c}`, `postToDesk/${c}`, `postToDesk, already posted/${c}`]),
    );
    for (const row of result.replies) {
      assert.equal(row.replies, 6);
      assert.equal(row.duplicates, 0, row.path);
      assert.ok(row.repliesPerSecond > 0);
    }
    const outcomes = (path: string) => result.replies.filter((r) => r.path === path).map((r) => r.outcomes);
    assert.deepEqual(outcomes('postToDesk'), [{ posted: 6 }, { posted: 6 }]);
    assert.deepEqual(outcomes('postToDesk, already posted'), [{ already_posted: 6 }, { already_posted: 6 }]);
  });

  it('prints both tables with their headers', () => {
    const text = lines.join('\n');
    assert.match(text, /^desk +delivery +concurrency +sent +answered +answers +p50 ms +p95 ms +p99 ms +max ms$/m);
    assert.match(text, /^path +concurrency +replies +seconds +replies\/s +p50 ms +p95 ms +duplicates +outcomes$/m);
    assert.match(text, /workflows started: 39 for 39 fresh deliveries/);
  });
});

describe('casework bench desk --storm', () => {
  let db: Database;
  let result: StormResult;
  const lines: string[] = [];
  before(async () => {
    db = await openTestDatabase();
    // A dev server of its own: the storm stops and restarts it, which the suite's shared one must not be.
    const port = Number(process.env.CASEWORK_TEST_TEMPORAL_PORT ?? 7243) + 41;
    const uiPort = Number(process.env.CASEWORK_TEST_UI_PORT ?? 8243) + 41;
    const config = loadConfig({ ...process.env, TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_UI_URL: `http://127.0.0.1:${uiPort}` });
    result = await runDeskStorm(config, { out: (line) => lines.push(line), deliveries: 10, pool: db.app });
  });
  after(async () => {
    await db?.close();
  });

  it('every delivery reaches its investigation exactly once through a Temporal outage and a replica restart', () => {
    // A signal sent again for the same event after an ambiguous timeout is counted apart
    // (re-signalled): the workflow drops a repeated event id, so the message counts once.
    assert.deepEqual(
      result.rows.map((r) => [r.desk, r.deliveries, r.exactlyOnce, r.lost, r.duplicated]),
      [
        ['zendesk', 10, 10, 0, 0],
        ['intercom', 10, 10, 0, 0],
        ['freshdesk', 10, 10, 0, 0],
      ],
    );
    assert.ok(result.refusedDuringOutage > 0, 'some deliveries arrived while Temporal was down');
    assert.equal(result.replicaRestarts, 1);
  });

  it('never answers a desk with a 4xx, and prints whether the targets were met', () => {
    for (const row of result.rows) {
      assert.deepEqual(
        Object.keys(row.answers).filter((s) => s.startsWith('4')),
        [],
        `${row.desk}: ${JSON.stringify(row.answers)}`,
      );
    }
    assert.match(lines.join('\n'), /target 0 lost, 0 duplicated: met/);
  });
});
