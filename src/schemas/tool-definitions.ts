import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import definitions from './tool-definitions.json';
import type { ToolName } from './tool-specs';

/**
 * The tool definitions every model call offers, in their stable order (a stable cached prefix):
 * generated from tool-specs.ts at build time (scripts/tool-definitions.ts), so neither the
 * workflow nor the model activity builds JSON schemas at run time.
 */
export const TOOL_DEFINITIONS: readonly Tool[] = definitions as Tool[];

const NAMES: ReadonlySet<string> = new Set(TOOL_DEFINITIONS.map((t) => t.name));

/** True when `name` is a tool casework offers (the same names as TOOL_SPECS, without loading the specs). */
export function isOfferedTool(name: string): name is ToolName {
  return NAMES.has(name);
}
