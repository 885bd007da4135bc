import { TOOL_SPECS, type ToolInput, type ToolName } from '../../schemas/tool-specs';
import { ToolError, type ToolCall, type ToolContext, type ToolOutcome, type TypedToolOutcome } from '../../schemas/tool-call';
import { describeIssues } from '../../schemas/issues';

/** A tool's body: validated input and context in, a JSON-safe result (or text) out. */
export type ToolRun<N extends ToolName, R = unknown> = (input: ToolInput<N>, context: ToolContext) => Promise<R>;

/** Renders a tool's result as the compact text the model reads. */
export function renderResult(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result);
}

/**
 * Wraps a tool body as an activity whose caller also needs the result as an object (the
 * workflow reads request_refund's request): validates input against the tool's zod schema,
 * and turns invalid input or a ToolError into an `is_error` outcome the model can read. Any
 * other error is thrown, so Temporal retries it.
 */
export function defineTypedTool<N extends ToolName, R>(name: N, run: ToolRun<N, R>): (call: ToolCall) => Promise<TypedToolOutcome<R>> {
  const spec = TOOL_SPECS[name];
  return async (call: ToolCall): Promise<TypedToolOutcome<R>> => {
    const parsed = spec.input.safeParse(call.input ?? {});
    if (!parsed.success) {
      return { is_error: true, content: `Invalid input for ${name}: ${describeIssues(parsed.error)}` };
    }
    try {
      const result = await run(parsed.data as ToolInput<N>, call.context);
      return { is_error: false, content: renderResult(result), result };
    } catch (error) {
      if (error instanceof ToolError) return { is_error: true, content: error.message };
      throw error;
    }
  };
}

/** Wraps a tool body as an activity whose outcome is only the text the model reads (see defineTypedTool). */
export function defineTool<N extends ToolName>(name: N, run: ToolRun<N>): (call: ToolCall) => Promise<ToolOutcome> {
  const typed = defineTypedTool(name, run);
  return async (call: ToolCall): Promise<ToolOutcome> => {
    const outcome = await typed(call);
    return { is_error: outcome.is_error, content: outcome.content };
  };
}
