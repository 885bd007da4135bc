import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { BadInputError } from './errors';
import { describeIssues } from './schemas/issues';

const int = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
const num = (fallback: number) => z.coerce.number().nonnegative().default(fallback);

/** True when `text` parses as a URL whose scheme is one of `schemes` ("postgres:", "http:", …). */
function isUrlOf(text: string, schemes: readonly string[]): boolean {
  try {
    return schemes.includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

// Checked when the process starts, so a typo exits 2 naming the variable instead of a worker
// or server retrying a connection it can never make.
const postgresUrl = () => z.string().refine((v) => isUrlOf(v, ['postgres:', 'postgresql:']), 'must be a Postgres URL, e.g. postgres://user:password@host:5432/database');
const httpUrl = () => z.string().refine((v) => isUrlOf(v, ['http:', 'https:']), 'must be an http:// or https:// URL');
const hostPort = () =>
  z
    .string()
    .refine(
      (v) => /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$/.test(v) && Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535,
      'must be host:port, e.g. 127.0.0.1:7233 (no scheme)',
    );

/** The folder holding package.json, migrations/ and .tools/, whether casework runs from src/ or from dist/. */
export const PROJECT_ROOT = ((): string => {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) if (existsSync(join(dir, 'package.json'))) return dir;
  return join(__dirname, '..');
})();

/** Everything casework reads from the environment, validated once at start. */
export const ConfigSchema = z.object({
  TEMPORAL_ADDRESS: hostPort().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('casework'),
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_TLS: z.enum(['true', 'false']).optional(),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  TEMPORAL_UI_URL: httpUrl().default('http://127.0.0.1:8233'),
  DATABASE_URL: postgresUrl().optional(),
  /** Where the embedded Postgres keeps its files when DATABASE_URL is unset. */
  CASEWORK_DATA_DIR: z.string().default('.data'),
  CASEWORK_DB_POOL_SIZE: int(8),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: httpUrl().optional(),
  CASEWORK_MODEL: z.string().default('claude-sonnet-4-5'),
  CASEWORK_MAX_TOKENS: int(2048),
  CASEWORK_MODEL_TIMEOUT_MS: int(120_000),
  /** How long one attempt to reach Temporal may take before it is retried once, then reported. */
  CASEWORK_CONNECT_TIMEOUT_MS: int(6_000),
  /** Most model calls for one customer turn before the case goes to a person. */
  CASEWORK_MAX_STEPS: int(40),
  CASEWORK_MAX_STEPS_PER_RUN: int(500),
  /** Set: clear in a batch every this many steps (and on a cold cache), as before the cache-optimal schedule. Unset: the schedule below. */
  CASEWORK_CLEAR_EVERY: z.coerce.number().int().nonnegative().optional(),
  /** The cache-optimal clearing schedule keeps every request under this many tokens (0 turns it off: batches every 10 steps). */
  CASEWORK_CONTEXT_PEAK_TOKENS: int(30_000),
  /** Share of waits on a person (refund approvals) answered within the hour: the 1-hour cache is bought before a wait when this makes it cheaper. */
  CASEWORK_WAIT_WITHIN_HOUR_SHARE: z.coerce.number().min(0).max(1).default(0.25),
  CASEWORK_KEEP_RECENT: int(3),
  CASEWORK_CACHE_TTL_SECONDS: int(300),
  CASEWORK_COMPACT_ABOVE_TOKENS: int(30_000),
  CASEWORK_KEEP_LAST_MESSAGES: int(8),
  /** An answered ticket closes (and its case is recorded) after this long without a follow-up. */
  CASEWORK_FOLLOW_UP_WINDOW_SECONDS: int(86_400),
  CASEWORK_APPROVAL_REMINDER_HOURS: num(24),
  /** How long an activity keeps retrying an unreachable Postgres, model or desk before a person is told. */
  CASEWORK_OUTAGE_BUDGET_SECONDS: int(600),
  CASEWORK_APPROVAL_TIMEOUT_HOURS: num(72),
  /** Who may decide refunds and up to how many cents: "name:limit,name:limit". */
  CASEWORK_APPROVERS: z.string().default('support-lead:50000,duty-manager:200000'),
  CASEWORK_THINKING: z.enum(['true', 'false']).default('false'),
  /** Run the read-only shop tools as local activities and one reply's reads side by side (true), or every tool as a remote activity, one at a time (false). */
  CASEWORK_LOCAL_READ_TOOLS: z.enum(['true', 'false']).default('true'),
  /**
   * Retired: every investigation keeps its transcript in the transcript log and sends the model activity the step's
   * plan. `true` changes nothing; `false` (the in-workflow transcript) stops the process at start, so a deployment
   * still set to it drains those runs first (docs/deploy.md, "Retiring the in-workflow transcript").
   */
  CASEWORK_HISTORY_BY_REFERENCE: z
    .string()
    .refine(
      (v) => v === 'true',
      'is retired: investigations no longer keep their transcript in the workflow (false); every one keeps it in the transcript log. ' +
        'Drain the investigations started with it false on the previous release, then unset it (docs/deploy.md, "Retiring the in-workflow transcript")',
    )
    .optional(),
  /**
   * Run each step's model call as a local activity (true, the default): about 3 history events a step instead of 8,
   * and a turn's steps in a few workflow tasks. A call holds its step's workflow task open; the worker heartbeats
   * it every 3.2 s (such runs start with a 4 s workflow task timeout), and a signal or status query arriving
   * mid-call is answered then. false: remote calls, one activity each. Decided per case when it starts.
   */
  CASEWORK_LOCAL_MODEL_CALLS: z.enum(['true', 'false']).default('true'),
  /** Ask the server to hand an activity back in the workflow task's completion (eager dispatch; the server must allow it). */
  CASEWORK_EAGER_ACTIVITIES: z.enum(['true', 'false']).default('true'),
  /** Which embedder memory uses: the local MiniLM model (default), a hosted API (voyage, or openai for any OpenAI-compatible /v1/embeddings), or off (full-text recall only). */
  CASEWORK_EMBEDDINGS: z.enum(['local', 'voyage', 'openai', 'off']).default('local'),
  /** The hosted embedding model (voyage default: voyage-3.5; required for openai). */
  CASEWORK_EMBEDDINGS_MODEL: z.string().optional(),
  /** The hosted API's base URL, up to and including /v1. */
  CASEWORK_EMBEDDINGS_BASE_URL: httpUrl().optional(),
  /** The hosted API's key. Secret: set it from the environment. */
  CASEWORK_EMBEDDINGS_API_KEY: z.string().optional(),
  /** Vector length to ask a hosted model for; unset, the model's own. */
  CASEWORK_EMBEDDINGS_DIMENSIONS: z.coerce.number().int().positive().optional(),
  CASEWORK_EMBEDDINGS_TIMEOUT_MS: int(15_000),
  /** Retries of a hosted embeddings call after a network failure, 429 or 5xx. */
  CASEWORK_EMBEDDINGS_RETRIES: int(3),
  /** Months a remembered note lives before it expires. */
  CASEWORK_NOTE_TTL_MONTHS: int(12),
  /** casework's Prometheus endpoint (/metrics, /healthz); 0 turns metrics off. */
  CASEWORK_METRICS_PORT: int(0),
  /** Interface the metrics endpoint listens on. */
  CASEWORK_METRICS_HOST: z.string().default('0.0.0.0'),
  /** Loopback port of the Temporal runtime's own exporter, merged into /metrics; 0 means CASEWORK_METRICS_PORT + 1. */
  CASEWORK_TEMPORAL_METRICS_PORT: int(0),
  /** How often (at most) the approvals-waiting gauge asks Temporal's visibility store for counts. */
  CASEWORK_METRICS_VISIBILITY_SECONDS: int(15),
  /** json: one JSON object per line (for log shippers); text: the same fields, readable. Unset: text on a terminal, else json. */
  CASEWORK_LOG_FORMAT: z.enum(['json', 'text']).optional(),
  CASEWORK_MAX_CONCURRENT_ACTIVITIES: int(20),
  /** On SIGTERM, how long `casework worker` lets activities in flight finish before cancelling them (they then retry elsewhere); keep it below the orchestrator's kill timeout. */
  CASEWORK_SHUTDOWN_GRACE_SECONDS: int(120),
  /** Most workflows the worker keeps in memory (the sticky cache); an evicted one is replayed from its history on its next event. Unset: the SDK's default, from the heap size. */
  CASEWORK_WORKFLOW_CACHE_SIZE: z.coerce.number().int().min(2).optional(),
  /** A prebuilt workflow bundle (`casework bundle <file>`); unset, the worker bundles src/workflows when it starts. */
  CASEWORK_WORKFLOW_BUNDLE: z.string().optional(),
  /**
   * Worker Versioning (docs/deploy.md, "Rolling out workflow code"): the Worker Deployment this
   * worker belongs to and the build id of its workflow code. Set both or neither; unset, the
   * worker is unversioned and every worker on the task queue runs every investigation.
   */
  CASEWORK_DEPLOYMENT_NAME: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'letters, digits, ".", "_" and "-" only')
    .optional(),
  CASEWORK_BUILD_ID: z
    .string()
    .regex(/^[A-Za-z0-9._+-]{1,100}$/, 'letters, digits, ".", "_", "+" and "-" only')
    .optional(),
  /** USD per million uncached input tokens; cache write and read are multiples of it. */
  CASEWORK_PRICE_INPUT_PER_MTOK: num(4),
  CASEWORK_PRICE_OUTPUT_PER_MTOK: num(20),
  CASEWORK_PRICE_CACHE_WRITE_MULTIPLIER: num(1.25),
  CASEWORK_PRICE_CACHE_READ_MULTIPLIER: num(0.1),
  /** USD of model calls one case is expected to stay under; exported as casework_case_budget_usd for the cost-per-case alert. */
  CASEWORK_CASE_BUDGET_USD: num(0.5),
  /** Where traces go over OTLP/HTTP (the OpenTelemetry standard variable; the other OTEL_* variables apply too). Unset: no tracing at all. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url('OTEL_EXPORTER_OTLP_ENDPOINT must be a URL, e.g. http://otel-collector:4318').optional(),
  /** One-hour cache writes, as a multiple of the input price; unset, the API's 2x. */
  CASEWORK_PRICE_CACHE_WRITE_1H_MULTIPLIER: z.coerce.number().nonnegative().optional(),
  CASEWORK_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** The ticket-event HTTP endpoint (`casework serve`): port and interface it listens on. */
  CASEWORK_HTTP_PORT: int(8080),
  CASEWORK_HTTP_HOST: z.string().default('0.0.0.0'),
  /** API keys of the endpoint: "key:grant|grant,key:grant" (see src/server/auth.ts). Secret: set it from the environment. */
  CASEWORK_API_KEYS: z.string().optional(),
  /** With no API keys, serve anyway, on 127.0.0.1 only, treating every caller as trusted. Local development only. */
  CASEWORK_HTTP_OPEN: z.enum(['true', 'false']).default('false'),
  /** The support console (`casework console`, docs/console.md): port and interface it listens on. */
  CASEWORK_CONSOLE_PORT: int(8090),
  CASEWORK_CONSOLE_HOST: z.string().default('0.0.0.0'),
  /** How often an open approvals inbox asks which refunds are still pending, so a card another person decided is marked. */
  CASEWORK_CONSOLE_POLL_SECONDS: z.coerce.number().positive().default(15),
  /** A console session unused this long ends (minutes); it can be no longer than CASEWORK_CONSOLE_SESSION_HOURS. */
  CASEWORK_CONSOLE_IDLE_MINUTES: z.coerce.number().int().positive().default(480),
  /** A console session ends this long after sign-in however busy it is (hours): the absolute lifetime. */
  CASEWORK_CONSOLE_SESSION_HOURS: z.coerce.number().positive().default(24),
  // ---- Support desks (src/desk/): webhooks in, replies and notes out. Secrets: set them from the environment.
  /** Desks casework talks to: "zendesk,intercom,freshdesk,webhook" (any of them; empty: none). Each listed desk needs its credentials below. */
  CASEWORK_DESKS: z.string().default(''),
  /** MCP servers and the tools casework offers from them: a JSON file's path, or the JSON itself (docs/mcp.md). Unset: none. */
  CASEWORK_MCP_SERVERS: z.string().optional(),
  /**
   * The delivery horizon, in seconds: the oldest signed webhook accepted (older ones are refused
   * as replays). Within it a replay is answered as a duplicate by the idempotency record, so it
   * is as long as every desk's documented retries and delays (Intercom: hours), 7 days by default.
   */
  CASEWORK_DESK_REPLAY_WINDOW_SECONDS: int(7 * 24 * 3600),
  /** Who each desk requester is in casework: "zendesk:<user id>=<customer id>,intercom:<contact id>=<customer id>,freshdesk:<email>=<customer id>". */
  CASEWORK_DESK_CUSTOMERS: z.string().default(''),
  /** Trust the desk's own external id of the requester (Zendesk user / Intercom contact external_id) as the customer id when no mapping names them. */
  CASEWORK_DESK_TRUST_EXTERNAL_ID: z.enum(['true', 'false']).default('false'),
  /** Longest wait for one desk API call before it counts as timed out (and is checked, then retried). */
  CASEWORK_DESK_TIMEOUT_MS: int(10_000),
  /** A desk's rate limit (429) asking for at most this many seconds in all is waited out inside the post; a longer one ends the attempt and Temporal retries after exactly the desk's delay. */
  CASEWORK_DESK_RATE_LIMIT_WAIT_SECONDS: int(10),
  /** Zendesk: API base (https://<subdomain>.zendesk.com), agent email + API token, and the webhook's signing secret. */
  CASEWORK_ZENDESK_BASE_URL: httpUrl().optional(),
  CASEWORK_ZENDESK_EMAIL: z.string().optional(),
  CASEWORK_ZENDESK_API_TOKEN: z.string().optional(),
  CASEWORK_ZENDESK_WEBHOOK_SECRET: z.string().optional(),
  /** Zendesk status per case state, overriding the defaults (docs/desks.md): "awaiting_approval=hold,with_person=hold,..."; checked at start. */
  CASEWORK_ZENDESK_STATUSES: z.string().default(''),
  /** Zendesk group a case handed to a person is assigned to (its id); unset, the assignment is left alone. */
  CASEWORK_ZENDESK_HANDOFF_GROUP_ID: z.string().optional(),
  /** Zendesk ticket field (its id) holding the order an earlier ticket is about; unset, earlier tickets read from Zendesk name no order. */
  CASEWORK_ZENDESK_ORDER_FIELD_ID: z.string().optional(),
  /** Intercom: API base, access token, the app's client secret (signs webhooks) and the admin casework replies as. */
  CASEWORK_INTERCOM_BASE_URL: httpUrl().default('https://api.intercom.io'),
  CASEWORK_INTERCOM_ACCESS_TOKEN: z.string().optional(),
  CASEWORK_INTERCOM_CLIENT_SECRET: z.string().optional(),
  CASEWORK_INTERCOM_ADMIN_ID: z.string().optional(),
  /** Intercom conversation state (open, snoozed, closed) per case state, overriding the defaults (docs/desks.md); checked at start. */
  CASEWORK_INTERCOM_STATES: z.string().default(''),
  /** How long a conversation casework snoozes sleeps, in seconds (a customer's reply wakes it sooner). */
  CASEWORK_INTERCOM_SNOOZE_SECONDS: int(86_400),
  /** Intercom admin a case handed to a person is assigned to; unset, the assignment is left alone. */
  CASEWORK_INTERCOM_HANDOFF_ADMIN_ID: z.string().optional(),
  /** Intercom conversation custom attribute holding the order an earlier conversation is about; unset, they name no order. */
  CASEWORK_INTERCOM_ORDER_ATTRIBUTE: z.string().optional(),
  /** Freshdesk: API base (https://<domain>.freshdesk.com), API key, and the shared secret the automation rule sends in X-Casework-Webhook-Token. */
  CASEWORK_FRESHDESK_BASE_URL: httpUrl().optional(),
  CASEWORK_FRESHDESK_API_KEY: z.string().optional(),
  CASEWORK_FRESHDESK_WEBHOOK_TOKEN: z.string().optional(),
  /** Freshdesk status id per case state, overriding the defaults (docs/desks.md; 7 is "Waiting on Third Party" in a default account); checked at start. */
  CASEWORK_FRESHDESK_STATUSES: z.string().default(''),
  /** Freshdesk group a case handed to a person is assigned to (its id); unset, the assignment is left alone. */
  CASEWORK_FRESHDESK_HANDOFF_GROUP_ID: z.string().optional(),
  /** Freshdesk ticket custom field ("cf_order_number") holding the order an earlier ticket is about; unset, they name no order. */
  CASEWORK_FRESHDESK_ORDER_FIELD: z.string().optional(),
  /** Generic outbound webhook for other desks: where replies and status changes are POSTed, and the HMAC secret that signs them. */
  CASEWORK_DESK_WEBHOOK_URL: httpUrl().optional(),
  CASEWORK_DESK_WEBHOOK_SECRET: z.string().optional(),
  // ---- end of support desks
  // ---- The shop's systems (src/commerce/, docs/commerce.md): where orders, tracking and payments live.
  /** Where orders, shipments, earlier tickets and policies are read: demo (casework's own demo tables). */
  CASEWORK_SHOP: z.string().default('demo'),
  /** Where charges are read and refunds paid: demo (the demo shop's payment records) or stripe (needs CASEWORK_STRIPE_SECRET_KEY and CASEWORK_STRIPE_WEBHOOK_SECRET). */
  CASEWORK_PAYMENTS: z.string().default('demo'),
  /** Where courier scans are read: shop (the shop's own tracking). */
  CASEWORK_TRACKING: z.string().default('shop'),
  /** Stripe: a restricted key with Charges read and Refunds write. Secret. */
  CASEWORK_STRIPE_SECRET_KEY: z.string().optional(),
  /** Stripe: the webhook endpoint's signing secret (whsec_…) for POST /webhooks/payments/stripe. Secret. */
  CASEWORK_STRIPE_WEBHOOK_SECRET: z.string().optional(),
  /** Stripe: where the API is; unset, Stripe's own (the Stripe stand-in's URL in tests and the stand-in demo). */
  CASEWORK_STRIPE_API_BASE: httpUrl().optional(),
  /** Stripe: longest wait for one API call. */
  CASEWORK_STRIPE_TIMEOUT_MS: int(20_000),
  // Payload privacy and size (src/temporal/codec/, src/temporal/storage/, src/server/codec-server.ts).
  /** Payload encryption keys, "id:base64key,id:base64key" (32-byte AES-256 keys), newest last: new payloads use the last. Secret. */
  CASEWORK_CODEC_KEYS: z.string().optional(),
  /** A file of keys in the same form, one or more per line ("#" starts a comment); read when CASEWORK_CODEC_KEYS is unset. */
  CASEWORK_CODEC_KEY_FILE: z.string().optional(),
  /** Production mode (also NODE_ENV=production): refuse to start without a configured key instead of generating a dev key. */
  CASEWORK_REQUIRE_ENCRYPTION: z.enum(['true', 'false']).default('false'),
  /** derived: the nonce is an HMAC of the payload, so equal payloads encrypt alike and content-addressed storage dedupes retries; random: a fresh nonce each time. */
  CASEWORK_CODEC_NONCE: z.enum(['derived', 'random']).default('derived'),
  /** Where payloads above the threshold go instead of history: postgres (payload_blobs), s3, or off (inline). Unset: postgres in a process with a database (DATABASE_URL or the embedded one), else off. */
  CASEWORK_PAYLOAD_STORE: z.enum(['postgres', 's3', 'off']).optional(),
  /** true: every payload of an investigation's history is stored by reference under its customer's data key (customer_payloads), so an erasure reaches the history; inline: encrypted under that key in history itself (no rows; keys cached, stale while Postgres is down); false: only the size rule applies. Needs a database. */
  CASEWORK_CUSTOMER_PAYLOADS: z.enum(['true', 'inline', 'false']).default('inline'),
  /** Payloads of at least this many bytes (after encryption) are stored by reference. */
  CASEWORK_PAYLOAD_STORE_THRESHOLD_BYTES: int(4096),
  /** The S3 (or MinIO) bucket for CASEWORK_PAYLOAD_STORE=s3; credentials come from the AWS SDK's usual chain (AWS_ACCESS_KEY_ID, ...). */
  CASEWORK_S3_BUCKET: z.string().optional(),
  /** An S3-compatible endpoint (MinIO: http://minio:9000); unset, AWS S3. */
  CASEWORK_S3_ENDPOINT: httpUrl().optional(),
  CASEWORK_S3_REGION: z.string().default('us-east-1'),
  /** Key prefix inside the bucket. */
  CASEWORK_S3_PREFIX: z.string().default('casework/payloads/'),
  /** Path-style addressing (bucket in the path), which MinIO needs. */
  CASEWORK_S3_FORCE_PATH_STYLE: z.enum(['true', 'false']).default('false'),
  /** The codec server (`casework codec-server`): port and interface. */
  CASEWORK_CODEC_SERVER_PORT: int(8089),
  CASEWORK_CODEC_SERVER_HOST: z.string().default('127.0.0.1'),
  /** Bearer token the codec server requires. Secret. Unset, it serves only on 127.0.0.1 outside production mode. */
  CASEWORK_CODEC_SERVER_TOKEN: z.string().optional(),
  /** Browser origins allowed to call the codec server, comma-separated; unset, the origin of TEMPORAL_UI_URL. */
  CASEWORK_CODEC_CORS_ORIGINS: z.string().optional(),
  // Retention (src/db/retention.ts, run by the schedule `casework schedules apply` creates; docs/operations.md, "Retention").
  /** Transcript entries and kept model replies of an investigation idle (and not running) this many days are deleted. */
  CASEWORK_RETENTION_TRANSCRIPT_DAYS: int(90),
  /** Stored payloads (customer_payloads, payload_blobs) not stored again this many days are deleted: at least the namespace's retention plus the longest run. */
  CASEWORK_RETENTION_PAYLOAD_DAYS: int(40),
  /** Memory of cases closed this many days ago is deleted. */
  CASEWORK_RETENTION_CASE_MEMORY_DAYS: int(730),
  /** Rows one retention batch deletes (each batch is its own transaction). */
  CASEWORK_RETENTION_BATCH: int(1000),
  /** When the retention schedule runs: a cron expression, in UTC. */
  CASEWORK_RETENTION_CRON: z.string().default('17 3 * * *'),
  /** Read for production mode only. */
  NODE_ENV: z.string().optional(),
});
/** Validated configuration. */
export type Config = z.infer<typeof ConfigSchema>;

/** Raised when the environment holds a value casework cannot use; names the variable. */
export class ConfigError extends BadInputError {}

/** Reads and validates configuration from an environment (process.env by default). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const defined = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(defined);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error, '(environment)');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const { CASEWORK_CONSOLE_IDLE_MINUTES: idle, CASEWORK_CONSOLE_SESSION_HOURS: hours } = parsed.data;
  if (idle > hours * 60) {
    throw new ConfigError(
      `invalid configuration: CASEWORK_CONSOLE_IDLE_MINUTES (${idle}) is longer than CASEWORK_CONSOLE_SESSION_HOURS (${hours} h, ${hours * 60} minutes); ` +
        'a session ends at its absolute lifetime first, so lower the idle time or raise the lifetime',
    );
  }
  return parsed.data;
}
