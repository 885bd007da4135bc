import { Client } from '@temporalio/client';
import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createActivities } from './activities';
import { describeCommerce, selectCommerce } from './commerce/select';
import type { Commerce } from './commerce/shop';
import { deskTicketSource } from './commerce/desk-tickets';
import { loadConfig, type Config } from './config';
import { kindOf } from './errors';
import { migrate } from './db/migrate';
import { openDatabase } from './db/pool';
import { selectModel } from './model/select';
import type { Embedder } from './memory/embedder';
import { selectEmbedder } from './memory/select-embedder';
import type { Model } from './model/port';
import { activityInterceptors } from './observability/activity-interceptor';
import { startMetricsEndpoint, type MetricsEndpoint } from './observability/endpoint';
import { instrumentModel } from './observability/instrument-model';
import { installTelemetry } from './observability/logging';
import { processMetrics, type CaseworkMetrics } from './observability/metrics';
import { currentTracing, startTracing } from './observability/tracing';
import { tracingActivityInterceptors, tracingSinks } from './observability/worker-tracing';
import { connectClient } from './temporal/client';
import { deskSettings, type DeskSettings } from './desk/settings';
import { pricesFromConfig } from './settings';
import { CONNECT_ATTEMPTS, connectionOptions, withConnectTimeout } from './temporal/connection';
import { loadKeyring } from './temporal/codec/keys';
import { dataConverterFor, FAILURE_CONVERTER_PATH, historyCodecFor, payloadStoreFor } from './temporal/data-converter';
import { bodyCodecOf } from './temporal/codec/body-codec';
import { TranscriptLog } from './db/transcript-log';
import { deploymentOptions } from './temporal/deployment';
import { HEALTH_DEADLINE_MS, postgresHealth } from './server/routes/health';
import { connectMcpServers, type McpTools } from './commerce/mcp/client';
import { mcpServerSettings } from './commerce/mcp/settings';

/** Workflow interceptor modules (log attributes: customer, ticket, step; tracing of runs started traced); a prebuilt bundle must be built with them. */
export const WORKFLOW_INTERCEPTOR_MODULES: string[] = [require.resolve('./observability/workflow-interceptors'), require.resolve('./observability/workflow-tracing')];

/** Logs only the bundler's warnings and errors. */
const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

/**
 * Bundles the workflow code once, with its interceptors and the failure converter the data
 * converter names, into `path`: a worker given this bundle (CASEWORK_WORKFLOW_BUNDLE) starts in
 * seconds instead of bundling on every start. `extraInterceptorModules` adds workflow code (a rollout test's version 2).
 */
export async function writeWorkflowBundle(path: string, options: { extraInterceptorModules?: string[]; withoutTracing?: boolean } = {}): Promise<void> {
  // Without tracing: the bundle as it was before tracing existed (the overhead bench's baseline).
  const modules = options.withoutTracing ? WORKFLOW_INTERCEPTOR_MODULES.filter((m) => !m.includes('workflow-tracing')) : WORKFLOW_INTERCEPTOR_MODULES;
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./workflows'),
    workflowInterceptorModules: [...modules, ...(options.extraInterceptorModules ?? [])],
    // The workflow's own failures are converted inside the sandbox, by the bundle's converter:
    // without this one their messages would reach history unencrypted.
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: quietBundlerLogger,
  });
  writeFileSync(path, code);
}

/** What a worker is built from; everything is created once, by the caller, and shared. */
export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
  /** The application pool (casework_app, under row-level security). */
  pool: Pool;
  model: Model;
  /** A prebuilt workflow bundle (tests build one per suite); unset, the worker bundles src/workflows. */
  workflowBundlePath?: string;
  /** Where model, token and tool metrics are counted; the process-wide registry by default. */
  metrics?: CaseworkMetrics;
  /** Embeds memory for recall by meaning; unset, memory searches by words alone. */
  embedder?: Embedder;
  /** The desks replies and notes go to; unset, built from config (CASEWORK_DESKS). */
  desk?: Pick<DeskSettings, 'clients'>;
  /** How long a shutdown lets activities in flight finish before cancelling them; unset, the SDK's default (none). */
  shutdownGraceMs?: number;
  /** The shop's systems the tools read and pay through; unset, chosen by config (CASEWORK_SHOP, CASEWORK_PAYMENTS, CASEWORK_TRACKING). */
  commerce?: Commerce;
  /** The MCP servers connected at start (CASEWORK_MCP_SERVERS); unset, runs are offered no MCP tools. */
  mcp?: McpTools;
}

