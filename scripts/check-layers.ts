import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

// `npm run lint` runs this: every relative import in src/ must point down the layers
// (docs/architecture.md, "Layers"). A layer may import its own folder and any lower layer.
// `--count` prints the number of upward imports instead of failing (used to measure a change).

const SRC = resolve(__dirname, '..', 'src');

/** Each top-level place in src/ and its layer; higher layers may import lower ones only. */
const LAYERS: Record<string, number> = {
  'errors.ts': 0,
  schemas: 0,
  context: 1,
  'config.ts': 2,
  'settings.ts': 2,
  db: 3,
  model: 3,
  desk: 3,
  commerce: 3,
  memory: 4,
  activities: 5,
  // Workflows import activities by type only (`import type`), which lint checks separately.
  workflows: 6,
  temporal: 6,
  observability: 6,
  client: 7,
  server: 7,
  'worker.ts': 7,
  main: 8,
  dev: 8,
  // Places of the first layout, so the same count can be taken of an older tree.
  tools: 0,
  bench: 8,
  demo: 8,
  devenv: 8,
};

function placeOf(file: string): string {
  const [top] = relative(SRC, file).split(sep);
  if (!top) throw new Error(`not under src/: ${file}`);
  return top;
}

function layerOf(file: string): number {
  const place = placeOf(file);
  const layer = LAYERS[place];
  if (layer === undefined) throw new Error(`src/${place} has no layer in scripts/check-layers.ts`);
  return layer;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Where a relative specifier lands: the .ts file, or the folder's index.ts. */
function resolveImport(from: string, specifier: string): string {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts'), base]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next shape
    }
  }
  return `${base}.ts`;
}

/** One import that points up a layer. */
export interface UpwardImport {
  from: string;
  to: string;
  typeOnly: boolean;
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'(\.[^']+)'|^\s*import\s+'(\.[^']+)'|require(?:\.resolve)?\('(\.[^']+)'\)/gm;

/** Every upward import in src/. */
export function upwardImports(): UpwardImport[] {
  const found: UpwardImport[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[3] ?? match[4] ?? match[5];
      if (!specifier) continue;
      const target = resolveImport(file, specifier);
      if (placeOf(target) === placeOf(file)) continue;
      if (layerOf(target) > layerOf(file)) {
        found.push({ from: relative(SRC, file), to: relative(SRC, target), typeOnly: Boolean(match[2]) });
      }
    }
  }
  return found;
}

if (require.main === module) {
  const up = upwardImports();
  if (process.argv.includes('--count')) {
    console.log(`${up.length} imports point up a layer`);
    for (const u of up) console.log(`  src/${u.from} -> src/${u.to}${u.typeOnly ? ' (type)' : ''}`);
  } else if (up.length) {
    console.error(`check-layers: ${up.length} imports point up a layer (docs/architecture.md, "Layers"):`);
    for (const u of up) console.error(`  src/${u.from} -> src/${u.to}`);
    process.exit(1);
  }
}
