import { TOOL_SPECS, type ToolInput, type ToolName } from '../../schemas/tool-specs';
import { ToolError, type ToolCall, type ToolContext, type ToolOutcome } from '../../schemas/tool-call';
import { describeIssues } from '../../schemas/issues';

/** A tool's body: validated input and context in, a JSON-safe result (or text) out. */
export type ToolRun<N extends ToolName> = (input: ToolInput<N>, context: ToolContext) => Promise<unknown>;

/** Renders a tool's result as the compact text the model reads. */
export function renderResult(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result);
}

/**
 * Wraps a tool body as an activity: validates input against the tool's zod schema, and turns
 * invalid input or a ToolError into a `tool_result` with `is_error: true` the model can read.
 * Any other error is thrown, so Temporal retries it.
 */
export function defineTool<N extends ToolName>(name: N, run: ToolRun<N>): (call: ToolCall) => Promise<ToolOutcome> {
  const spec = TOOL_SPECS[name];
  return async (call: ToolCall): Promise<ToolOutcome> => {
    const parsed = spec.input.safeParse(call.input ?? {});
    if (!parsed.success) {
      return { is_error: true, content: `Invalid input for ${name}: ${describeIssues(parsed.error)}` };
    }
    try {
      return { is_error: false, content: renderResult(await run(parsed.data as ToolInput<N>, call.context)) };
    } catch (error) {
      if (error instanceof ToolError) return { is_error: true, content: error.message };
      throw error;
    }
  };
}
