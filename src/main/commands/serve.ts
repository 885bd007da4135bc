import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { migrate } from '../../db/migrate';
import { openDatabase } from '../../db/pool';
import { TranscriptLog } from '../../db/transcript-log';
import { ApiKeyConfigError, createAuthenticator } from '../../server/auth';
import { jsonLog, lazyClient, SHUTDOWN_GRACE_MS, startServer } from '../../server/start';
import { bodyCodecOf } from '../../temporal/codec/body-codec';
import { currentTracing } from '../../observability/tracing';
import { codecFor } from '../../temporal/data-converter';
import { UsageError } from '../usage';

type Out = (line: string) => void;

/** Resolves with the first SIGINT or SIGTERM. */
export function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** What differs between the HTTP commands: their name, where they listen, and which routes they serve. */
export interface EndpointSpec {
  /** "casework serve", "casework console": how messages name the command. */
  name: string;
  port: number;
  host: string;
  routes: 'all' | 'console';
  /** What a caller gets while Temporal is down, for the start-up warning. */
  whileDown: string;
}

/**
 * `casework serve [--port N] [--host H] [--open]`: the ticket-event endpoint. Refuses to start
 * without CASEWORK_API_KEYS unless open local mode is asked for (then 127.0.0.1 only). Runs
 * until SIGINT or SIGTERM, then drains requests in flight and closes Postgres and Temporal.
 */
export function serveCommand(args: string[], config: Config, out: Out): Promise<number> {
  return endpointCommand(args, config, out, {
    name: 'casework serve',
    port: config.CASEWORK_HTTP_PORT,
    host: config.CASEWORK_HTTP_HOST,
    routes: 'all',
    whileDown: 'events get 503 until it does',
  });
}

/** Runs an HTTP command (`serve`, `console`) with `--port`, `--host` and `--open` over `spec`'s defaults. */
export async function endpointCommand(args: string[], config: Config, out: Out, spec: EndpointSpec): Promise<number> {
  const { values } = parseArgs({ args, options: { port: { type: 'string' }, host: { type: 'string' }, open: { type: 'boolean' } } });
  let port = spec.port;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port) || Number(values.port) > 65_535) throw new UsageError(`--port must be a port number (0-65535), got "${values.port}"`);
    port = Number(values.port);
  }
  const open = values.open === true || config.CASEWORK_HTTP_OPEN === 'true';
  const log = jsonLog(config, out);
  let auth;
  try {
    auth = createAuthenticator({ apiKeys: config.CASEWORK_API_KEYS, open });
  } catch (error) {
    if (error instanceof ApiKeyConfigError) {
      out(`error: ${spec.name} will not start: ${error.message}`);
      return 2;
    }
    throw error;
  }
  let host = values.host ?? spec.host;
  if (auth.mode === 'open') {
    host = '127.0.0.1';
    log({
      level: 'warn',
      msg: 'OPEN LOCAL MODE: no API keys, every caller is trusted (any customer, any approver); listening on 127.0.0.1 only. Never run this way in production; set CASEWORK_API_KEYS.',
    });
  }

  const db = await openDatabase(config);
  const temporal = lazyClient(config, { pool: db.app });
  let startupCheck: Promise<unknown> = Promise.resolve();
  try {
    await migrate(db.admin);
    if (db.embedded) {
      log({ level: 'warn', msg: "embedded Postgres: the memory routes see this process's own database; set DATABASE_URL to share the workers' one" });
    }
    // The console reads runs kept by reference from the transcript log, decoded with the same keys as `casework transcript`.
    const transcriptLog = new TranscriptLog(db.app, bodyCodecOf(codecFor(config)));
    const server = await startServer({ client: temporal.client, pool: db.app, config, log, auth, routes: spec.routes, transcriptLog }, port, host);
    log({
      level: 'info',
      msg: `${spec.name} listening`,
      url: server.url,
      auth: auth.mode === 'open' ? 'open local mode' : `${auth.keyCount} API key(s)`,
      temporal: config.TEMPORAL_ADDRESS,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
    });
    // Tell the operator now, not on the first request, when Temporal is not there; the endpoint still answers (503).
    startupCheck = temporal.client
      .withDeadline(Date.now() + 5_000, () => temporal.client.workflowService.getSystemInfo({}))
      .catch((error: Error) => log({ level: 'warn', msg: `Temporal at ${config.TEMPORAL_ADDRESS} is not answering yet (${error.message}); ${spec.whileDown}` }));
    const signal = await waitForSignal();
    // Said once the listener is closed: from then on a new connection goes to another replica.
    const closed = server.close();
    log({ level: 'info', msg: `${signal}: stopped accepting connections; draining requests in flight (up to ${SHUTDOWN_GRACE_MS / 1000} s)` });
    await closed;
    log({ level: 'info', msg: `${spec.name} stopped` });
    return 0;
  } finally {
    // A call still retrying when its connection closes throws from a timer and kills the
    // process: the start-up check settles first (within its deadline; the SDK's retry backoff
    // does not heed an abort signal), so a stop soon after a start with Temporal down exits 0.
    await startupCheck;
    await temporal.close().catch(() => undefined);
    await db.close();
    // Spans still batched go out before the process ends.
    await currentTracing()
      ?.shutdown()
      .catch(() => undefined);
  }
}
