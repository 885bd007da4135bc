import type { Config } from '../config';
import { createAnthropicModel } from './anthropic';
import { createOfflineModel } from './offline';
import type { Model } from './port';

/** Claude through the Anthropic SDK when ANTHROPIC_API_KEY is set; else the offline test double. */
export function selectModel(config: Config): Model {
  if (!config.ANTHROPIC_API_KEY) return createOfflineModel();
  return createAnthropicModel({
    apiKey: config.ANTHROPIC_API_KEY,
    baseURL: config.ANTHROPIC_BASE_URL,
    model: config.CASEWORK_MODEL,
    maxTokens: config.CASEWORK_MAX_TOKENS,
    timeoutMs: config.CASEWORK_MODEL_TIMEOUT_MS,
  });
}