/** Connects the worker's native connection, failing within seconds when Temporal is not there. */
export function connectWorker(config: Config): Promise<NativeConnection> {
  // The Temporal runtime (logger, metrics exporter) must be installed before its first connection.
  installTelemetry(config);
  return withConnectTimeout(config.TEMPORAL_ADDRESS, () => NativeConnection.connect(connectionOptions(config)), {
    timeoutMs: config.CASEWORK_CONNECT_TIMEOUT_MS,
    attempts: CONNECT_ATTEMPTS,
  });
}

/** The commerce port with earlier tickets read from the desk a ticket came from, where that desk is configured (docs/commerce.md). */
function withDeskTickets(commerce: Commerce, clients: DeskSettings['clients'], config: Config): Commerce {
  return { ...commerce, tickets: deskTicketSource(clients, commerce.tickets, { maxWaitSeconds: config.CASEWORK_DESK_RATE_LIMIT_WAIT_SECONDS }) };
}

/** The casework worker: the Investigation workflow and every activity, on TEMPORAL_TASK_QUEUE. */
export function createWorker(deps: WorkerDeps): Promise<Worker> {
  const { config } = deps;
  const metrics = deps.metrics ?? processMetrics();
  metrics.setPrices(pricesFromConfig(config));
  metrics.setLimits({
    approvalReminderSeconds: config.CASEWORK_APPROVAL_REMINDER_HOURS * 3600,
    approvalAutoDenySeconds: config.CASEWORK_APPROVAL_TIMEOUT_HOURS * 3600,
    caseBudgetUsd: config.CASEWORK_CASE_BUDGET_USD,
  });
  const desk = deps.desk ?? deskSettings(config);
  // A prebuilt bundle carries its own workflow interceptors; passing them again only draws a warning.
  const workflows: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = deps.workflowBundlePath
    ? { workflowBundle: { codePath: deps.workflowBundlePath } }
    : { workflowsPath: require.resolve('./workflows') };
  // One codec for history and the transcript log: both encrypted with the same keys, rotating together.
  const codec = historyCodecFor(config, deps.pool);
  const versioning = deploymentOptions(config);
  // Started by runWorker (or a test) before the worker is created; undefined when tracing is off.
  const tracing = currentTracing();
  const dataConverter = dataConverterFor(config, deps.pool, { codec });
  return Worker.create({
    connection: deps.connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    ...workflows,
    // Encrypts every payload and stores the large ones in Postgres (or S3): what a customer wrote never sits in Temporal in clear.
    dataConverter,
    activities: createActivities({
      pool: deps.pool,
      model: instrumentModel(deps.model, metrics, { requestModel: deps.model.offline ? deps.model.label : config.CASEWORK_MODEL }),
      noteTtlMonths: config.CASEWORK_NOTE_TTL_MONTHS,
      embedder: deps.embedder,
      desk: { clients: desk.clients, observer: metrics.desk.observer, rateLimit: { maxWaitSeconds: config.CASEWORK_DESK_RATE_LIMIT_WAIT_SECONDS } },
      transcriptLog: new TranscriptLog(deps.pool, bodyCodecOf(codec)),
      commerce: withDeskTickets(deps.commerce ?? selectCommerce(config, deps.pool), desk.clients, config),
      mcp: deps.mcp,
      retention: retentionDeps(config, new Client({ connection: deps.connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter }), metrics),
    }),
    sinks: tracingSinks(tracing),
    interceptors: {
      activity: [...tracingActivityInterceptors(tracing), activityInterceptors(metrics)],
      ...(deps.workflowBundlePath ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }),
    },
    maxConcurrentActivityTaskExecutions: config.CASEWORK_MAX_CONCURRENT_ACTIVITIES,
    // Off, no activity is asked for eagerly (the SDK asks for one on its own task queue by default).
    ...(config.CASEWORK_EAGER_ACTIVITIES === 'false' ? { maxEagerActivityReservationsPerWorkflowTask: 0 } : {}),
    ...(versioning ? { workerDeploymentOptions: versioning } : {}),
    ...(config.CASEWORK_WORKFLOW_CACHE_SIZE === undefined ? {} : cacheOptions(config.CASEWORK_WORKFLOW_CACHE_SIZE)),
    ...(deps.shutdownGraceMs === undefined ? {} : { shutdownGraceTime: deps.shutdownGraceMs }),
  });
}

/** The SDK's own bounds on workflow tasks and local activities run at once; a large enough cache keeps them. */
const SDK_WORKFLOW_TASK_SLOTS = 40;
const SDK_LOCAL_ACTIVITY_SLOTS = 100;

/**
 * A cache of `size` investigations, and the workflow tasks and local activities run at once
 * bounded to a quarter of it (at least 2, the SDK's floor; at most the SDK's own bounds). A
 * model call runs inside its workflow task, and the cache evicts its least recently used case to
 * make room for another: with as many tasks at once as slots in the cache (the SDK's own bound),
 * the case evicted could be one whose calls were in flight, its task lost, timed out by the
 * server and its model calls made again. test/small-cache.test.ts opens 24 cases on a cache of 8.
 */
