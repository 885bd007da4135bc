import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toolDefinitions } from '../src/schemas/tool-specs';

// `npm run build` (first step): writes the Messages API tool definitions, JSON schemas made from
// the tools' zod input schemas (src/schemas/tool-specs.ts), to src/schemas/tool-definitions.json.
// The workflow and the model activity read that file, so no workflow run (or replay) builds the
// schemas again and the workflow bundle carries no zod. test/tool-definitions.test.ts fails
// when the committed file and the specs disagree.

export const TOOL_DEFINITIONS_FILE = join(__dirname, '..', 'src', 'schemas', 'tool-definitions.json');

/** The file's text: the definitions in their stable order, two-space JSON and a final newline. */
export const toolDefinitionsText = (): string => `${JSON.stringify(toolDefinitions(), null, 2)}\n`;

if (require.main === module) writeFileSync(TOOL_DEFINITIONS_FILE, toolDefinitionsText());
