import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExternalStorage, Payload, PayloadCodec } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow';
import { z } from 'zod';
import type { Pool } from 'pg';
import type { Config } from '../config';
import { BadInputError, kindOf, RefusedError } from '../errors';
import { erasedText } from '../context/display-expansion';
import { CustomerErasedError, type CustomerKeys } from '../temporal/codec/customer-keys';
import { KEY_ID_METADATA, workflowIdOf } from '../temporal/codec/encryption-codec';
import { CUSTOMER_KEY_PREFIX } from '../temporal/codec/key-wrap';
import { productionMode } from '../temporal/codec/keys';
import type { DisplayExpander } from './codec-expansion';
import { codecCookie, ownOrigin, sessionCookieOf, sessionProblem, sessionValue, SIGN_IN_HEADERS, signInPage } from './codec-session';
import { drainingClose, HttpError, readBodyText, sendJson } from './http';
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
  /** Decodes payloads under a customer's data key (`cust:<id>:<n>`); one whose key is destroyed shows "erased on <date>". */
  customerKeys?: CustomerKeys;
  /** Expands references into the transcript log for display (codec-expansion.ts); /decode only, never /encode. */
  expander?: DisplayExpander;
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
  /** Called once per request the server did not answer with payloads, saying why: never with payload contents or the credential sent. */
  onRefused?: (event: CodecRefusal) => void;
}

/** Why a codec request got no payloads back. */
export type RefusalReason =
  | 'origin'
  | 'credential_missing'
  | 'credential_wrong'
  | 'namespace'
  | 'path'
  | 'method'
  | 'body'
  /** The payloads could not be decoded (a key id this server lacks, tampered data). */
  | 'undecodable'
  | 'internal';

/** One refused codec request, as logged: what was asked, from where, the answer and why. */
export interface CodecRefusal {
  reason: RefusalReason;
  status: number;
  method: string;
  path: string;
  origin?: string;
  namespace?: string;
  /** The refusal in words (the message the caller got); never a payload. */
  detail: string;
}

/** An HTTP refusal that knows which RefusalReason it is, for the log line. */
class Refusal extends HttpError {
  constructor(
    readonly reason: RefusalReason,
    status: number,
    message: string,
    headers?: Record<string, string>,
  ) {
    super(status, message, headers);
  }
}

function fromJson(p: z.infer<typeof PayloadJson>): Payload {
  const metadata = Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, 'base64'))]));
  return { metadata, data: new Uint8Array(Buffer.from(p.data ?? '', 'base64')) };
}

const utf8 = new TextEncoder();

/** A JSON payload of `value`, as the default payload converter writes one. */
function jsonPayload(value: unknown): Payload {
  return { metadata: { encoding: utf8.encode('json/plain') }, data: utf8.encode(JSON.stringify(value)) };
}

/** The customer key id a payload is encrypted under, or undefined (a deployment key, or not encrypted). */
function customerKeyIdOf(payload: Payload): string | undefined {
  const raw = payload.metadata?.[KEY_ID_METADATA];
  const keyId = raw ? Buffer.from(raw).toString() : undefined;
  return keyId?.startsWith(CUSTOMER_KEY_PREFIX) ? keyId : undefined;
}

/**
 * Decodes payloads through the codecs (in reverse order), except those under a customer's data
 * key, which their key decrypts; a destroyed key's payload becomes "erased on <date>", so a
 * page of an erased customer's case reads as erased instead of failing.
 */
async function decodeAll(payloads: Payload[], codecs: readonly PayloadCodec[], customerKeys: CustomerKeys | undefined): Promise<Payload[]> {
  const decodeWithCodecs = async (batch: Payload[]) => {
    for (const codec of [...codecs].reverse()) batch = await codec.decode(batch);
    return batch;
  };
  if (!payloads.some((p) => customerKeyIdOf(p) !== undefined)) return decodeWithCodecs(payloads);
  return Promise.all(
    payloads.map(async (payload) => {
      const keyId = customerKeyIdOf(payload);
      if (keyId === undefined) return (await decodeWithCodecs([payload]))[0]!;
      try {
        // Without the keys here, the codec is the history's own (CASEWORK_CUSTOMER_PAYLOADS=inline), which knows them.
        return customerKeys ? (await customerKeys.decoderFor(keyId)).decrypt(payload) : (await decodeWithCodecs([payload]))[0]!;
      } catch (error) {
        if (error instanceof CustomerErasedError) return jsonPayload(erasedText(error.erasedAt));
        throw error;
      }
    }),
  );
}