export function cacheOptions(size: number): Pick<WorkerOptions, 'maxCachedWorkflows' | 'maxConcurrentWorkflowTaskExecutions' | 'maxConcurrentLocalActivityExecutions'> {
  const quarter = Math.max(2, Math.floor(size / 4));
  return {
    maxCachedWorkflows: size,
    maxConcurrentWorkflowTaskExecutions: Math.min(SDK_WORKFLOW_TASK_SLOTS, quarter),
    maxConcurrentLocalActivityExecutions: Math.min(SDK_LOCAL_ACTIVITY_SLOTS, quarter),
  };
}

/** The retention activity's settings, its check that an investigation has closed, and its metrics. */
function retentionDeps(config: Config, client: Client, metrics: CaseworkMetrics) {
  return {
    settings: {
      transcriptDays: config.CASEWORK_RETENTION_TRANSCRIPT_DAYS,
      payloadDays: config.CASEWORK_RETENTION_PAYLOAD_DAYS,
      caseMemoryDays: config.CASEWORK_RETENTION_CASE_MEMORY_DAYS,
      batchSize: Math.max(1, config.CASEWORK_RETENTION_BATCH),
    },
    isRunning: async (workflowId: string) => {
      const described = await client.workflow
        .getHandle(workflowId)
        .describe()
        .catch((error: unknown) => {
          if ((error as Error).name === 'WorkflowNotFoundError') return undefined;
          throw error;
        });
      return described?.status.name === 'RUNNING';
    },
    onStore: (store: string, rows: number, seconds: number) => {
      metrics.retentionRows.inc({ store }, rows);
      metrics.retentionSeconds.observe({ store }, seconds);
    },
  };
}

/** A worker polling in this process with a client beside it; `stop()` drains and closes both. */
export interface InProcessWorker {
  worker: Worker;
  client: Client;
  stop(): Promise<void>;
}

