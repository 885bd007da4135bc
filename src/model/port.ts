import type { ModelReply, ModelRequest } from '../schemas/model';

/** The model port: one Messages API call. Adapters: the Anthropic SDK and the offline investigator. */
export interface Model {
  /** Shown in every output that carries a model reply, e.g. "offline investigator (deterministic test double)". */
  readonly label: string;
  /** True for the deterministic offline test double. */
  readonly offline: boolean;
  /** Sends one request and returns the reply in Messages API shapes. */
  create(request: ModelRequest): Promise<ModelReply>;
}
