import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { UnavailableError } from '../src/errors';
import { createDeskMetrics } from '../src/desk/metrics';
import { configuredCustomerLookup } from '../src/desk/customers';
import { createWebhookRoute, webhookRouteDesk, type WebhookLog } from '../src/desk/route';
import type { AcceptedWebhook } from '../src/desk/types';
import { signZendesk } from '../src/desk/zendesk-inbound';

// The webhook route on a real socket, with the gate and the Temporal hand-off replaced by a
// recorder that answers as the gate does (an event id delivered once, then a duplicate).

const body = readFileSync(join(__dirname, 'fixtures', 'desk', 'zendesk-comment-added.json'));
const SECRET = 'route-secret';
const delivered: AcceptedWebhook[] = [];
const logs: WebhookLog[] = [];
const rejectedReasons: string[] = [];
let temporalDown = false;
let server: Server;
const registry = new Registry();
let url: string;

before(async () => {
  const customers = configuredCustomerLookup({ customers: new Map([['zendesk:8447388090494', 'C-1001']]), trustExternalId: false });
  const metrics = createDeskMetrics(registry);
  const route = createWebhookRoute({
    settings: { inbound: { zendesk: { signingSecret: SECRET, replayWindowSeconds: 300, customers } } },
    deliver: async (accepted) => {
      if (temporalDown) throw new UnavailableError('Temporal is unreachable');
      if (delivered.some((d) => d.event.eventId === accepted.event.eventId)) return { duplicate: true };
      delivered.push(accepted);
      return { duplicate: false };
    },
    resolve: async () => undefined,
    park: async () => true,
    parkReasonOf: () => undefined,
    log: (entry) => logs.push(entry),
    ...metrics.route,
    rejected: (desk, reason) => {
      rejectedReasons.push(reason);
      metrics.route.rejected?.(desk, reason);
    },
  });
  server = createServer((req, res) => {
    const desk = webhookRouteDesk(req.method, new URL(req.url ?? '/', 'http://x').pathname);
    if (!desk) return void res.writeHead(404).end();
    void route(desk, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const post = (path: string, options: { secret?: string; timestamp?: string } = {}) => {
  const timestamp = options.timestamp ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-zendesk-webhook-signature': signZendesk(options.secret ?? SECRET, timestamp, body),
      'x-zendesk-webhook-signature-timestamp': timestamp,
    },
    body,
  });
};

describe('POST /webhooks/:desk', () => {
  it('hands a verified delivery to Temporal once, however many times the desk sends it', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await post('/webhooks/zendesk')).status);
    assert.deepEqual(statuses, [202, 200, 200, 200, 200]);
    assert.equal(delivered.length, 1);
    assert.equal(delivered[0]!.event.eventId, 'zendesk-comment-30064117810589');
  });

  it('starts nothing for a bad signature or a replay, and counts each by reason', async () => {
    const before = delivered.length;
    assert.equal((await post('/webhooks/zendesk', { secret: 'wrong' })).status, 401);
    assert.equal((await post('/webhooks/zendesk', { timestamp: '2020-01-01T00:00:00Z' })).status, 401);
    assert.equal(delivered.length, before);
    assert.deepEqual(rejectedReasons.slice(-2), ['bad_signature', 'stale_timestamp']);
    assert.ok(
      logs.every((entry) => !JSON.stringify(entry).includes('refund')),
      'log lines never carry the body',
    );
    const text = await registry.metrics();
    assert.match(text, /casework_desk_webhooks_rejected_total\{desk="zendesk",reason="bad_signature"\} 1/);
    assert.match(text, /casework_desk_webhooks_rejected_total\{desk="zendesk",reason="stale_timestamp"\} 1/);
    assert.match(text, /casework_desk_webhooks_received_total\{desk="zendesk",outcome="accepted"\} 5/);
  });

  it('answers 503 with Retry-After when Temporal does not take the event, so the redelivery is not lost', async () => {
    delivered.length = 0;
    const fresh = JSON.parse(body.toString('utf8'));
    fresh.event.comment.id = '30064117810600';
    const raw = Buffer.from(JSON.stringify(fresh));
    const send = () => {
      const timestamp = new Date().toISOString();
      return fetch(`${url}/webhooks/zendesk`, {
        method: 'POST',
        headers: { 'x-zendesk-webhook-signature': signZendesk(SECRET, timestamp, raw), 'x-zendesk-webhook-signature-timestamp': timestamp },
        body: raw,
      });
    };
    temporalDown = true;
    const down = await send();
    assert.equal(down.status, 503);
    assert.ok(down.headers.get('retry-after'));
    temporalDown = false;
    assert.equal((await send()).status, 202);
    assert.deepEqual(
      delivered.map((d) => d.event.eventId),
      ['zendesk-comment-30064117810600'],
    );
  });

  it('answers 404 for a desk that is not configured', async () => {
    assert.equal((await fetch(`${url}/webhooks/intercom`, { method: 'POST', body: '{}' })).status, 404);
  });
});
