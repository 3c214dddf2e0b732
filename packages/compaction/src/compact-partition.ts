/**
 * @module compact-partition
 * One partition's compaction (packages/compaction/README.md): sealed check, live set, lazy deletion of provably redundant
 * unlisted files, bounded-memory sorted merge into one new `<uuidv7>.parquet`, manifest generation n+1 by
 * compare-and-swap, and the `compaction` audit record. Object-store I/O only, plus a local scratch directory.
 */
import { tmpdir } from 'node:os';
import {
  LogsParquetWriter,
  MANIFEST_FILE_NAME,
  compareKeys,
  encodePartitionManifest,
  manifestKey,
  openParquetFile,
  parseDataKey,
  parsePartitionManifest,
  sourceFromStore,
  uuidv7,
  uuidv7Timestamp,
} from '@sluice/storage';
import type { ObjectStore, ParquetFileHandle, PartitionManifest } from '@sluice/storage';
import { compactionAuditKey, encodeCompactionAudit } from './compaction-audit.js';
import { PROVENANCE_KEY, encodeProvenance, provenanceOf } from './provenance.js';
import { mergeSortedInto } from './sorted-merge.js';

/** Default of `compaction.memory_budget_bytes` (the config schema's default; 64 MiB). */
const DEFAULT_MEMORY_BUDGET_BYTES = 64 * 1024 * 1024;

const HOUR_MS = 3_600_000;
const NS_PER_MS = 1_000_000n;

/** Options of {@link compactPartition}. */
export interface CompactPartitionOptions {
  /** Clock, ms since the epoch: sealing and file ages (read once at the start), output and audit names. */
  readonly now: () => number;
  /** `compaction.grace_secs`: late-data grace after the hour ends, and the minimum age before a file is deleted. */
  readonly graceSecs: number;
  /** Rows per output row group (default 65,536). */
  readonly rowGroupRows?: number;
  /** `compaction.memory_budget_bytes`: decoded bytes the merge may hold (default 64 MiB). */
  readonly memoryBudgetBytes?: number;
  /** Directory for spilled sort runs (default `os.tmpdir()`). */
  readonly scratchDir?: string;
  /**
   * Called before each manifest commit attempt: the generation-0 bootstrap of a partition without a manifest
   * (`output: null`) and the commit of the merged file. Tests use it to interleave compactors.
   */
  readonly beforeCommit?: (info: {
    readonly partition: string;
    readonly generation: number;
    readonly output: string | null;
  }) => Promise<void>;
  /**
   * Awaited once, only when the partition really is merged, right before the merge decodes anything: the sweep
   * borrows the merge's memory here, so sealed partitions that need no merge borrow nothing.
   */
  readonly beforeMerge?: () => Promise<void>;
  readonly signal?: AbortSignal;
}

/** What the lazy clean-up of unlisted files did in a partition. */
export interface CleanupReport {
  /** Keys deleted: inputs of a committed compaction or lost-race outputs, older than the grace period. */
  readonly deleted: readonly string[];
  /** Unlisted keys kept because nothing proves their rows are in a live file (never deleted; readers ignore them). */
  readonly stranded: readonly string[];
}

/** The outcome of {@link compactPartition}. */
export type PartitionOutcome =
  | {
      readonly status: 'committed';
      readonly partition: string;
      readonly generation: number;
      readonly inputs: readonly string[];
      readonly output: string;
      readonly rows: number;
      /** Key of the audit record, or `null` if writing it failed (`auditError` says why; the commit stands). */
      readonly auditKey: string | null;
      readonly auditError?: string;
      readonly cleanup: CleanupReport;
    }
  | {
      readonly status: 'noop';
      readonly partition: string;
      readonly reason: 'unsealed' | 'single_file';
      readonly cleanup: CleanupReport;
    }
  | {
      readonly status: 'lost_race';
      readonly partition: string;
      /** The generation this compactor tried to commit (0: the bootstrap manifest of an unmanifested partition). */
      readonly generation: number;
      /**
       * This compactor's output, now an orphan (deleted by a later sweep after the grace period), or `null` when
       * the race was lost at the bootstrap, before any output was written.
       */
      readonly output: string | null;
      readonly cleanup: CleanupReport;
    };

/** Thrown when a partition cannot be compacted as found (the sweep reports it as an `error` outcome). */
export class CompactionError extends Error {
  override readonly name = 'CompactionError';
}

