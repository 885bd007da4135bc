import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { configuredCustomerLookup, parseDeskCustomers } from '../src/desk/customers';
import { acceptFreshdeskWebhook, FRESHDESK_TOKEN_HEADER } from '../src/desk/freshdesk-inbound';
import { acceptIntercomWebhook, signIntercom } from '../src/desk/intercom-inbound';
import type { WebhookDelivery, WebhookResult } from '../src/desk/types';
import { createZendeskClient } from '../src/desk/zendesk-client';
import { acceptZendeskWebhook, signZendesk } from '../src/desk/zendesk-inbound';
import { startDeskStandin } from '../src/dev/desk-standin';

// `npx tsx scripts/bench-desk.ts [--webhooks 5000] [--replies 400] [--concurrency 1,8]`
//
// Two figures: what accepting one webhook costs casework (signature check on the raw bytes,
// replay window, parse, map to a ticket event: the synchronous part of the 2xx answer, without
// the Temporal signal), per desk, p50/p95 over --webhooks deliveries of the test fixtures; and
// replies posted per second to the Zendesk stand-in (each post is the exactly-once check, a GET,
// then the PUT), over loopback, at each concurrency. The stand-in is in this process, so the
// replies figure is casework's client plus a minimal server, not Zendesk's latency or limits.

const fixture = (name: string) => readFileSync(join(__dirname, '..', 'test', 'fixtures', 'desk', name));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function timeAccept(count: number, run: (i: number) => WebhookResult): { p50: number; p95: number; p99: number } {
  const samples: number[] = [];
  for (let i = 0; i < count + 200; i++) {
    const start = process.hrtime.bigint();
    const result = run(i);
    const us = Number(process.hrtime.bigint() - start) / 1000;
    if (result.outcome !== 'accepted') throw new Error(`bench delivery was not accepted: ${JSON.stringify(result)}`);
    if (i >= 200) samples.push(us); // the first 200 warm the JIT
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), p99: percentile(samples, 99) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { webhooks: { type: 'string' }, replies: { type: 'string' }, concurrency: { type: 'string' } } });
  const webhooks = Number(values.webhooks ?? 5000);
  const replies = Number(values.replies ?? 400);
  const levels = (values.concurrency ?? '1,8').split(',').map(Number);

  const customers = configuredCustomerLookup({
    customers: parseDeskCustomers('zendesk:8447388090494=C-1001,intercom:5d6a4c8e0e8a2b1c3d4e5f60=C-1001,freshdesk:priya@example.com=C-1001'),
    trustExternalId: false,
  });
  const zBody = fixture('zendesk-comment-added.json');
  const ts = '2026-03-02T10:00:00Z';
  const zendesk: WebhookDelivery = { headers: { 'x-zendesk-webhook-signature': signZendesk('secret', ts, zBody), 'x-zendesk-webhook-signature-timestamp': ts }, body: zBody };
  const iBody = fixture('intercom-conversation-user-replied.json');
  const intercom: WebhookDelivery = { headers: { 'x-hub-signature': signIntercom('secret', iBody) }, body: iBody };
  const freshdesk: WebhookDelivery = { headers: { [FRESHDESK_TOKEN_HEADER]: 'token' }, body: fixture('freshdesk-ticket-message.json') };
  const zNow = new Date('2026-03-02T10:00:05Z');
  const iNow = new Date(1772445703_000);

  console.log(`webhook accept (verify + map), ${webhooks} deliveries each, microseconds:`);
  console.log('desk        body bytes      p50      p95      p99');
  const rows: [string, number, ReturnType<typeof timeAccept>][] = [
    ['zendesk', zBody.length, timeAccept(webhooks, () => acceptZendeskWebhook(zendesk, { signingSecret: 'secret', replayWindowSeconds: 300, customers }, zNow))],
    ['intercom', iBody.length, timeAccept(webhooks, () => acceptIntercomWebhook(intercom, { clientSecret: 'secret', replayWindowSeconds: 300, customers }, iNow))],
    ['freshdesk', freshdesk.body.length, timeAccept(webhooks, () => acceptFreshdeskWebhook(freshdesk, { token: 'token', customers }, zNow))],
  ];
  for (const [desk, bytes, t] of rows)
    console.log(`${desk.padEnd(10)} ${String(bytes).padStart(10)} ${t.p50.toFixed(1).padStart(8)} ${t.p95.toFixed(1).padStart(8)} ${t.p99.toFixed(1).padStart(8)}`);

  const standin = await startDeskStandin();
  try {
    const client = createZendeskClient({ baseUrl: standin.url, email: standin.agent.email, apiToken: standin.agent.apiToken, timeoutMs: 10_000 });
    console.log(`\nreplies posted to the Zendesk stand-in (exactly-once check + PUT), ${replies} per run:`);
    console.log('concurrency   replies/s   ms/reply p50   p95   duplicates');
    for (const concurrency of levels) {
      const tickets = Array.from({ length: concurrency }, (_, i) => standin.createTicket({ requesterId: 7000 + i, subject: 'bench', body: 'bench' }).ticketId);
      const latencies: number[] = [];
      let next = 0;
      const start = performance.now();
      await Promise.all(
        tickets.map(async (ticketId) => {
          for (let n = next++; n < replies; n = next++) {
            const t0 = performance.now();
            await client.post({ workflowId: `bench-${concurrency}-${ticketId}`, externalTicketId: String(ticketId), kind: 'reply', sequence: n, body: `Reply ${n}` });
            latencies.push(performance.now() - t0);
          }
        }),
      );
      const seconds = (performance.now() - start) / 1000;
      const posted = tickets.reduce((sum, id) => sum + standin.ticket(id)!.comments.length - 1, 0);
      latencies.sort((a, b) => a - b);
      console.log(
        `${String(concurrency).padStart(11)} ${(replies / seconds).toFixed(0).padStart(11)} ${percentile(latencies, 50).toFixed(2).padStart(14)} ${percentile(latencies, 95).toFixed(2).padStart(5)} ${String(posted - replies).padStart(12)}`,
      );
    }
  } finally {
    await standin.close();
  }
}

main().catch((error: Error) => {
  console.error(error);
  process.exitCode = 1;
});
