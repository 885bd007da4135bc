import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExternalStorage, Payload, PayloadCodec } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow';
import { z } from 'zod';
import type { Pool } from 'pg';
import type { Config } from '../config';
import { kindOf, RefusedError } from '../errors';
import { productionMode } from '../temporal/codec/keys';
import { HttpError, readBodyText, sendJson } from './http';
import { HEALTH_DEADLINE_MS, keysHealth, postgresHealth } from './routes/health';

// Temporal's codec-server protocol: POST …/encode and …/decode, each taking and answering
// {"payloads":[{"metadata":{"k":"<base64>"},"data":"<base64>"}]} (Payloads as proto3 JSON).
// Only the last path segment is read, so the server can be mounted under any prefix. The web
// UI calls it from the browser, so it answers CORS preflights for the allowed origins; the
// CLI calls it with `--codec-endpoint` (and `--codec-auth "Bearer <token>"`). GET /healthz
// (alive) and GET /readyz (the keys load, and Postgres answers when stored payloads are read
// there) need no token: they say nothing about any payload.

/** Largest request body accepted: Temporal refuses payloads above 2 MB, plus base64 and envelope. */
export const MAX_CODEC_BODY_BYTES = 4 * 1024 * 1024;

/** Request headers the web UI and CLI send; a preflight asking for others is answered without them. */
const ALLOWED_HEADERS = ['content-type', 'x-namespace', 'authorization'];

const PayloadJson = z.object({
  metadata: z.record(z.string(), z.string()).nullish(),
  data: z.string().nullish(),
  externalPayloads: z.array(z.object({ sizeBytes: z.union([z.string(), z.number()]).nullish() })).nullish(),
});
const PayloadsJson = z.object({ payloads: z.array(PayloadJson).default([]) });

/** What the codec server is built from. */
export interface CodecServerOptions {
  /** The codecs, in the order the data converter lists them (decode runs them in reverse). */
  codecs: PayloadCodec[];
  /** Resolves stored references before decoding, so stored contents show decoded too. */
  externalStorage?: ExternalStorage;
  /** The bearer token callers must send; undefined accepts every caller (loopback development only). */
  token?: string;
  /** Browser origins allowed to call (the web UI's), exactly as the browser sends them. */
  allowedOrigins: string[];
  /** The one namespace decoded for; a request whose X-Namespace names another is refused. */
  namespace?: string;
  /** Called once per answered encode/decode, for an audit trail: never with payload contents. */
  onRequest?: (event: { operation: 'encode' | 'decode'; namespace?: string; payloads: number; origin?: string }) => void;
  /** What GET /readyz reports: each check "ok" or what is missing; unset, ready whenever alive. */
  readiness?: () => Promise<Record<string, string>>;
  /** True once the server is draining: /readyz then answers 503. */
  isShuttingDown?: () => boolean;
}

function fromJson(p: z.infer<typeof PayloadJson>): Payload {
  const metadata = Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]));
  return { metadata, data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')) };
}

function toJson(p: Payload): { metadata: Record<string, string>; data: string } {
  const metadata = Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]));
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

