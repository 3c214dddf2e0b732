/**
 * @module compact-partition
 * One partition's compaction (packages/compaction/README.md): sealed check, live set, lazy deletion of provably redundant
 * unlisted files, bounded-memory sorted merge into one new `<uuidv7>.parquet`, manifest generation n+1 by
 * compare-and-swap, and the `compaction` audit record. Object-store I/O only, plus a local scratch directory.
 *
 * A corrupt input (a manifest that is not one, a manifest naming a missing file, a data file that does not decode
 * or holds another tenant's rows) is quarantined instead of failing the partition at every sweep
 * (quarantine-commit.ts): that run ends with the `quarantined` outcome, and the next sweep compacts what is left.
 * A storage fault is never taken for corruption (corrupt-input.ts): it fails the run, which is retried.
 */
import { tmpdir } from 'node:os';
import {
  LogsParquetWriter,
  MANIFEST_FILE_NAME,
  compareKeys,
  encodePartitionManifest,
  manifestKey,
  parseDataKey,
  uuidv7,
  uuidv7Timestamp,
} from '@sluice/storage';
import type { ObjectStore, ParquetFileHandle, PartitionManifest } from '@sluice/storage';
import { CompactionError } from './compaction-error.js';
import { compactionAuditKey, encodeCompactionAudit } from './compaction-audit.js';
import { newerSchemaVersion, openInput } from './corrupt-input.js';
import type { CorruptFinding } from './corrupt-input.js';
import { PROVENANCE_KEY, encodeProvenance, provenanceOf } from './provenance.js';
import { quarantinedFiles } from './quarantine.js';
import { confirmFindings, quarantineAndCommit } from './quarantine-commit.js';
import type { QuarantineContext, QuarantineResult, QuarantinedObject } from './quarantine-commit.js';
import { readManifest } from './read-manifest.js';
import { rebuildManifest } from './rebuild-manifest.js';
import { MergeInputError, mergeSortedInto } from './sorted-merge.js';

export { CompactionError } from './compaction-error.js';

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
  /**
   * `compaction.open_hour_min_file_age_secs`: in a partition that is not sealed yet, merge the level-0 (sink) files
   * at least this old, by their UUIDv7 name, into one more level-1 file (docs/design/freshness.md). Absent or 0:
   * unsealed partitions are left alone.
   */
  readonly openHourMinFileAgeSecs?: number;
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
      /**
       * `unsealed`: open hour, open-hour compaction off; `single_file`: nothing to merge; `too_young`: open hour,
       * fewer than two level-0 files old enough to merge.
       */
      readonly reason: 'unsealed' | 'single_file' | 'too_young';
      readonly cleanup: CleanupReport;
    }
  | {
      readonly status: 'lost_race';
      readonly partition: string;
      /** The generation this compactor tried to commit (0: the bootstrap manifest of an unmanifested partition). */
      readonly generation: number;
      /**
       * This compactor's output, now an orphan (deleted by a later sweep after the grace period), or `null` when
       * the race was lost before any output was written (at the bootstrap, or committing a quarantine).
       */
      readonly output: string | null;
      readonly cleanup: CleanupReport;
    }
  | {
      /**
       * Corrupt objects were taken out of the live set (copied under `quarantine/`, or, for a name the manifest
       * lists but nothing holds, just no longer named). Nothing was merged: the next sweep compacts what is left.
       */
      readonly status: 'quarantined';
      readonly partition: string;
      /** The manifest generation committed without them, or `null` when the live set did not change. */
      readonly generation: number | null;
      readonly quarantined: readonly QuarantinedObject[];
      /** Keys of the `quarantine` audit records, one per object. */
      readonly auditKeys: readonly string[];
      /** Why an audit record could not be written (the quarantine stands). */
      readonly auditError?: string;
      readonly cleanup: CleanupReport;
    };

const NO_CLEANUP: CleanupReport = { deleted: [], stranded: [] };
const NO_CLEANUP_RESULT: CleanupResult = { deleted: [], stranded: [], corrupt: [] };

/** The outcome of a quarantine run. */
function quarantineOutcome(prefix: string, r: QuarantineResult, cleanup: CleanupReport): PartitionOutcome {
  if (r.status === 'lost_race')
    return { status: 'lost_race', partition: prefix, generation: r.generation, output: null, cleanup };
  return { ...r, partition: prefix, cleanup };
}

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

/** What {@link cleanUp} did, plus the unlisted files it found corrupt (to be quarantined). */
interface CleanupResult extends CleanupReport {
  readonly corrupt: readonly CorruptFinding[];
}