const NO_CLEANUP: CleanupReport = { deleted: [], stranded: [] };

interface PartitionListing {
  /** Direct `*.parquet` children: name → size. */
  readonly files: Map<string, number>;
  /** Whether `manifest.json` was listed. */
  readonly hasManifest: boolean;
}

async function listPartition(
  store: ObjectStore,
  prefix: string,
  signal: AbortSignal | undefined,
): Promise<PartitionListing> {
  const files = new Map<string, number>();
  let hasManifest = false;
  for await (const e of store.list({ prefix, ...(signal !== undefined ? { signal } : {}) })) {
    if (e.kind !== 'object') continue;
    const name = e.key.slice(prefix.length);
    if (name === MANIFEST_FILE_NAME) hasManifest = true;
    else if (!name.includes('/') && name.endsWith('.parquet')) files.set(name, e.size);
  }
  return { files, hasManifest };
}

async function openFile(store: ObjectStore, prefix: string, name: string, size: number): Promise<ParquetFileHandle> {
  return openParquetFile(sourceFromStore(store, `${prefix}${name}`, size));
}

/**
 * Deletes unlisted files that provenance proves redundant and that are older than the grace period:
 * - named in a live compacted file's `replaces` (the rows live on in it) and that file was committed more than
 *   the grace ago (readers of the previous generation have finished);
 * - a compaction output that is not live (it lost its race or was itself replaced), created more than the grace
 *   ago (so a concurrent compactor is not still about to commit it).
 * Everything else unlisted is kept and reported as stranded; {@link compactPartition} then adopts it.
 */
async function cleanUp(
  store: ObjectStore,
  prefix: string,
  listing: PartitionListing,
  live: ReadonlySet<string>,
  liveFiles: ReadonlyMap<string, ParquetFileHandle>,
  nowMs: number,
  graceMs: number,
): Promise<CleanupReport> {
  const unlisted = [...listing.files.keys()].filter((n) => !live.has(n)).sort(compareKeys);
  if (unlisted.length === 0) return NO_CLEANUP;
  const retiredAt = new Map<string, number>();
  for (const [name, file] of liveFiles) {
    const committedMs = uuidv7Timestamp(name.slice(0, -'.parquet'.length));
    const p = provenanceOf(file);
    if (p === null || committedMs === null) continue;
    for (const r of p.replaces) retiredAt.set(r, Math.max(retiredAt.get(r) ?? 0, committedMs));
  }
  const deleted: string[] = [];
  const stranded: string[] = [];
  for (const name of unlisted) {
    const retired = retiredAt.get(name);
    let deletable: boolean;
    if (retired !== undefined) {
      deletable = nowMs - retired > graceMs;
    } else {
      const file = await openFile(store, prefix, name, listing.files.get(name) ?? 0).catch(() => null);
      const createdMs = uuidv7Timestamp(name.slice(0, -'.parquet'.length));
      if (file === null || provenanceOf(file) === null) {
        stranded.push(`${prefix}${name}`);
        continue;
      }
      deletable = createdMs !== null && nowMs - createdMs > graceMs;
    }
    if (deletable) {
      await store.delete(`${prefix}${name}`);
      deleted.push(`${prefix}${name}`);
    }
  }
  return { deleted, stranded };
}

/** The tenant and hour of a partition prefix, or `null` if it is not one. */
export function partitionOf(prefix: string): { readonly tenant: string; readonly hourStartMs: number } | null {
  if (!prefix.endsWith('/')) return null;
  const parts = parseDataKey(`${prefix}probe.parquet`);
  return parts === null ? null : { tenant: parts.tenant, hourStartMs: parts.hourStartMs };
}

/** A partition is sealed once its hour has ended and `graceSecs` more have passed. */
export function isSealed(hourStartMs: number, nowMs: number, graceSecs: number): boolean {
  return nowMs >= hourStartMs + HOUR_MS + graceSecs * 1000;
}

