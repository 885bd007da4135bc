import { IllegalStateError } from '@temporalio/common';
import { CASE_COST_BUCKETS_USD, WORKFLOW_METRIC } from '../schemas/workflow-metrics';
import { DefaultLogger, Runtime, type LogEntry, type LogLevel, type Logger } from '@temporalio/worker';
import type { Config } from '../config';
import { FAILURE_FIELDS, scrubFailureText } from './log-scrub';

// Structured logs: every line the SDK, the workflow logger (`log` from @temporalio/workflow),
// the activity logger (`log` from @temporalio/activity) and Temporal's native core emit goes
// through one Runtime logger, written as one JSON object per line. Workflow and activity lines
// carry workflowId and runId; casework's interceptors add customerId, ticketId and step.

/** Writes one finished log line (without the newline). */
export type LineWriter = (line: string) => void;

const LEVELS: Record<Config['CASEWORK_LOG_LEVEL'], LogLevel> = { debug: 'DEBUG', info: 'INFO', warn: 'WARN', error: 'ERROR' };

/**
 * Fields that could hold a customer's words or remembered notes. Above debug level their values
 * are replaced by their size, whoever logged them: message bodies and memory contents never
 * reach an info line, even from code that forgot.
 */
export const REDACTED_FIELDS: ReadonlySet<string> = new Set([
  'message',
  'messages',
  'content',
  'text',
  'body',
  'transcript',
  'memory',
  'memoryBlock',
  'block',
  'notes',
  'prompt',
  'reply',
  'system',
]);

/** How a line's values are made safe: above debug, failure text is scrubbed (log-scrub.ts). */
type Scrub = (text: string) => string;
const verbatim: Scrub = (text) => text;

/** `value` as JSON; Error messages go through `scrub`, and so do all strings when `strings` is set. */
function jsonSafe(value: unknown, scrub: Scrub, strings = false, depth = 0): unknown {
  if (strings && typeof value === 'string') return scrub(value);
  if (value instanceof Error) {
    return { name: value.name, message: scrub(value.message), ...(value.cause instanceof Error ? { cause: scrub(value.cause.message) } : {}) };
  }
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (depth > 4) return '[nested]';
  if (Array.isArray(value)) return value.map((v) => jsonSafe(v, scrub, strings, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSafe(v, scrub, strings, depth + 1)]));
}

function sizeOf(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return `[redacted: ${text.length} chars]`;
}

/**
 * The fields of one log line: time, level, message, then the metadata. Above debug, fields that
 * hold customer words are replaced by their size, and failure text (FAILURE_FIELDS, every
 * Error's message, a warning's or error's own message) is scrubbed of quoted prose and secrets.
 */
export function logRecord(entry: LogEntry): Record<string, unknown> {
  const redact = entry.level !== 'DEBUG' && entry.level !== 'TRACE';
  const scrub = redact ? scrubFailureText : verbatim;
  const record: Record<string, unknown> = {
    ts: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(),
    level: entry.level.toLowerCase(),
    // Only warnings and errors carry failures in their message; info lines are code's own words.
    msg: entry.level === 'WARN' || entry.level === 'ERROR' ? scrub(entry.message) : entry.message,
  };
  for (const [key, value] of Object.entries(entry.meta ?? {})) {
    if (value === undefined) continue;
    if (key === 'ts' || key === 'level' || key === 'msg') continue;
    record[key] = redact && REDACTED_FIELDS.has(key) ? sizeOf(value) : jsonSafe(value, scrub, FAILURE_FIELDS.has(key));
  }
  return record;
}

/** One JSON object per line, the format log shippers read. */
export function formatJson(entry: LogEntry): string {
  return JSON.stringify(logRecord(entry));
}

/** The same fields as `time LEVEL message key=value…`, for a person at a terminal. */
export function formatText(entry: LogEntry): string {
  const { ts, level, msg, ...rest } = logRecord(entry);
  const fields = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`);
  return [ts, String(level).toUpperCase().padEnd(5), msg, ...fields].join(' ');
}

/** A Temporal logger at CASEWORK_LOG_LEVEL writing formatted lines (to stderr unless `write` is given). */
export function createLogger(config: Pick<Config, 'CASEWORK_LOG_LEVEL' | 'CASEWORK_LOG_FORMAT'>, write?: LineWriter): Logger {
  const format = config.CASEWORK_LOG_FORMAT ?? (process.stderr.isTTY ? 'text' : 'json');
  const render = format === 'json' ? formatJson : formatText;
  const out: LineWriter = write ?? ((line) => process.stderr.write(`${line}\n`));
  return new DefaultLogger(LEVELS[config.CASEWORK_LOG_LEVEL], (entry) => out(render(entry)));
}

/** The loopback port the Temporal runtime exports its Prometheus metrics on, or undefined when metrics are off. */
export function temporalMetricsPort(config: Pick<Config, 'CASEWORK_METRICS_PORT' | 'CASEWORK_TEMPORAL_METRICS_PORT'>): number | undefined {
  if (!config.CASEWORK_METRICS_PORT) return undefined;
  return config.CASEWORK_TEMPORAL_METRICS_PORT || config.CASEWORK_METRICS_PORT + 1;
}

/** What installTelemetry set up in this process. */
export interface Telemetry {
  /** Where the Temporal runtime's own metrics are (127.0.0.1), when they are exported. */
  temporalMetricsPort: number | undefined;
  /** False when the Temporal runtime had already been started with other settings. */
  installed: boolean;
  logger: Logger;
}

let telemetry: Telemetry | undefined;

/** Raised when the Temporal runtime cannot start its metrics exporter (usually: the port is taken). */
export class TelemetryError extends Error {
  override name = 'TelemetryError';
}

/**
 * Installs the Temporal Runtime once per process, before any NativeConnection: the JSON logger
 * (also receiving the native core's warnings) and, when CASEWORK_METRICS_PORT is set, the
 * runtime's Prometheus exporter on 127.0.0.1, which casework's /metrics merges into its own.
 * Later calls return the first call's result. When something else already started the
 * runtime (a TestWorkflowEnvironment, say), that runtime is kept and a warning says so.
 */
export function installTelemetry(config: Config, options: { write?: LineWriter } = {}): Telemetry {
  if (telemetry) return telemetry;
  const logger = createLogger(config, options.write);
  const port = temporalMetricsPort(config);
  try {
    Runtime.install({
      logger,
      telemetryOptions: {
        logging: { forward: {}, filter: { core: config.CASEWORK_LOG_LEVEL === 'debug' ? 'INFO' : 'WARN', other: 'ERROR' } },
        ...(port ? { metrics: { prometheus: { bindAddress: `127.0.0.1:${port}`, histogramBucketOverrides: { [WORKFLOW_METRIC.caseCost]: CASE_COST_BUCKETS_USD } } } } : {}),
      },
    });
    telemetry = { temporalMetricsPort: port, installed: true, logger };
  } catch (error) {
    if (!(error instanceof IllegalStateError)) {
      throw new TelemetryError(
        `cannot start the Temporal runtime${port ? ` with its metrics on 127.0.0.1:${port}` : ''}: ${(error as Error).message}` +
          (port ? ' (is the port taken? set CASEWORK_TEMPORAL_METRICS_PORT)' : ''),
      );
    }
    logger.warn('the Temporal runtime was already started in this process; casework keeps its logger and metrics settings');
    telemetry = { temporalMetricsPort: undefined, installed: false, logger: Runtime.instance().logger };
  }
  return telemetry;
}