function tokenMatches(header: string | undefined, digest: Buffer): boolean {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (!match) return false;
  return timingSafeEqual(createHash('sha256').update(match[1]!).digest(), digest);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const text = await readBodyText(req, MAX_CODEC_BODY_BYTES);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** A node:http request handler speaking the codec-server protocol, with CORS and a bearer token. */
export function createCodecHandler(options: CodecServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const digest = options.token === undefined ? undefined : createHash('sha256').update(options.token).digest();
  const origins = new Set(options.allowedOrigins);
  const storage = options.externalStorage ? new ExternalStorageRunner(options.externalStorage) : undefined;

  // While draining (even for a request that began before), each answer closes its connection,
  // so a keep-alive caller reconnects to another replica and the drain ends with the answer.
  const closing = (): Record<string, string> => (options.isShuttingDown?.() ? { connection: 'close' } : {});
  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => sendJson(res, status, body, { ...headers, ...closing() });

  async function probe(path: string, res: ServerResponse): Promise<void> {
    if (path === '/healthz') return reply(res, 200, { status: 'alive', draining: options.isShuttingDown?.() ?? false });
    if (options.isShuttingDown?.()) return reply(res, 503, { error: 'shutting down: draining requests in flight', draining: true, retryable: true });
    const checks = (await options.readiness?.()) ?? {};
    const missing = Object.entries(checks).filter(([, v]) => v !== 'ok');
    if (!missing.length) return reply(res, 200, { status: 'ready', ...checks });
    const error = `not ready: ${missing.map(([name, why]) => `${name}: ${why}`).join('; ')}`;
    reply(res, 503, { error, ...Object.fromEntries(Object.entries(checks).map(([k, v]) => [k, v === 'ok' ? 'ok' : 'down'])), retryable: true });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, cors: Record<string, string>): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
    if ((path === '/healthz' || path === '/readyz') && req.method === 'GET') return probe(path, res);
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin)) throw new HttpError(403, `origin ${origin} may not call this codec server`);
    const operation = path.split('/').pop();
    if (operation !== 'encode' && operation !== 'decode') throw new HttpError(404, 'the codec server answers POST …/encode and …/decode');
    if (req.method === 'OPTIONS') {
      // Preflight: browsers send it without credentials, so it is answered before the token check.
      res.writeHead(204, {
        ...cors,
        ...closing(),
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': ALLOWED_HEADERS.join(', '),
        'access-control-max-age': '600',
      });
      res.end();
      return;
    }
    if (req.method !== 'POST') throw new HttpError(405, `${operation} takes POST`, { allow: 'POST, OPTIONS' });
    if (digest && !tokenMatches(req.headers.authorization, digest)) {
      throw new HttpError(401, 'a valid "Authorization: Bearer <token>" header is required', { 'www-authenticate': 'Bearer' });
    }
    const namespace = typeof req.headers['x-namespace'] === 'string' ? req.headers['x-namespace'] : undefined;
    if (options.namespace && namespace && namespace !== options.namespace) {
      throw new HttpError(403, `this codec server decodes namespace ${options.namespace}, not ${namespace}`);
    }
    const parsed = PayloadsJson.safeParse(await readBody(req));
    if (!parsed.success) throw new HttpError(400, 'body must be {"payloads":[{"metadata":{...base64},"data":"<base64>"}]}');
    let payloads = parsed.data.payloads.map(fromJson);
    if (operation === 'encode') {
      for (const codec of options.codecs) payloads = await codec.encode(payloads);
    } else {
      if (storage) payloads = await storage.retrieve(payloads);
      for (const codec of [...options.codecs].reverse()) payloads = await codec.decode(payloads);
    }
    options.onRequest?.({ operation, namespace, payloads: payloads.length, origin });
    reply(res, 200, { payloads: payloads.map(toJson) }, cors);
  }

  return (req, res) => {
    const origin = req.headers.origin;
    const cors: Record<string, string> =
      origin !== undefined && origins.has(origin) ? { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' } : { vary: 'Origin' };
    handle(req, res, cors).catch((error: unknown) => {
      if (error instanceof HttpError) return reply(res, error.status, { error: error.message }, { ...cors, ...error.headers });
      // A payload this server cannot decode (unknown key id, tampered data) is the caller's to see; anything else is ours.
      const kind = kindOf(error);
      const status = kind === 'not_found' || kind === 'bad_input' ? 422 : 500;
      reply(res, status, { error: status === 422 ? (error as Error).message : 'codec server failed; see its log' }, cors);
    });
  };
}

/** The origins the codec server admits: CASEWORK_CODEC_CORS_ORIGINS, else the origin of TEMPORAL_UI_URL. */
export function allowedOriginsFor(config: Pick<Config, 'CASEWORK_CODEC_CORS_ORIGINS' | 'TEMPORAL_UI_URL'>): string[] {
  if (config.CASEWORK_CODEC_CORS_ORIGINS)
    return config.CASEWORK_CODEC_CORS_ORIGINS.split(',')
      .map((o) => o.trim())
      .filter(Boolean);
  return [new URL(config.TEMPORAL_UI_URL).origin];
}

/** A running codec server; `url` is what `--codec-endpoint` and the web UI's codec setting take. */
export interface RunningCodecServer {
  server: Server;
  url: string;
  /** Stops accepting, lets requests in flight finish (up to `graceMs`), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

/** How long the codec server's shutdown waits for requests in flight. */
export const CODEC_SHUTDOWN_GRACE_MS = 10_000;

/**
 * Starts the codec server on CASEWORK_CODEC_SERVER_HOST:PORT (port 0 picks one). Without a
 * token it refuses to listen anywhere but 127.0.0.1, and refuses outright in production mode.
 */
export async function startCodecServer(
  config: Config,
  options: Omit<CodecServerOptions, 'token' | 'allowedOrigins' | 'namespace' | 'readiness' | 'isShuttingDown'> & { port?: number; pool?: Pool },
): Promise<RunningCodecServer> {
  const token = config.CASEWORK_CODEC_SERVER_TOKEN;
  const host = config.CASEWORK_CODEC_SERVER_HOST;
  if (!token && (productionMode(config) || host !== '127.0.0.1')) {
    throw new RefusedError('the codec server decrypts payloads: set CASEWORK_CODEC_SERVER_TOKEN (it may run without one only on 127.0.0.1, outside production mode)');
  }
  let draining = false;
  const { pool } = options;
  const readiness = async () => ({
    keys: keysHealth(config),
    ...(pool ? { postgres: await postgresHealth(pool, HEALTH_DEADLINE_MS) } : {}),
  });
  const handler = createCodecHandler({
    ...options,
    token,
    allowedOrigins: allowedOriginsFor(config),
    namespace: config.TEMPORAL_NAMESPACE,
    readiness,
    isShuttingDown: () => draining,
  });
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? config.CASEWORK_CODEC_SERVER_PORT, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${host}:${port}`,
    close(graceMs = CODEC_SHUTDOWN_GRACE_MS) {
      closing ??= new Promise<void>((resolve) => {
        draining = true;
        const cut = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