/**
 * Deletes unlisted files that provenance proves redundant and that are older than the grace period:
 * - named in a live compacted file's `replaces` (the rows live on in it) and that file was committed more than
 *   the grace ago (readers of the previous generation have finished);
 * - a compaction output that is not live (it lost its race or was itself replaced), created more than the grace
 *   ago (so a concurrent compactor is not still about to commit it);
 * - a quarantined file (its record under `quarantine/` names it, with its size) once the grace has passed since
 *   its quarantine (readers that listed it before have finished); until then it is left alone.
 * An unlisted file that does not decode is reported as corrupt. Everything else unlisted is kept and reported as
 * stranded; {@link compactPartition} then adopts it.
 */
async function cleanUp(
  store: ObjectStore,
  prefix: string,
  tenant: string,
  listing: PartitionListing,
  live: ReadonlySet<string>,
  liveFiles: ReadonlyMap<string, ParquetFileHandle>,
  nowMs: number,
  graceMs: number,
  signal: AbortSignal | undefined,
): Promise<CleanupResult> {
  const unlisted = [...listing.files.keys()].filter((n) => !live.has(n)).sort(compareKeys);
  if (unlisted.length === 0) return NO_CLEANUP_RESULT;
  // Listed only when some unlisted file is not a retired input: the common case (inputs waiting out their grace
  // after a compaction) costs no extra request.
  let quarantined: Awaited<ReturnType<typeof quarantinedFiles>> | undefined;
  const retiredAt = new Map<string, number>();
  for (const [name, file] of liveFiles) {
    const committedMs = uuidv7Timestamp(name.slice(0, -'.parquet'.length));
    const p = provenanceOf(file);
    if (p === null || committedMs === null) continue;
    for (const r of p.replaces) retiredAt.set(r, Math.max(retiredAt.get(r) ?? 0, committedMs));
  }
  const deleted: string[] = [];
  const stranded: string[] = [];
  const corrupt: CorruptFinding[] = [];
  for (const name of unlisted) {
    const retired = retiredAt.get(name);
    const size = listing.files.get(name) ?? 0;
    let deletable: boolean;
    if (retired !== undefined) {
      deletable = nowMs - retired > graceMs;
    } else {
      quarantined ??= await quarantinedFiles(store, prefix, signal);
      const q = quarantined.get(name);
      if (q !== undefined && q.bytes === size) {
        deletable = nowMs - q.atMs > graceMs;
      } else {
        const opened = await openInput(store, prefix, name, size, tenant);
        if (opened.status === 'corrupt') {
          corrupt.push(opened.finding);
          continue;
        }
        if (provenanceOf(opened.file) === null) {
          stranded.push(`${prefix}${name}`);
          continue;
        }
        const createdMs = uuidv7Timestamp(name.slice(0, -'.parquet'.length));
        deletable = createdMs !== null && nowMs - createdMs > graceMs;
      }
    }
    if (deletable) {
      await store.delete(`${prefix}${name}`);
      deleted.push(`${prefix}${name}`);
    }
  }
  return { deleted, stranded, corrupt };
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
 * Corrupt inputs are quarantined instead (outcome `quarantined`, nothing merged in that run):
 * - a manifest that does not parse, names a foreign name or has an unusable generation: moved under
 *   `quarantine/` and replaced by one rebuilt from the files' provenance;
 * - a manifest naming a file that does not exist: rewritten without the name;
 * - a data file whose footer, schema or pages do not decode, or that holds another tenant's rows: copied under
 *   `quarantine/` and left out of the next manifest generation (the original is deleted after the grace).
 *
 * @throws {@link CompactionError} for a malformed prefix, a row-count mismatch, a commit that would come too
 *   late, or a file that failed once but read cleanly when re-read whole (nothing is committed); storage errors
 *   (`StorageUnavailableError` and whatever else the store throws) propagate and never quarantine anything.
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
  const sealed = isSealed(parts.hourStartMs, nowMs, options.graceSecs);
  const minAgeMs = (options.openHourMinFileAgeSecs ?? 0) * 1000;
  if (!sealed && !(minAgeMs > 0)) return { status: 'noop', partition: prefix, reason: 'unsealed', cleanup: NO_CLEANUP };
  const ctx: QuarantineContext = { store, prefix, tenant: parts.tenant, now: options.now };

  const listing = await listPartition(store, prefix, signal);
  // As readers do, the manifest is fetched only when listed. One created after the listing makes the
  // ifNoneMatch commit below conflict (lost_race), so this cannot commit over it.
  const current = listing.hasManifest ? await store.getVersioned(manifestKey(prefix)) : null;
  let manifest: PartitionManifest | null = null;
  if (current !== null) {
    const read = readManifest(current.bytes);
    if (read.status === 'corrupt') {
      const rebuilt = await rebuildManifest(
        ctx,
        {
          bytes: current.bytes,
          etag: current.etag,
          reason: read.reason,
          detail: read.detail,
          generation: read.generation,
        },
        listing.files,
        signal,
      );
      return quarantineOutcome(prefix, rebuilt, NO_CLEANUP);
    }
    manifest = read.manifest;
  }
  const liveNames = (manifest !== null ? [...manifest.files] : [...listing.files.keys()]).sort(compareKeys);
  if (current !== null && manifest !== null) {
    // A name absent from the listing may be a file committed by another compactor between the listing and the
    // manifest GET (files are written before any manifest names them): HEAD it before calling it missing.
    const missing: string[] = [];
    for (const name of liveNames) {
      if (listing.files.has(name)) continue;
      const head = await store.head(`${prefix}${name}`);
      if (head !== null) listing.files.set(name, head.size);
      else missing.push(name);
    }
    if (missing.length > 0) {
      const gone = new Set(missing);
      const dropped = await quarantineAndCommit(ctx, {
        move: [],
        drop: missing.map((name) => ({
          key: `${prefix}${name}`,
          reason: 'manifest_missing_file',
          detail: `${manifestKey(prefix)} generation ${manifest.generation} names it; it does not exist`,
        })),
        commit: {
          base: { etag: current.etag, generation: manifest.generation },
          generation: manifest.generation + 1,
          files: liveNames.filter((n) => !gone.has(n)),
        },
      });
      return quarantineOutcome(prefix, dropped, NO_CLEANUP);
    }
  }
  const live = new Set(liveNames);
  const hasUnlisted = [...listing.files.keys()].some((n) => !live.has(n));
  if (liveNames.length <= 1 && !hasUnlisted)
    return { status: 'noop', partition: prefix, reason: 'single_file', cleanup: NO_CLEANUP };
  // The live set before this run changes it: what a quarantine commits over, minus the corrupt files.
  let baseFiles: readonly string[] = liveNames.slice();
  const quarantineLive = async (
    findings: readonly CorruptFinding[],
    base: ManifestBase | null,
    cleanup: CleanupReport,
  ) => {
    const moves = await confirmFindings(ctx, findings);
    const bad = new Set(findings.map((f) => f.name));
    const files = baseFiles.filter((n) => !bad.has(n));
    const r = await quarantineAndCommit(ctx, {
      move: moves,
      drop: [],
      commit:
        files.length === baseFiles.length && base !== null
          ? null
          : { base, generation: base === null ? 0 : base.generation + 1, files },
    });
    return quarantineOutcome(prefix, r, cleanup);
  };
  const manifestBase: ManifestBase | null =
    current !== null && manifest !== null ? { etag: current.etag, generation: manifest.generation } : null;

  // Footers only (one range read each): row counts, row groups and provenance; each checked to be one of ours.
  const liveFiles = new Map<string, ParquetFileHandle>();
  const corruptLive: CorruptFinding[] = [];
  for (const name of liveNames) {
    const opened = await openInput(store, prefix, name, listing.files.get(name) ?? 0, parts.tenant);
    if (opened.status === 'corrupt') corruptLive.push(opened.finding);
    else liveFiles.set(name, opened.file);
  }
  if (corruptLive.length > 0) return quarantineLive(corruptLive, manifestBase, NO_CLEANUP);

  const cleanup =
    manifest !== null && hasUnlisted
      ? await cleanUp(store, prefix, parts.tenant, listing, live, liveFiles, nowMs, graceMs, signal)
      : NO_CLEANUP_RESULT;
  const report: CleanupReport = { deleted: cleanup.deleted, stranded: cleanup.stranded };
  // Corrupt unlisted files are not live: quarantining them changes no manifest, but keeps them from being
  // adopted as late data.
  if (cleanup.corrupt.length > 0) return quarantineLive(cleanup.corrupt, manifestBase, report);
  // An unlisted file without compaction provenance is a receiver file that landed after this partition was
  // compacted (late data) or after its generation-0 bootstrap: acknowledged rows that readers cannot see while
  // the manifest is authoritative. Adopt it into this compaction so it becomes live with the next generation.
  for (const key of cleanup.stranded) {
    const name = key.slice(prefix.length);
    const opened = await openInput(store, prefix, name, listing.files.get(name) ?? 0, parts.tenant);
    if (opened.status === 'corrupt') return quarantineLive([opened.finding], manifestBase, report);
    liveNames.push(name);
    live.add(name);
    liveFiles.set(name, opened.file);
  }
  liveNames.sort(compareKeys);
  // What this run merges. A sealed hour: every live file, into one. An open hour: only level-0 (sink) files old
  // enough that a live tail has read them (docs/design/freshness.md); level-1 outputs wait for the hour to seal,
  // so each byte is rewritten at most twice per hour instead of once per pass.
  const inputNames = sealed
    ? liveNames.slice()
    : liveNames.filter((n) => {
        const createdMs = uuidv7Timestamp(n.slice(0, -'.parquet'.length));
        return provenanceOf(liveFiles.get(n)!) === null && createdMs !== null && nowMs - createdMs >= minAgeMs;
      });
  const adopted = cleanup.stranded.map((k) => k.slice(prefix.length));
  if (inputNames.length <= 1) {
    // Nothing to merge, but adopted late files must not stay invisible: list them as they are.
    if (adopted.length > 0 && current !== null && manifest !== null) {
      const r = await commitAdoption(store, prefix, { etag: current.etag, generation: manifest.generation }, liveNames);
      if (r === 'conflict')
        return {
          status: 'lost_race',
          partition: prefix,
          generation: manifest.generation + 1,
          output: null,
          cleanup: report,
        };
    }
    return { status: 'noop', partition: prefix, reason: sealed ? 'single_file' : 'too_young', cleanup: report };
  }

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
      return { status: 'lost_race', partition: prefix, generation: 0, output: null, cleanup: report };
    baseEtag = boot.etag;
    baseGeneration = 0;
    baseFiles = liveNames.slice();
    // A sink file stored after our listing whose sink looked for a manifest before this bootstrap landed is in
    // neither (manifest-append in @sluice/sink): list again and make it live now rather than at the next sweep.
    const late = await sinkFilesSince(store, prefix, parts.tenant, new Set(liveNames), signal);
    if (late.length > 0) {
      const files = [...liveNames, ...late].sort(compareKeys);
      const r = await commitAdoption(store, prefix, { etag: baseEtag, generation: 0 }, files);
      if (r === 'conflict')
        return { status: 'lost_race', partition: prefix, generation: 1, output: null, cleanup: report };
      baseEtag = r.etag;
      baseGeneration = 1;
      baseFiles = files;
    }
  } else {
    baseEtag = current.etag;
    baseGeneration = manifest.generation;
  }

  // Provenance: this output replaces its inputs and whatever they replaced that still exists.
  const present = new Set(listing.files.keys());
  const replaces = new Set(inputNames);
  for (const name of inputNames)
    for (const r of provenanceOf(liveFiles.get(name)!)?.replaces ?? []) if (present.has(r)) replaces.add(r);
  const generation = baseGeneration + 1;
  const inputs = inputNames.map((n) => liveFiles.get(n)!);
  const expectedRows = inputs.reduce((n, f) => n + f.numRows, 0);

  await options.beforeMerge?.();
  const writer = await LogsParquetWriter.create({
    ...(options.rowGroupRows !== undefined ? { rowGroupRows: options.rowGroupRows } : {}),
    keyValueMetadata: [
      { key: PROVENANCE_KEY, value: encodeProvenance({ generation, replaces: [...replaces].sort(compareKeys) }) },
    ],
  });
  let rows: number;
  try {
    rows = await mergeSortedInto(inputs, writer, {
      scratchDir: options.scratchDir ?? tmpdir(),
      memoryBudgetBytes: options.memoryBudgetBytes ?? DEFAULT_MEMORY_BUDGET_BYTES,
      tenant: parts.tenant,
      ...(signal !== undefined ? { signal } : {}),
    });
  } catch (e) {
    if (!(e instanceof MergeInputError)) throw e;
    const name = inputNames[e.input]!;
    const newer = newerSchemaVersion(liveFiles.get(name) ?? null);
    if (newer !== null && e.reason !== 'tenant_mismatch')
      throw new CompactionError(
        `${prefix}${name} has schema version ${newer}, newer than this build reads: ${e.detail}`,
      );
    // The merge wrote nothing to the store; the base is the manifest read above or the bootstrap just committed.
    return quarantineLive(
      [{ name, reason: e.reason, detail: e.detail, site: e.site }],
      { etag: baseEtag, generation: baseGeneration },
      report,
    );
  }
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

  const committed = await commitMerge(
    store,
    prefix,
    { etag: baseEtag, generation: baseGeneration, files: baseFiles },
    inputNames,
    liveNames,
    output,
    () => options.now() - outputMs > graceMs / 2,
  );
  if (committed === 'conflict') return { status: 'lost_race', partition: prefix, generation, output, cleanup: report };
  if (committed === 'stalled')
    throw new CompactionError(`${prefix}: ${output} was not committed within half the grace period; left as an orphan`);
  if ((await store.head(outputKey)) === null) {
    // Defence in depth: the output vanished before the commit landed. Re-publish the previous live set.
    await store.putConditional(
      manifestKey(prefix),
      encodePartitionManifest({ generation: committed.generation + 1, files: committed.previous }),
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
    generation: committed.generation,
    inputs: inputNames,
    output,
    rows,
    inputBytes: inputNames.reduce((n, name) => n + (listing.files.get(name) ?? 0), 0),
    outputBytes: bytes.byteLength,
  });
  const base = {
    status: 'committed',
    partition: prefix,
    generation: committed.generation,
    inputs: inputNames,
    output,
    rows,
    cleanup: report,
  } as const;
  try {
    await store.put(auditKey, audit);
    return { ...base, auditKey };
  } catch (e) {
    return { ...base, auditKey: null, auditError: e instanceof Error ? e.message : String(e) };
  }
}