/**
 * Compacts one data partition (`data/tenant_id=<enc>/year=YYYY/month=MM/day=DD/hour=HH/`).
 *
 * A sealed partition (its hour ended more than `graceSecs` ago) with more than one live file (the manifest's
 * files, or every `*.parquet` when there is no manifest) is merged into one new file sorted by
 * (`resource.service.name` NULL first, `time_unix_nano`, input file, row ordinal), and manifest generation n+1
 * listing only that file is committed with `ifMatch` the manifest's ETag. A partition without a manifest first
 * gets generation 0 listing its current files (`ifNoneMatch: '*'`), so the result is generation 1 and an
 * uncommitted output is never mistaken for live data. Losing either race returns `lost_race` (a written output
 * stays as an orphan). Before compacting, unlisted files
 * proven redundant and older than the grace are deleted ({@link CleanupReport}). Rows are conserved exactly; a
 * partition with one live file is a no-op; nothing is ever deleted because of its age alone.
 *
 * @throws {@link CompactionError} for a malformed prefix, a manifest naming a missing file, or a row-count
 *   mismatch (nothing is committed); storage and Parquet errors propagate.
 * @example
 * const outcome = await compactPartition(store, 'data/tenant_id=acme/year=2026/month=01/day=01/hour=00/', {
 *   now: Date.now, graceSecs: 900,
 * });
 */
