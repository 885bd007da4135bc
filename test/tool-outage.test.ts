import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config';
import { selectCommerce } from '../src/commerce/select';
import { openDatabase, type Database } from '../src/db/pool';
import { startFaultProxy, type FaultProxy } from '../src/dev/fault-proxy';
import { investigationId } from '../src/schemas/event';
import { settingsWith, ticket } from './support/investigate';
import { answer, calls, lastToolResults, scriptedModel, toolUse, type ScriptedReply } from './support/scripted-model';
import { deliver } from './support/scripted-run';
import { openTestDatabase } from './support/db';
import { startTestWorker, type TestWorker } from './support/temporal';

// A read-only tool runs as a local activity, and it must wait out a Postgres outage exactly as
// a remote tool does: a blip shorter than the outage budget is retried through and the model
// gets the real result; an outage longer than the budget makes the tool unavailable and a
// person is told. The worker reaches Postgres through a fault proxy the test cuts as the tool
// asks the shop for the order; the remote way is checked beside it, to match. A cut from inside
// the model call lands on the model step's write of its reply instead: that is waited out in
// place, so the model is not asked twice.

const skip = !process.env.DATABASE_URL && 'needs a Postgres server (DATABASE_URL) to put a fault proxy in front of';

describe('a local read-only tool during a Postgres outage', { skip }, () => {
  const model = scriptedModel();
  let db: Database;
  let proxied: Database;
  let proxy: FaultProxy;
  let tw: TestWorker;
  /** The current outage: resolves once Postgres is reachable again. */
  let outage: Promise<void> = Promise.resolve();
  /** Set by a test: the next order lookup cuts Postgres (for this many ms) before it reads. */
  let cutAtNextOrder: number | undefined;

  before(async () => {
    db = await openTestDatabase({ seed: true });
    const url = new URL(db.url);
    proxy = await startFaultProxy({ port: 0, target: { host: url.hostname, port: Number(url.port || 5432) } });
    url.port = String(proxy.port);
    proxied = await openDatabase({ ...loadConfig(), DATABASE_URL: url.toString() });
    // The shop's orders read through the proxy as ever; a lookup the test arms cuts it first, so the outage meets the tool itself.
    const commerce = selectCommerce(loadConfig(), proxied.app);
    const orders = commerce.orders;
    const armed: typeof orders = {
      name: orders.name,
      orders: (customerId, page) => orders.orders(customerId, page),
      latestShipment: (customerId, orderId) => orders.latestShipment(customerId, orderId),
      order: async (customerId, orderId) => {
        if (cutAtNextOrder !== undefined) {
          const ms = cutAtNextOrder;
          cutAtNextOrder = undefined;
          await cut(ms);
        }
        return orders.order(customerId, orderId);
      },
    };
    tw = await startTestWorker({ pool: proxied.app, model, commerce: { ...commerce, orders: armed } });
  });
  after(async () => {
    await outage;
    await tw?.stop();
    await proxied?.close();
    await proxy?.close();
    await db?.close();
  });

  /** Cuts Postgres now, for `outageMs`; resolves once it is cut. */
  function cut(outageMs: number): Promise<void> {
    const cutting = proxy.cut();
    outage = cutting.then(() => new Promise((r) => setTimeout(r, outageMs)).then(() => proxy.resume()));
    return cutting;
  }

  /** A model reply that asks for get_order and cuts Postgres for `outageMs` as it is served. */
  function cutThenCall(outageMs: number): () => ScriptedReply {
    return () => {
      void cut(outageMs);
      return calls(toolUse('get_order', { order_id: '5102' }));
    };
  }

  const getOrder = () => calls(toolUse('get_order', { order_id: '5102' }));
  for (const local of ['true', 'false']) {
    const way = local === 'true' ? 'as a local activity' : 'as a remote activity (CASEWORK_LOCAL_READ_TOOLS=false)';
    test(`${way}: a blip shorter than the outage budget is waited out, and the model gets the order`, async () => {
      const event = ticket('cust_dana', 'Where is my order 5102?');
      const id = investigationId(event.ticketId);
      model.script(id, [getOrder(), answer('It was delivered on 12 October.')]);
      const cutsBefore = proxy.counts.cuts;
      cutAtNextOrder = 3_000;
      const settled = await deliver(tw, model, event, settingsWith({ CASEWORK_OUTAGE_BUDGET_SECONDS: '60', CASEWORK_LOCAL_READ_TOOLS: local }));
      await outage;
      assert.equal(proxy.counts.cuts, cutsBefore + 1, 'Postgres was cut while the tool ran');
      assert.equal(settled.status, 'waiting_for_customer');
      const [result] = lastToolResults(model.requests(id, 'investigate')[1]!);
      assert.equal(result!.is_error, false);
      assert.match(result!.content, /Trailpeak GTX/);
    });

    test(`${way}: an outage longer than the budget makes the tool unavailable and hands the case to a person`, async () => {
      const event = ticket('cust_dana', 'Where is my order 5102, again?');
      const id = investigationId(event.ticketId);
      model.script(id, [getOrder()]);
      cutAtNextOrder = 9_000;
      const settled = await deliver(tw, model, event, settingsWith({ CASEWORK_OUTAGE_BUDGET_SECONDS: '4', CASEWORK_LOCAL_READ_TOOLS: local }));
      await outage;
      assert.equal(settled.status, 'needs_human');
      assert.match(JSON.stringify(settled.handOff), /the get_order tool stayed unavailable past the outage budget/);
      assert.equal(model.requests(id, 'investigate').length, 1, 'the model is not asked again with a made-up result');
    });
  }

  // The model activity writes the reply it was sent to the transcript log. A blip at
  // that moment used to fail the activity, and its retry asked (and paid) the model again.
  test('a blip as the model answers is waited out where its reply is written, and the model is asked once for that step', async () => {
    const event = ticket('cust_dana', 'Where is my order 5102? Asking a third time.');
    const id = investigationId(event.ticketId);
    model.script(id, [cutThenCall(3_000), answer('It was delivered on 12 October.')]);
    const cutsBefore = proxy.counts.cuts;
    const settled = await deliver(tw, model, event, settingsWith({ CASEWORK_OUTAGE_BUDGET_SECONDS: '60' }));
    await outage;
    assert.equal(proxy.counts.cuts, cutsBefore + 1, 'Postgres was cut as the model answered');
    assert.equal(settled.status, 'waiting_for_customer');
    const asked = model.requests(id, 'investigate');
    assert.equal(asked.length, 2, 'one request for the step the blip hit, one after its tool ran');
    const [result] = lastToolResults(asked[1]!);
    assert.equal(result!.is_error, false);
    assert.match(result!.content, /Trailpeak GTX/, 'the second request follows the get_order the first reply asked for');
  });
});