/**
 * Resolves stored references. A reference into an erased customer's store (customer_payloads
 * under a destroyed key) becomes "erased on <date>", as an inline payload under that key does,
 * while the rest of the page still resolves: on such a failure each payload is resolved alone.
 */
async function retrieveAll(storage: ExternalStorageRunner, payloads: Payload[]): Promise<Payload[]> {
  try {
    return await storage.retrieve(payloads);
  } catch (error) {
    if (!(error instanceof CustomerErasedError)) throw error;
  }
  return Promise.all(
    payloads.map((payload) =>
      storage.retrieve([payload]).then(
        ([resolved]) => resolved!,
        (error: unknown) => {
          if (error instanceof CustomerErasedError) return jsonPayload(erasedText(error.erasedAt));
          throw error;
        },
      ),
    ),
  );
}

function toJson(p: Payload): { metadata: Record<string, string>; data: string } {
  const metadata = Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? new Uint8Array()).toString('base64')]));
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

/**
 * True for the Temporal CLI's codec client (the Go SDK's remote codec: Go's default user agent,
 * no browser Origin). It retries every answer but 200 until its deadline, so it never shows a
 * refusal's message; refuseCli answers it in a way it prints.
 */
function isTemporalCli(req: IncomingMessage): boolean {
  return req.headers.origin === undefined && /^Go-http-client\//.test(req.headers['user-agent'] ?? '');
}

