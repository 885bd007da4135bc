import { ConfigError } from '../../config';

// What the AfterShip tracking adapter needs, read from the environment. Unset, AfterShip is not
// configured; set without its API key, the process refuses to start naming the variable.

/** What the AfterShip tracking source needs. */
export interface AftershipSettings {
  /** An AfterShip API key (as-api-key) with read access to trackings. Secret. */
  apiKey: string;
  /** Where the API is; unset, AfterShip's own (https://api.aftership.com). The stand-in's URL in tests and the stand-in demo. */
  apiBase?: string;
  /** The longest rate-limit wait taken inside one call; longer, the call fails as unavailable. */
  maxRateLimitWaitMs: number;
  timeoutMs: number;
}

function milliseconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${name}: "${raw}" is not a whole number of milliseconds`);
  return value;
}

/**
 * The AfterShip settings from the environment, or undefined when no CASEWORK_AFTERSHIP_* variable
 * is set. Throws ConfigError naming the variable when one is missing or wrong.
 */
export function aftershipSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): AftershipSettings | undefined {
  const set = Object.keys(env).filter((key) => key.startsWith('CASEWORK_AFTERSHIP_') && env[key] !== undefined && env[key] !== '');
  if (set.length === 0) return undefined;
  const apiKey = env.CASEWORK_AFTERSHIP_API_KEY?.trim();
  if (!apiKey) throw new ConfigError(`CASEWORK_AFTERSHIP_API_KEY is required when ${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set`);
  const apiBase = env.CASEWORK_AFTERSHIP_API_BASE?.trim() || undefined;
  if (apiBase && !/^https?:\/\/[^/]+$/.test(apiBase))
    throw new ConfigError(`CASEWORK_AFTERSHIP_API_BASE: "${apiBase}" is not an http(s) origin without a trailing slash (e.g. https://api.aftership.com)`);
  return {
    apiKey,
    ...(apiBase ? { apiBase } : {}),
    maxRateLimitWaitMs: milliseconds(env, 'CASEWORK_AFTERSHIP_MAX_RATE_LIMIT_WAIT_MS', 3_000),
    timeoutMs: milliseconds(env, 'CASEWORK_AFTERSHIP_TIMEOUT_MS', 10_000),
  };
}
