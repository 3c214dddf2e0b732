/**
 * @module testing/append-child
 * Child process for the kill -9 test: appends pattern payloads from 4 concurrent loops and prints
 * `ack <index>` for each append once it resolved (i.e. once it is durable), until it is killed.
 * Usage: node append-child.js <dir> <firstIndex>
 */
import { openWal } from '../wal.js';
import { patternPayload } from './helpers.js';

const [dir, first] = process.argv.slice(2);
if (dir === undefined || first === undefined) throw new Error('usage: append-child <dir> <firstIndex>');
const wal = await openWal({ dir, groupCommitMs: 2, segmentBytes: 4 * 1024 * 1024 });
let next = Number(first);
process.stdout.write('ready\n');

async function loop(): Promise<void> {
  for (;;) {
    const index = next++;
    await wal.append(patternPayload(index, (index * 7919) % 300_000));
    process.stdout.write(`ack ${index}\n`);
  }
}
await Promise.all([loop(), loop(), loop(), loop()]);
