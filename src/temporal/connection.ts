import { readFileSync } from 'node:fs';
import type { Config } from '../config';
import { UnavailableError } from '../errors';

/** Temporal cannot be reached; says where and what to do, instead of hanging or dumping a stack. */
export class TemporalUnavailableError extends UnavailableError {}

/** How long a connection attempt may take before it is reported as unreachable (CASEWORK_CONNECT_TIMEOUT_MS). */
export const CONNECT_TIMEOUT_MS = 6_000;

/** Attempts to reach Temporal before reporting it unreachable: a busy machine may miss one deadline, rarely two. */
export const CONNECT_ATTEMPTS = 2;

/** TLS settings from config: mTLS with a cert and key, plain TLS with an API key (Temporal Cloud), or none. */
export function tlsOptions(config: Config) {
  if (config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH) {
    return { clientCertPair: { crt: readFileSync(config.TEMPORAL_TLS_CERT_PATH), key: readFileSync(config.TEMPORAL_TLS_KEY_PATH) } };
  }
  if (config.TEMPORAL_TLS === 'true' || (config.TEMPORAL_API_KEY && config.TEMPORAL_TLS !== 'false')) return true;
  return undefined;
}

/** The connection options both the client and the worker use. */
export function connectionOptions(config: Config) {
  return {
    address: config.TEMPORAL_ADDRESS,
    tls: tlsOptions(config),
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}

/** The connect deadline passed: says which deadline, so a slow server is told apart from a refused one. */
export class ConnectDeadlineError extends Error {
  override name = 'ConnectDeadlineError';
}

/** One attempt of `connect` under a deadline. */
async function attempt<T>(connect: () => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectDeadlineError(`the connect deadline of ${timeoutMs / 1000} s passed (CASEWORK_CONNECT_TIMEOUT_MS=${timeoutMs})`)), timeoutMs);
  });
  try {
    return await Promise.race([connect(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `connect` under a deadline, `attempts` times at most (a second attempt rides out one
 * missed deadline on a busy machine), turning the last failure into a TemporalUnavailableError
 * naming the address.
 */
export async function withConnectTimeout<T>(address: string, connect: () => Promise<T>, options: { timeoutMs?: number; attempts?: number } = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? CONNECT_TIMEOUT_MS;
  const attempts = Math.max(1, options.attempts ?? 1);
  let last: unknown;
  for (let i = 1; i <= attempts; i++) {
    try {
      return await attempt(connect, timeoutMs);
    } catch (error) {
      last = error;
    }
  }
  const tried = attempts > 1 ? ` (${attempts} attempts)` : '';
  throw new TemporalUnavailableError(
    `cannot reach Temporal at ${address}${tried}: ${firstLine((last as Error)?.message ?? String(last))}. ` +
      'Start a server (`temporal server start-dev`, or `npm run demo` starts one) or set TEMPORAL_ADDRESS.',
  );
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
