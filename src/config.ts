import { z } from 'zod';
import { describeIssues } from './schemas/issues';

const int = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);
const num = (fallback: number) => z.coerce.number().nonnegative().default(fallback);

/** Everything casework reads from the environment, validated once at start. */
export const ConfigSchema = z.object({
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('casework'),
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_TLS: z.enum(['true', 'false']).optional(),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  TEMPORAL_UI_URL: z.string().default('http://127.0.0.1:8233'),
  DATABASE_URL: z.string().optional(),
  /** Where the embedded Postgres keeps its files when DATABASE_URL is unset. */
  CASEWORK_DATA_DIR: z.string().default('.data'),
  CASEWORK_DB_POOL_SIZE: int(8),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: z.string().optional(),
  CASEWORK_MODEL: z.string().default('claude-sonnet-4-5'),
  CASEWORK_MAX_TOKENS: int(2048),
  CASEWORK_MODEL_TIMEOUT_MS: int(120_000),
  /** Most model calls for one customer turn before the case goes to a person. */
  CASEWORK_MAX_STEPS: int(40),
  CASEWORK_MAX_STEPS_PER_RUN: int(500),
  CASEWORK_CLEAR_EVERY: int(10),
  CASEWORK_KEEP_RECENT: int(3),
  CASEWORK_CACHE_TTL_SECONDS: int(300),
  CASEWORK_COMPACT_ABOVE_TOKENS: int(30_000),
  CASEWORK_KEEP_LAST_MESSAGES: int(8),
  /** An answered ticket closes (and its case is recorded) after this long without a follow-up. */
  CASEWORK_FOLLOW_UP_WINDOW_SECONDS: int(86_400),
  CASEWORK_APPROVAL_REMINDER_HOURS: num(24),
  CASEWORK_APPROVAL_TIMEOUT_HOURS: num(72),
  /** Who may decide refunds and up to how many cents: "name:limit,name:limit". */
  CASEWORK_APPROVERS: z.string().default('support-lead:50000,duty-manager:200000'),
  CASEWORK_THINKING: z.enum(['true', 'false']).default('false'),
  /** Which embedder memory uses: the local MiniLM model (default), a hosted API (voyage, or openai for any OpenAI-compatible /v1/embeddings), or off (full-text recall only). */
  CASEWORK_EMBEDDINGS: z.enum(['local', 'voyage', 'openai', 'off']).default('local'),
  /** The hosted embedding model (voyage default: voyage-3.5; required for openai). */
  CASEWORK_EMBEDDINGS_MODEL: z.string().optional(),
  /** The hosted API's base URL, up to and including /v1. */
  CASEWORK_EMBEDDINGS_BASE_URL: z.string().optional(),
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
  /** USD per million uncached input tokens; cache write and read are multiples of it. */
  CASEWORK_PRICE_INPUT_PER_MTOK: num(4),
  CASEWORK_PRICE_OUTPUT_PER_MTOK: num(20),
  CASEWORK_PRICE_CACHE_WRITE_MULTIPLIER: num(1.25),
  CASEWORK_PRICE_CACHE_READ_MULTIPLIER: num(0.1),
  CASEWORK_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** The ticket-event HTTP endpoint (`casework serve`): port and interface it listens on. */
  CASEWORK_HTTP_PORT: int(8080),
  CASEWORK_HTTP_HOST: z.string().default('0.0.0.0'),
  /** API keys of the endpoint: "key:grant|grant,key:grant" (see src/server/auth.ts). Secret: set it from the environment. */
  CASEWORK_API_KEYS: z.string().optional(),
  /** With no API keys, serve anyway, on 127.0.0.1 only, treating every caller as trusted. Local development only. */
  CASEWORK_HTTP_OPEN: z.enum(['true', 'false']).default('false'),
});
/** Validated configuration. */
export type Config = z.infer<typeof ConfigSchema>;

/** Raised when the environment holds a value casework cannot use; names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates configuration from an environment (process.env by default). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const defined = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse(defined);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error, '(environment)');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  return parsed.data;
}
