import { existsSync } from 'fs';
import path from 'path';
import { DEFAULT_MONGO_HEAP } from '../../config/env';
import { TOOLS_DIR } from '../paths';
import { spawnServer, type ServerProcess } from './process';

/** HotSpot's defaults are 5,000, 600 and 15,000. */
const JIT_FLAGS = [
  '-XX:Tier4InvocationThreshold=50000',
  '-XX:Tier4MinInvocationThreshold=6000',
  '-XX:Tier4CompileThreshold=150000',
];

export interface EmbeddedMongo extends ServerProcess {
  uri: string;
}

/**
 * The MongoDB-wire server (mongo-java-server, DESIGN §3): in memory, or persisted to an H2 file.
 * Port 0 picks a free port; the URI names the bound one.
 */
export async function startEmbeddedMongo(opts: {
  port?: number;
  h2File?: string;
  database?: string;
  /** Java's heap when persisting to disk; in memory (tests) the data is the heap, so no cap. */
  maxHeap?: string;
}): Promise<EmbeddedMongo> {
  const classes = path.join(TOOLS_DIR, 'mongo/classes');
  if (!existsSync(classes)) throw new Error('the MongoDB-wire server is not installed: run `npm run bootstrap`');
  // Persisting, the heap is reserved and touched as the JVM starts (-Xms = -Xmx): the server's RSS
  // is its configuration from the first minute, not a collector growing it towards the cap under
  // load (docs/decisions.md, "Embedded servers").
  const size = opts.maxHeap ?? DEFAULT_MONGO_HEAP;
  const heap = opts.h2File ? [`-Xms${size}`, `-Xmx${size}`, '-XX:+AlwaysPreTouch'] : [];
  const args = [
    '-Xss1m',
    // C2 for the hot code only: ten times the invocations before a method is compiled at the top
    // tier (loops still are, by their back-edges). In a burst on a fresh store, C2's compiler
    // threads took most of its CPU, competing with the work on a 2-core host; the client compiler
    // alone halved that again but doubled a list page's walk (docs/decisions.md, "Embedded servers").
    ...JIT_FLAGS,
    ...heap,
    '-cp',
    `${path.join(TOOLS_DIR, 'mongo/lib/*')}${path.delimiter}${classes}`,
    'MongoLauncher',
  ];
  args.push('--host', '127.0.0.1', '--port', String(opts.port ?? 0));
  if (opts.h2File) args.push('--h2', opts.h2File);
  let bound = '';
  const server = await spawnServer('MongoDB-wire server', 'java', args, (line) => {
    const m = /^LISTENING (\S+)$/.exec(line);
    if (m) bound = m[1];
    return Boolean(m);
  });
  return { ...server, uri: `mongodb://${bound}/${opts.database ?? 'foghorn'}` };
}
