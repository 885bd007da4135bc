import { loadConfig } from '../src/config';
import { migrate } from '../src/db/migrate';
import { openDatabase } from '../src/db/pool';
import { runMemoryBench } from '../src/dev/bench/memory';
import { runMemoryQualityBench } from '../src/dev/bench/memory-quality';
import { selectEmbedder } from '../src/memory/select-embedder';
import { selectModel } from '../src/model/select';

// `npm run bench:memory:quality`: the memory-quality benchmark (labelled facts and questions:
// recall@1/@3 for full-text, embeddings and hybrid; facts current; supersession pairs), then
// the latency benchmark with embeddings (10,000 customers x 50 notes by default, the query's
// embedding included). `--quality-only` skips the second; `--customers N` `--samples N` scale it.
// Held-out misses are printed only with `--show-held-out-misses`: choices are made on the
// tuning set, and the held-out figure is read once per candidate kept.
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? Number(args[i + 1]) : undefined;
  };
  const config = loadConfig();
  const embedder = selectEmbedder(config);
  if (!embedder) throw new Error('CASEWORK_EMBEDDINGS=off: there is nothing to benchmark; unset it for the local model');
  const model = config.ANTHROPIC_API_KEY ? selectModel(config) : undefined;
  const db = await openDatabase(config);
  try {
    await migrate(db.admin);
    await runMemoryQualityBench({
      pool: db.admin,
      appPool: db.app,
      embedder,
      model,
      out: console.log,
      json: args.includes('--json'),
      showHeldOutMisses: args.includes('--show-held-out-misses'),
    });
    if (!args.includes('--quality-only')) {
      console.log('');
      await runMemoryBench({
        pool: db.admin,
        appPool: db.app,
        embedder,
        customers: flag('--customers'),
        samples: flag('--samples'),
        out: console.log,
        json: args.includes('--json'),
      });
    }
  } finally {
    await db.close();
  }
}

main().catch((error: Error) => {
  console.error(`bench memory embeddings: ${error.message}`);
  process.exit(1);
});
