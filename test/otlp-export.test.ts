import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { inSpan, startTracing, type Tracing } from '../src/observability/tracing';

// With OTEL_EXPORTER_OTLP_ENDPOINT set, spans leave over OTLP/HTTP to <endpoint>/v1/traces, as
// a collector expects them; an in-process receiver stands in for the collector and reads what
// arrives.

interface Received {
  path: string;
  contentType: string | undefined;
  body: { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { name: string }[] }[] }[] };
}

const received: Received[] = [];
const receiver = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    received.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: JSON.parse(body) as Received['body'] });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
let tracing: Tracing | undefined;

describe('OTLP export', () => {
  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await tracing?.shutdown();
    await new Promise((resolve) => receiver.close(resolve));
  });

  test('off without an endpoint: nothing is started', () => {
    assert.equal(startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: undefined }, { serviceName: 'casework-test' }), undefined);
  });

  test('spans reach the collector at <endpoint>/v1/traces with the service name', async () => {
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
    tracing = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, { serviceName: 'casework-otlp-test' });
    assert.ok(tracing);
    await inSpan('casework.test_span', { 'casework.test': true }, () => Promise.resolve());
    await tracing.flush();
    assert.equal(received.length, 1);
    const [batch] = received;
    assert.equal(batch!.path, '/v1/traces');
    assert.match(batch!.contentType ?? '', /^application\/json/);
    const [resourceSpans] = batch!.body.resourceSpans;
    const service = resourceSpans!.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
    assert.equal(service, process.env.OTEL_SERVICE_NAME ?? 'casework-otlp-test');
    assert.deepEqual(
      resourceSpans!.scopeSpans.flatMap((s) => s.spans.map((span) => span.name)),
      ['casework.test_span'],
    );
  });
});
