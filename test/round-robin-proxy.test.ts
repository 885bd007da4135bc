import assert from 'node:assert/strict';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig, type Config } from '../src/config';
import type { Database } from '../src/db/pool';
import { startRoundRobinProxy, type RoundRobinProxy, type Upstream } from '../src/dev/round-robin-proxy';
import { lazyClient, startServer, type RunningServer } from '../src/server/start';
import { consoleAgent, visibleText } from './support/console-agent';
import { openTestDatabase } from './support/db';
import { freePort } from './support/net';

// The dev balancer the fleet soak puts in front of its replicas: two real console replicas on
// one Postgres behind it, and a person's browser talking only to the proxy. Requests alternate
// between the replicas, the console's own checks (the form's Origin against the Host, the
// session in Postgres) pass through it, a stopped replica is skipped, and a request a replica
// took is never sent to another.

const SUPPORT = 'sk_support_proxy_0123456789ab';

let db: Database;
let config: Config;
const temporal: { close(): Promise<void> }[] = [];
const replicas: RunningServer[] = [];
let proxy: RoundRobinProxy;

const upstreamOf = (server: RunningServer): Upstream => ({ host: '127.0.0.1', port: server.port });

async function replica(): Promise<RunningServer> {
  const client = lazyClient(config);
  temporal.push(client);
  const server = await startServer({ client: client.client, pool: db.app, config, log: () => undefined, routes: 'console' }, 0);
  replicas.push(server);
  return server;
}

before(async () => {
  db = await openTestDatabase();
  config = { ...loadConfig(), DATABASE_URL: db.url, CASEWORK_API_KEYS: `${SUPPORT}:support`, TEMPORAL_ADDRESS: '127.0.0.1:9' };
  const a = await replica();
  const b = await replica();
  proxy = await startRoundRobinProxy({ upstreams: [upstreamOf(a), upstreamOf(b)] });
});
after(async () => {
  await proxy?.close();
  for (const server of replicas) await server.close(500);
  for (const client of temporal) await client.close().catch(() => undefined);
  await db?.close();
});

describe('the round-robin proxy', () => {
  test('sends each request to the next replica, and a console session works through it from sign-in to a form', async () => {
    const [a, b] = replicas as [RunningServer, RunningServer];
    const before = { ...proxy.counts.byUpstream };
    const agent = consoleAgent(proxy.url);
    const origin = { origin: proxy.url };
    assert.equal((await agent.signIn(SUPPORT, 'Sam', origin)).status, 303);
    for (let i = 0; i < 6; i++) assert.equal((await agent.get('/console/customers')).status, 200);
    const lookup = await agent.post('/console/customers/lookup', { customerId: 'cust_dana' }, { headers: origin });
    assert.equal(lookup.status, 303, `the form's Origin matches the Host the proxy passed on: ${visibleText(lookup.text).slice(0, 200)}`);
    const served = (s: RunningServer) => (proxy.counts.byUpstream[`127.0.0.1:${s.port}`] ?? 0) - (before[`127.0.0.1:${s.port}`] ?? 0);
    assert.equal(served(a) + served(b), 9, 'sign-in page, sign-in, six pages, one form');
    assert.ok(Math.abs(served(a) - served(b)) <= 1, `turn and turn about: ${served(a)} and ${served(b)}`);
  });

  test('skips a replica that refuses connections, and answers 502 saying so when none takes the request', async () => {
    const stopped = await replica();
    const live = replicas[1]!;
    await stopped.close();
    proxy.setUpstreams([upstreamOf(stopped), upstreamOf(live)]);
    const refusedBefore = proxy.counts.refused;
    for (let i = 0; i < 4; i++) assert.equal((await fetch(`${proxy.url}/healthz`)).status, 200, 'every request answered by the live replica');
    assert.ok(proxy.counts.refused > refusedBefore, 'the stopped replica was tried and skipped');

    proxy.setUpstreams([upstreamOf(stopped), { host: '127.0.0.1', port: await freePort() }]);
    const none = await fetch(`${proxy.url}/healthz`);
    assert.equal(none.status, 502);
    assert.match(((await none.json()) as { error: string }).error, /no replica took the request \(2 tried\)/);
  });

  test('never sends a request a replica accepted to another one, even when that replica fails it', async () => {
    // A replica double that takes the connection and the request, then drops it unanswered.
    const dropper = createTcpServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', () => r()));
    const live = replicas[1]!;
    try {
      proxy.setUpstreams([{ host: '127.0.0.1', port: (dropper.address() as AddressInfo).port }, upstreamOf(live)]);
      const liveBefore = proxy.counts.byUpstream[`127.0.0.1:${live.port}`] ?? 0;
      const res = await fetch(`${proxy.url}/console/sign-in`, { method: 'POST', body: 'key=x' });
      assert.equal(res.status, 502);
      assert.match(((await res.json()) as { error: string }).error, /failed: ECONNRESET/);
      assert.equal(proxy.counts.byUpstream[`127.0.0.1:${live.port}`] ?? 0, liveBefore, 'the POST was not sent again to the live replica');
    } finally {
      proxy.setUpstreams(replicas.slice(0, 2).map(upstreamOf));
      await new Promise<void>((r) => dropper.close(() => r()));
    }
  });
});
