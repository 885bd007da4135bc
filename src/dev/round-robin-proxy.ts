import { Agent, createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A small HTTP balancer for fleet tests and soaks, doing what compose's nginx does
// (deploy/nginx/casework.conf): each request goes to the next replica in turn, whatever
// connection it came on, with the caller's Host and scheme passed on; a replica that refuses
// the connection (stopped, or draining after SIGTERM) is skipped and the next one tried, as
// nginx's `proxy_next_upstream error` does. A request a replica accepted is never sent again:
// only a refused connection, which the replica never read, is retried. Replicas can be swapped
// while it runs, as a rolling restart does. Not for production: use the compose balancer.

/** One replica: where it listens. */
export interface Upstream {
  host: string;
  port: number;
}

/** What a round-robin proxy has done so far. */
export interface RoundRobinCounts {
  /** Requests answered by each replica, by "host:port". */
  byUpstream: Record<string, number>;
  /** Connections a replica refused, after which the next one was tried. */
  refused: number;
  /** Requests no replica took (answered 502). */
  unanswered: number;
}

/** A running round-robin proxy. */
export interface RoundRobinProxy {
  port: number;
  url: string;
  readonly counts: RoundRobinCounts;
  /** Replaces the replicas requests go to (a rolling restart, a scale-out). */
  setUpstreams(upstreams: Upstream[]): void;
  close(): Promise<void>;
}

/** Largest request body the proxy holds to resend to another replica (casework's own limits are lower). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Headers that describe one hop's connection, not the request (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

const keyOf = (u: Upstream) => `${u.host}:${u.port}`;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function forwardedHeaders(req: IncomingMessage, body: Buffer): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
  const forwardedFor = req.headers['x-forwarded-for'];
  headers['x-forwarded-for'] = [forwardedFor, req.socket.remoteAddress].filter(Boolean).join(', ');
  headers['x-forwarded-proto'] = req.headers['x-forwarded-proto'] ?? 'http';
  headers['content-length'] = String(body.length);
  return headers;
}

/** Starts a round-robin proxy on `port` (0 picks a free one) over `upstreams`. */
export async function startRoundRobinProxy(options: { upstreams: Upstream[]; port?: number; host?: string }): Promise<RoundRobinProxy> {
  let upstreams = [...options.upstreams];
  let next = 0;
  const counts: RoundRobinCounts = { byUpstream: {}, refused: 0, unanswered: 0 };
  const agent = new Agent({ keepAlive: true });

  const tryUpstream = (target: Upstream, req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<'answered' | 'refused'> =>
    new Promise((resolve) => {
      const out = request({ host: target.host, port: target.port, method: req.method, path: req.url, headers: forwardedHeaders(req, body), agent }, (answer) => {
        counts.byUpstream[keyOf(target)] = (counts.byUpstream[keyOf(target)] ?? 0) + 1;
        const headers: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
        answer.on('end', () => resolve('answered'));
        answer.on('error', () => {
          res.destroy();
          resolve('answered');
        });
      });
      out.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ECONNREFUSED' && !res.headersSent) {
          counts.refused += 1;
          resolve('refused');
          return;
        }
        // The replica took the request and failed mid-way: it is not sent again (it may have acted).
        if (!res.headersSent)
          res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `replica ${keyOf(target)} failed: ${error.code ?? error.message}` }));
        else res.destroy();
        resolve('answered');
      });
      out.end(body);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const tried = upstreams.length;
    for (let i = 0; i < tried; i++) {
      const target = upstreams[next++ % upstreams.length]!;
      if ((await tryUpstream(target, req, body, res)) === 'answered') return;
    }
    counts.unanswered += 1;
    res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `no replica took the request (${tried} tried)` }));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: error.message }));
      else res.destroy();
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://${host}:${port}`,
    counts,
    setUpstreams(list) {
      upstreams = [...list];
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