export async function compactPartition(
  store: ObjectStore,
  partitionPrefix: string,
  options: CompactPartitionOptions,
): Promise<PartitionOutcome> {
  const prefix = partitionPrefix;
  const parts = partitionOf(prefix);
  if (parts === null) throw new CompactionError(`not a data partition prefix: ${JSON.stringify(prefix)}`);
  const { signal } = options;
  const nowMs = options.now();
  const graceMs = options.graceSecs * 1000;
  if (!isSealed(parts.hourStartMs, nowMs, options.graceSecs))
    return { status: 'noop', partition: prefix, reason: 'unsealed', cleanup: NO_CLEANUP };

  const listing = await listPartition(store, prefix, signal);
  // As readers do, the manifest is fetched only when listed. One created after the listing makes the
  // ifNoneMatch commit below conflict (lost_race), so this cannot commit over it.
  const current = listing.hasManifest ? await store.getVersioned(manifestKey(prefix)) : null;
  let manifest: PartitionManifest | null = null;
  if (current !== null) {
    try {
      manifest = parsePartitionManifest(current.bytes);
    } catch (e) {
      throw new CompactionError(`${manifestKey(prefix)}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const liveNames = (manifest !== null ? [...manifest.files] : [...listing.files.keys()]).sort(compareKeys);
  for (const name of liveNames) {
    if (!listing.files.has(name))
      throw new CompactionError(`${manifestKey(prefix)} lists ${name}, which does not exist`);
  }
  const live = new Set(liveNames);
  const hasUnlisted = [...listing.files.keys()].some((n) => !live.has(n));
  if (liveNames.length <= 1 && !hasUnlisted)
    return { status: 'noop', partition: prefix, reason: 'single_file', cleanup: NO_CLEANUP };
  // Footers only (one range read each): row counts, row groups and provenance.
  const liveFiles = new Map<string, ParquetFileHandle>();
  for (const name of liveNames) liveFiles.set(name, await openFile(store, prefix, name, listing.files.get(name) ?? 0));

  const cleanup =
    manifest !== null && hasUnlisted
      ? await cleanUp(store, prefix, listing, live, liveFiles, nowMs, graceMs)
      : NO_CLEANUP;
  // An unlisted file without compaction provenance is a receiver file that landed after this partition was
  // compacted (late data) or after its generation-0 bootstrap: acknowledged rows that readers cannot see while
  // the manifest is authoritative. Adopt it into this compaction so it becomes live with the next generation.
  for (const key of cleanup.stranded) {
    const name = key.slice(prefix.length);
    liveNames.push(name);
    live.add(name);
    liveFiles.set(name, await openFile(store, prefix, name, listing.files.get(name) ?? 0));
  }
  liveNames.sort(compareKeys);
  if (liveNames.length <= 1) return { status: 'noop', partition: prefix, reason: 'single_file', cleanup };

  // An output must never sit unlisted in a partition without a manifest (readers would glob it as live, and a
  // crash before the commit would duplicate rows). So an unmanifested partition first gets generation 0 listing
  // exactly its current files, created with ifNoneMatch; the merged file is then committed over it with ifMatch.
  let baseEtag: string;
  let baseGeneration: number;
  if (current === null || manifest === null) {
    await options.beforeCommit?.({ partition: prefix, generation: 0, output: null });
    const boot = await store.putConditional(
      manifestKey(prefix),
      encodePartitionManifest({ generation: 0, files: liveNames }),
      { ifNoneMatch: '*' },
    );
    if (boot.status === 'conflict')
      return { status: 'lost_race', partition: prefix, generation: 0, output: null, cleanup };
    baseEtag = boot.etag;
    baseGeneration = 0;
  } else {
    baseEtag = current.etag;
    baseGeneration = manifest.generation;
  }

  // Provenance: this output replaces its inputs and whatever they replaced that still exists.
  const present = new Set(listing.files.keys());
  const replaces = new Set(liveNames);
  for (const file of liveFiles.values())
    for (const r of provenanceOf(file)?.replaces ?? []) if (present.has(r)) replaces.add(r);
  const generation = baseGeneration + 1;
  const inputs = liveNames.map((n) => liveFiles.get(n)!);
  const expectedRows = inputs.reduce((n, f) => n + f.numRows, 0);

  await options.beforeMerge?.();
  const writer = await LogsParquetWriter.create({
    ...(options.rowGroupRows !== undefined ? { rowGroupRows: options.rowGroupRows } : {}),
    keyValueMetadata: [
      { key: PROVENANCE_KEY, value: encodeProvenance({ generation, replaces: [...replaces].sort(compareKeys) }) },
    ],
  });
  const rows = await mergeSortedInto(inputs, writer, {
    scratchDir: options.scratchDir ?? tmpdir(),
    memoryBudgetBytes: options.memoryBudgetBytes ?? DEFAULT_MEMORY_BUDGET_BYTES,
    ...(signal !== undefined ? { signal } : {}),
  });
  if (rows !== expectedRows || writer.rows !== expectedRows) {
    throw new CompactionError(`${prefix}: merged ${rows} rows, expected ${expectedRows}; nothing committed`);
  }
  const bytes = writer.finish();
  // Named at write time: the name's UUIDv7 time is the output's age that other sweepers judge it by.
  const outputMs = options.now();
  const output = `${uuidv7(outputMs)}.parquet`;
  const outputKey = `${prefix}${output}`;
  signal?.throwIfAborted();
  await store.put(outputKey, bytes, signal !== undefined ? { signal } : {});
  await options.beforeCommit?.({ partition: prefix, generation, output });
  // Another sweeper deletes an uncommitted compaction output once it is older than the grace: commit only well
  // within it (a stalled compactor leaves an orphan instead of a manifest naming a deleted file).
  if (options.now() - outputMs > graceMs / 2) {
    throw new CompactionError(`${prefix}: ${output} was not committed within half the grace period; left as an orphan`);
  }

  const committed = await store.putConditional(
    manifestKey(prefix),
    encodePartitionManifest({ generation, files: [output] }),
    { ifMatch: baseEtag },
  );
  if (committed.status === 'conflict') return { status: 'lost_race', partition: prefix, generation, output, cleanup };
  if ((await store.head(outputKey)) === null) {
    // Defence in depth: the output vanished before the commit landed. Re-publish the previous live set.
    await store.putConditional(
      manifestKey(prefix),
      encodePartitionManifest({ generation: generation + 1, files: liveNames }),
      { ifMatch: committed.etag },
    );
    throw new CompactionError(
      `${prefix}: ${output} disappeared before its commit; the previous live set was re-published`,
    );
  }

  const commitMs = options.now();
  const nowNs = BigInt(Math.floor(commitMs)) * NS_PER_MS;
  const auditKey = compactionAuditKey(parts.tenant, nowNs, uuidv7(commitMs));
  const audit = encodeCompactionAudit({
    tenantId: parts.tenant,
    timestampUnixNano: nowNs,
    partition: prefix,
    generation,
    inputs: liveNames,
    output,
    rows,
    inputBytes: liveNames.reduce((n, name) => n + (listing.files.get(name) ?? 0), 0),
    outputBytes: bytes.byteLength,
  });
  const base = {
    status: 'committed',
    partition: prefix,
    generation,
    inputs: liveNames,
    output,
    rows,
    cleanup,
  } as const;
  try {
    await store.put(auditKey, audit);
    return { ...base, auditKey };
  } catch (e) {
    return { ...base, auditKey: null, auditError: e instanceof Error ? e.message : String(e) };
  }
}