/** The manifest generation a commit goes over: its ETag and generation. */
interface ManifestBase {
  readonly etag: string;
  readonly generation: number;
}

/** Compare-and-swap rounds a merge's commit rebases over concurrent commits before it counts as a lost race. */
const MAX_COMMIT_ROUNDS = 8;

/**
 * Commits `output` in place of `inputs`: the next generation lists the base's files without the inputs, plus the
 * output, plus the live files this run adopted but did not merge. When another writer committed first (a sink
 * adding a file, or another compactor), the commit is redone over the new generation as long as it still lists
 * every input: replacing exactly those files by the file that holds exactly their rows conserves every row
 * whatever else the other writer changed. Otherwise the race is lost and the output is an orphan.
 */
async function commitMerge(
  store: ObjectStore,
  prefix: string,
  first: ManifestBase & { readonly files: readonly string[] },
  inputs: readonly string[],
  live: readonly string[],
  output: string,
  stalled: () => boolean,
): Promise<
  { readonly etag: string; readonly generation: number; readonly previous: readonly string[] } | 'conflict' | 'stalled'
> {
  const merged = new Set(inputs);
  let base = first;
  for (let round = 0; round < MAX_COMMIT_ROUNDS; round++) {
    // Another sweeper deletes an uncommitted output once it is older than the grace: commit only well within it.
    if (stalled()) return 'stalled';
    const inBase = new Set(base.files);
    const previous = [...base.files, ...live.filter((n) => !inBase.has(n) && !merged.has(n))].sort(compareKeys);
    const files = [...previous.filter((n) => !merged.has(n)), output].sort(compareKeys);
    const generation = base.generation + 1;
    const put = await store.putConditional(manifestKey(prefix), encodePartitionManifest({ generation, files }), {
      ifMatch: base.etag,
    });
    if (put.status === 'ok') return { etag: put.etag, generation, previous };
    const now = await store.getVersioned(manifestKey(prefix));
    if (now === null) return 'conflict';
    const read = readManifest(now.bytes);
    if (read.status !== 'ok') return 'conflict';
    const listed = new Set(read.manifest.files);
    if (!inputs.every((n) => listed.has(n))) return 'conflict';
    base = { etag: now.etag, generation: read.manifest.generation, files: read.manifest.files };
  }
  return 'conflict';
}