/** Why a request's credential is refused, or undefined when it matches. */
function credentialProblem(header: string | undefined, digest: Buffer): 'credential_missing' | 'credential_wrong' | undefined {
  if (!header?.trim()) return 'credential_missing';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) return 'credential_wrong';
  return timingSafeEqual(createHash('sha256').update(match[1]!).digest(), digest) ? undefined : 'credential_wrong';
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const text = await readBodyText(req, MAX_CODEC_BODY_BYTES);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Refusal('body', 400, `request body is not valid JSON: ${(error as Error).message}`);
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

  /** The browser sign-in (codec-session.ts): its own page, so it answers its own origin, not the UI's. */
  async function signIn(req: IncomingMessage, res: ServerResponse, segment: 'sign-in' | 'sign-out'): Promise<void> {
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== ownOrigin(req)) throw new Refusal('origin', 403, `origin ${origin} may not sign in here: open this server's own sign-in page`);
    const page = (status: number, html: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { ...SIGN_IN_HEADERS, ...headers });
      res.end(html);
    };
    const namespace = options.namespace;
    if (options.token === undefined)
      return page(200, signInPage({ namespace, note: 'This codec server requires no token (loopback development): the web UI may call it as it is.' }));
    if (req.method === 'GET') {
      const cookie = sessionCookieOf(req);
      return page(200, signInPage({ namespace, signedIn: cookie !== undefined && sessionProblem(cookie, options.token) === undefined }));
    }
    if (req.method !== 'POST') throw new Refusal('method', 405, `${segment} takes GET or POST`, { allow: 'GET, POST' });
    if (segment === 'sign-out') return page(200, signInPage({ namespace, note: 'Signed out.' }), { 'set-cookie': codecCookie(req, null) });
    const sent = new URLSearchParams(await readBodyText(req, 4096)).get('token')?.trim() ?? '';
    const problem = !sent ? 'credential_missing' : credentialProblem(`Bearer ${sent}`, digest!);
    if (problem) {
      options.onRefused?.({
        reason: problem,
        status: 401,
        method: 'POST',
        path: new URL(req.url ?? '/', 'http://codec').pathname,
        ...(origin !== undefined ? { origin } : {}),
        detail: problem === 'credential_missing' ? 'sign-in without a token' : "sign-in with a token that is not this server's",
      });
      return page(401, signInPage({ namespace, note: "That is not this codec server's token." }));
    }
    page(200, signInPage({ namespace, signedIn: true, note: 'Signed in.' }), { 'set-cookie': codecCookie(req, sessionValue(options.token)) });
  }

  /** Why the request is not authorised: its bearer token, else its sign-in cookie; undefined when one of them is good. */
  function authProblem(req: IncomingMessage): { reason: 'credential_missing' | 'credential_wrong'; said: string } | undefined {
    if (!digest || options.token === undefined) return undefined;
    const header = credentialProblem(req.headers.authorization, digest);
    if (!header) return undefined;
    const cookie = sessionCookieOf(req);
    if (header === 'credential_missing' && cookie !== undefined) {
      const problem = sessionProblem(cookie, options.token);
      return problem ? { reason: 'credential_wrong', said: `the sign-in cookie is ${problem}: sign in again at this server's /sign-in page` } : undefined;
    }
    return header === 'credential_missing'
      ? {
          reason: header,
          said: 'no Authorization header or sign-in cookie was sent (from the web UI: sign in at this server\'s /sign-in page and turn on "Include cross-origin credentials")',
        }
      : { reason: header, said: "the bearer token sent is not this server's" };
  }

  /**
   * A refused /decode of the Temporal CLI is answered 200 with the refusal in words in place of
   * every payload: the CLI's codec client retries any other answer until its 10 s deadline and
   * then prints only "context deadline exceeded". Everything else is refused with its status.
   */
  async function refuseCli(
    req: IncomingMessage,
    res: ServerResponse,
    error: Refusal,
    operation: string,
    logRefusal: (reason: RefusalReason, status: number, detail: string) => void,
  ): Promise<void> {
    if (operation !== 'decode' || !isTemporalCli(req)) throw error;
    const parsed = PayloadsJson.safeParse(await readBody(req));
    if (!parsed.success) throw error;
    logRefusal(
      error.reason,
      error.status,
      `${error.message} (answered 200 with this refusal in place of the ${parsed.data.payloads.length} payloads: the Temporal CLI retries any other answer)`,
    );
    const said = jsonPayload(`casework codec server refused this request (${error.status}): ${error.message}`);
    reply(res, 200, { payloads: parsed.data.payloads.map(() => toJson(said)) });
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    cors: Record<string, string>,
    logRefusal: (reason: RefusalReason, status: number, detail: string) => void,
  ): Promise<void> {
    const refuse = (error: Refusal) => refuseCli(req, res, error, segment ?? '', logRefusal);
    const path = new URL(req.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
    if ((path === '/healthz' || path === '/readyz') && req.method === 'GET') return probe(path, res);
    const origin = req.headers.origin;
    const segment = new URL(req.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '').split('/').pop();
    if (segment === 'sign-in' || segment === 'sign-out') return signIn(req, res, segment);
    if (origin !== undefined && !origins.has(origin)) throw new Refusal('origin', 403, `origin ${origin} may not call this codec server`);
    const operation = segment;
    if (operation !== 'encode' && operation !== 'decode') throw new Refusal('path', 404, 'the codec server answers POST …/encode and …/decode');
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
    if (req.method !== 'POST') throw new Refusal('method', 405, `${operation} takes POST`, { allow: 'POST, OPTIONS' });
    const problem = authProblem(req);
    if (problem) {
      const said = isTemporalCli(req)
        ? `${problem.reason === 'credential_missing' ? 'no Authorization header was sent' : "the bearer token sent is not this server's"}: give the CLI --codec-auth "Bearer $CASEWORK_CODEC_SERVER_TOKEN"`
        : problem.said;
      return refuse(new Refusal(problem.reason, 401, `a valid "Authorization: Bearer <token>" header or sign-in cookie is required: ${said}`, { 'www-authenticate': 'Bearer' }));
    }
    const namespace = typeof req.headers['x-namespace'] === 'string' ? req.headers['x-namespace'] : undefined;
    if (options.namespace && namespace && namespace !== options.namespace) {
      return refuse(new Refusal('namespace', 403, `this codec server decodes namespace ${options.namespace}, not ${namespace}`));
    }
    const parsed = PayloadsJson.safeParse(await readBody(req));
    if (!parsed.success) throw new Refusal('body', 400, 'body must be {"payloads":[{"metadata":{...base64},"data":"<base64>"}]}');
    let payloads = parsed.data.payloads.map(fromJson);
    if (operation === 'encode') {
      for (const codec of options.codecs) payloads = await codec.encode(payloads);
    } else {
      if (storage) payloads = await retrieveAll(storage, payloads);
      // The workflow each payload belongs to is its own label, bound into its encryption: never taken from the caller.
      const workflowIds = payloads.map(workflowIdOf);
      payloads = await decodeAll(payloads, options.codecs, options.customerKeys);
      if (options.expander) payloads = await options.expander.expand(payloads, workflowIds);
    }
    options.onRequest?.({ operation, namespace, payloads: payloads.length, origin });
    reply(res, 200, { payloads: payloads.map(toJson) }, cors);
  }

  return (req, res) => {
    const origin = req.headers.origin;
    const cors: Record<string, string> =
      origin !== undefined && origins.has(origin) ? { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' } : { vary: 'Origin' };
    const refused = (reason: RefusalReason, status: number, detail: string) => {
      const namespace = typeof req.headers['x-namespace'] === 'string' ? req.headers['x-namespace'] : undefined;
      const path = new URL(req.url ?? '/', 'http://codec').pathname;
      options.onRefused?.({ reason, status, method: req.method ?? 'GET', path, ...(origin !== undefined ? { origin } : {}), ...(namespace ? { namespace } : {}), detail });
    };
    handle(req, res, cors, refused).catch((error: unknown) => {
      if (error instanceof HttpError) {
        refused(error instanceof Refusal ? error.reason : 'body', error.status, error.message);
        return reply(res, error.status, { error: error.message }, { ...cors, ...error.headers });
      }
      // A payload this server cannot decode (unknown key id, tampered data) is the caller's to see; anything else is ours.
      const kind = kindOf(error);
      const status = kind === 'not_found' || kind === 'bad_input' ? 422 : 500;
      // casework's own errors name a key id or a failed check, never a payload's contents; anything else is logged by name only.
      refused(status === 422 ? 'undecodable' : 'internal', status, kind ? (error as Error).message : `${(error as Error).name ?? 'Error'} while decoding`);
      reply(res, status, { error: status === 422 ? (error as Error).message : 'codec server failed; see its log' }, cors);
    });
  };
}

/** Names of this machine's loopback interface: a browser on it may show the same UI under any of them. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1'];

/**
 * An origin and its loopback twins: the UI at http://localhost:8233 is the same page as at
 * http://127.0.0.1:8233 (the dev server prints the one, compose publishes on the other), so
 * either is admitted when the other is configured. Other origins stand alone.
 */
function withLoopbackTwins(origin: string): string[] {
  const url = new URL(origin);
  if (!LOOPBACK_NAMES.includes(url.hostname)) return [url.origin];
  return LOOPBACK_NAMES.map((name) => {
    const twin = new URL(url.origin);
    twin.hostname = name;
    return twin.origin;
  });
}

/**
 * The origins the codec server admits: CASEWORK_CODEC_CORS_ORIGINS, else the origin of
 * TEMPORAL_UI_URL, each loopback origin with its twin (localhost and 127.0.0.1).
 */
export function allowedOriginsFor(config: Pick<Config, 'CASEWORK_CODEC_CORS_ORIGINS' | 'TEMPORAL_UI_URL'>): string[] {
  const configured = config.CASEWORK_CODEC_CORS_ORIGINS
    ? config.CASEWORK_CODEC_CORS_ORIGINS.split(',')
        .map((o) => o.trim())
        .filter(Boolean)
    : [config.TEMPORAL_UI_URL];
  const origins: string[] = [];
  for (const entry of configured) {
    let twins: string[];
    try {
      twins = withLoopbackTwins(entry);
    } catch {
      throw new BadInputError(`CASEWORK_CODEC_CORS_ORIGINS: "${entry}" is not an origin (scheme://host[:port], e.g. http://127.0.0.1:8233)`);
    }
    for (const origin of twins) if (!origins.includes(origin)) origins.push(origin);
  }
  return origins;
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
  const closeGracefully = drainingClose(server, () => {
    draining = true;
  });
  return {
    server,
    url: `http://${host}:${port}`,
    close(graceMs = CODEC_SHUTDOWN_GRACE_MS) {
      return closeGracefully(graceMs);
    },
  };
}