/** Connects, creates and runs a worker in this process, plus a client: for the demo, benchmarks and tests. */
export async function startInProcessWorker(deps: Omit<WorkerDeps, 'connection'>): Promise<InProcessWorker> {
  const connection = await connectWorker(deps.config);
  const stops: (() => Promise<unknown>)[] = [() => connection.close()];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const worker = await createWorker({ ...deps, connection, embedder: deps.embedder ?? selectEmbedder(deps.config) });
    const running = worker.run();
    stops.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const { client, close } = await connectClient(deps.config, { pool: deps.pool });
    stops.push(close);
    return { worker, client, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Runs `start` until it succeeds, waiting out an unreachable dependency (an UnavailableError)
 * with backoff for up to `budgetMs`, as a restart or failover of Postgres or Temporal takes:
 * a worker started during an outage waits for it instead of exiting. Other errors fail at once.
 */
export async function untilAvailable<T>(what: string, start: () => Promise<T>, budgetMs: number, log: (line: string) => void): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let wait = 1_000; ; wait = Math.min(wait * 2, 15_000)) {
    try {
      return await start();
    } catch (error) {
      if (kindOf(error) !== 'unavailable' || Date.now() + wait > deadline) throw error;
      log(`casework worker: ${what} is not reachable yet (${(error as Error).message}); trying again in ${wait / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Worker states in which the process is alive: starting, polling, or finishing what it holds. */
const ALIVE_STATES = new Set(['INITIALIZED', 'RUNNING', 'DRAINING', 'DRAINED', 'STOPPING']);

/**
 * The worker's liveness and readiness: alive while it starts, polls or drains; ready only while
 * it polls and Temporal and Postgres answer, so a rollout waits for a new replica to take work
 * before it stops an old one.
 */
export function workerProbes(worker: Pick<Worker, 'getState'>, deps: { config: Config; pool: Pool; client: Client; bundle: 'prebuilt' | 'bundled at start' }) {
  const { config } = deps;
  return {
    health: () => ({ ok: ALIVE_STATES.has(worker.getState()), worker: worker.getState(), taskQueue: config.TEMPORAL_TASK_QUEUE }),
    async ready() {
      const state = worker.getState();
      const [temporal, postgres] = await Promise.all([
        deps.client
          .withDeadline(Date.now() + HEALTH_DEADLINE_MS, () => deps.client.workflowService.getSystemInfo({}))
          .then(
            () => 'ok',
            (error: Error) => `unreachable (${error.name})`,
          ),
        postgresHealth(deps.pool, HEALTH_DEADLINE_MS),
      ]);
      const missing = [
        ...(state === 'RUNNING' ? [] : [`the worker is ${state}, not polling`]),
        ...(temporal === 'ok' ? [] : [`Temporal at ${config.TEMPORAL_ADDRESS} is ${temporal}`]),
        ...(postgres === 'ok' ? [] : [`Postgres is unreachable (${postgres})`]),
      ];
      return {
        ok: missing.length === 0,
        worker: state,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        temporal: temporal === 'ok' ? 'ok' : 'down',
        postgres: postgres === 'ok' ? 'ok' : 'down',
        keys: 'ok',
        bundle: deps.bundle,
        ...(missing.length ? { error: `not ready: ${missing.join('; ')}` } : {}),
      };
    },
  };
}

function storeLine(store: 'postgres' | 's3' | 'off'): string {
  return store === 'off' ? 'kept inline' : `large ones stored by reference in ${store}`;
}

/**
 * `casework worker`: opens Postgres (migrating it), picks the model, connects to Temporal and
 * polls until SIGINT or SIGTERM, then drains in-flight tasks and closes everything. With
 * CASEWORK_METRICS_PORT set it serves /metrics and /healthz there while it runs.
 */
export async function runWorker(config: Config = loadConfig(), log: (line: string) => void = console.log): Promise<void> {
  const budgetMs = config.CASEWORK_OUTAGE_BUDGET_SECONDS * 1000;
  // Before anything else: production mode without a payload key refuses to start, naming the variable.
  const keyring = loadKeyring(config);
  // Before any client or worker is made: they add their tracing interceptors only when it is on.
  // A half-configured MCP server is a start error naming the field, before anything connects.
  const mcpServers = mcpServerSettings(config);
  const tracing = startTracing(config, { serviceName: 'casework-worker' });
  const db = await untilAvailable('Postgres', () => openDatabase(config), budgetMs, log);
  let mcp: McpTools | undefined;
  try {
    // Connected once: the tools they offer are fixed for this worker, so every run's definitions (and the prompt cache) stay put.
    if (mcpServers.length) mcp = await untilAvailable('the MCP servers', () => connectMcpServers(mcpServers), budgetMs, log);
    await untilAvailable('Postgres', () => migrate(db.admin), budgetMs, log);
    // A payment provider chosen without its keys fails here, naming the variable, before Temporal is asked for anything.
    const commerce = selectCommerce(config, db.app);
    const model = selectModel(config);
    const embedder = selectEmbedder(config);
    const connection = await untilAvailable('Temporal', () => connectWorker(config), budgetMs, log);
    try {
      const worker = await createWorker({
        config,
        connection,
        pool: db.app,
        model,
        embedder,
        commerce,
        mcp,
        workflowBundlePath: config.CASEWORK_WORKFLOW_BUNDLE,
        shutdownGraceMs: config.CASEWORK_SHUTDOWN_GRACE_SECONDS * 1000,
      });
      let endpoint: MetricsEndpoint | undefined;
      try {
        if (config.CASEWORK_METRICS_PORT) {
          const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter: dataConverterFor(config, db.app) });
          const bundle = config.CASEWORK_WORKFLOW_BUNDLE ? 'prebuilt' : 'bundled at start';
          endpoint = await startMetricsEndpoint({
            config,
            temporalMetricsPort: installTelemetry(config).temporalMetricsPort,
            client,
            ...workerProbes(worker, { config, pool: db.app, client, bundle }),
            admin: { pool: db.admin, approvalReminderSeconds: config.CASEWORK_APPROVAL_REMINDER_HOURS * 3600 },
          });
        }
        log(
          `casework worker on task queue "${config.TEMPORAL_TASK_QUEUE}" at ${config.TEMPORAL_ADDRESS}; model: ${model.label}; embeddings: ${embedder?.label ?? 'off'}; ` +
            `commerce: ${describeCommerce(config)}; ` +
            (mcp ? `MCP tools: ${mcp.offers.tools.map((t) => `${t.name} (${t.kind})`).join(', ') || 'none'}; ` : '') +
            `payloads: encrypted with key ${keyring.current.id} (${keyring.source}), ${storeLine(payloadStoreFor(config, true))}` +
            (endpoint ? `; metrics: ${endpoint.url}/metrics` : '') +
            (tracing ? `; traces: ${config.OTEL_EXPORTER_OTLP_ENDPOINT}` : ''),
        );
        await worker.run();
      } finally {
        await endpoint?.close();
      }
    } finally {
      await connection.close();
    }
  } finally {
    await mcp?.close();
    await db.close();
    await tracing?.shutdown().catch(() => undefined);
  }
}

if (require.main === module) {
  runWorker().catch((error: Error) => {
    console.error(`casework worker: ${error.message}`);
    process.exit(1);
  });
}
