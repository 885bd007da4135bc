import { readFileSync } from 'node:fs';
import type { Config } from '../config';
import { UnavailableError } from '../errors';

/** Temporal cannot be reached; says where and what to do, instead of hanging or dumping a stack. */
export class TemporalUnavailableError extends UnavailableError {}

/** How long a connection attempt may take before it is reported as unreachable. */
export const CONNECT_TIMEOUT_MS = 6_000;

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

/** Runs `connect`, turning a failure or a slow server into a TemporalUnavailableError naming the address. */
export async function withConnectTimeout<T>(address: string, connect: () => Promise<T>, timeoutMs = CONNECT_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([connect(), timeout]);
  } catch (error) {
    throw new TemporalUnavailableError(
      `cannot reach Temporal at ${address}: ${(error as Error).message}. ` +
        'Start a server (`temporal server start-dev`, or `npm run demo` starts one) or set TEMPORAL_ADDRESS.',
    );
  } finally {
    clearTimeout(timer);
  }
}