/** Commits `files` (the live set plus adopted late files) as the generation after `base`. */
async function commitAdoption(
  store: ObjectStore,
  prefix: string,
  base: ManifestBase,
  files: readonly string[],
): Promise<{ readonly etag: string } | 'conflict'> {
  const put = await store.putConditional(
    manifestKey(prefix),
    encodePartitionManifest({ generation: base.generation + 1, files: [...files].sort(compareKeys) }),
    { ifMatch: base.etag },
  );
  return put.status === 'ok' ? { etag: put.etag } : 'conflict';
}

/**
 * Data files in the partition that are not in `known` and are not compaction outputs (those are never live
 * until a manifest names them): sink files that landed after `known` was listed. One that does not decode is
 * left for the next sweep's clean-up, which quarantines it.
 */
async function sinkFilesSince(
  store: ObjectStore,
  prefix: string,
  tenant: string,
  known: ReadonlySet<string>,
  signal: AbortSignal | undefined,
): Promise<string[]> {
  const again = await listPartition(store, prefix, signal);
  const late: string[] = [];
  for (const [name, size] of again.files) {
    if (known.has(name)) continue;
    const opened = await openInput(store, prefix, name, size, tenant);
    if (opened.status === 'ok' && provenanceOf(opened.file) === null) late.push(name);
  }
  return late;
}
