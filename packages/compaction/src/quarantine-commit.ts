/**
 * @module quarantine-commit
 * Taking corrupt objects out of a partition: copy each under `quarantine/` (quarantine.ts), then commit the
 * manifest generation that no longer names them by compare-and-swap, exactly like a compaction commit, then write
 * one `quarantine` audit event per object (compaction-audit.ts). Copy before commit, so a crash in between leaves
 * the object both live and copied (the next sweep redoes it), never gone.
 *
 * A quarantined data file's original is not deleted here: a reader that listed the partition (or read the previous
 * manifest) before the commit may still be reading it. It is unlisted from the commit on, and the clean-up of a
 * later sweep deletes it once the grace period has passed since its quarantine (compact-partition.ts).
 */
import { encodePartitionManifest, manifestKey, uuidv7 } from '@sluice/storage';
import type { CorruptReason, ObjectStore } from '@sluice/storage';
import { CompactionError } from './compaction-error.js';
import { compactionAuditKey, encodeQuarantineAudit } from './compaction-audit.js';
import { confirmCorrupt } from './corrupt-input.js';
import type { CorruptFinding } from './corrupt-input.js';
import { moveToQuarantine } from './quarantine.js';

const NS_PER_MS = 1_000_000n;

/** One corrupt object taken out of a partition's live set. */
export interface QuarantinedObject {
  /** The object's key (a data file, or the partition's `manifest.json`). */
  readonly key: string;
  readonly reason: CorruptReason;
  /** Where its bytes are kept now, or `null` when there was nothing to move (`manifest_missing_file`). */
  readonly quarantineKey: string | null;
  /** What failed, in one line. */
  readonly detail: string;
}

/** What a quarantine did to the partition. */
export type QuarantineResult =
  | {
      readonly status: 'quarantined';
      /** The manifest generation committed without the objects, or `null` when the live set did not change. */
      readonly generation: number | null;
      readonly quarantined: readonly QuarantinedObject[];
      /** Keys of the audit records written, one per object. */
      readonly auditKeys: readonly string[];
      /** Why an audit record could not be written (the quarantine stands). */
      readonly auditError?: string;
    }
  | {
      /** The manifest changed under this compactor: nothing was committed (copies made stay; they are harmless). */
      readonly status: 'lost_race';
      readonly generation: number;
    };

/** The partition being worked on. */
export interface QuarantineContext {
  readonly store: ObjectStore;
  /** `data/…/hour=HH/`. */
  readonly prefix: string;
  readonly tenant: string;
  readonly now: () => number;
}

/** The manifest to commit: over `base` (its ETag and generation), or the first one (`base: null`, generation 0). */
export interface ManifestCommit {
  readonly base: { readonly etag: string; readonly generation: number } | null;
  /** The generation to commit (ignored without a base: the first manifest is generation 0). */
  readonly generation: number;
  readonly files: readonly string[];
}

/** Objects to take out: some to copy under `quarantine/` first, some only to stop naming. */
export interface QuarantinePlan {
  readonly move: readonly {
    readonly key: string;
    readonly reason: CorruptReason;
    readonly detail: string;
    readonly bytes: Uint8Array;
  }[];
  readonly drop: readonly { readonly key: string; readonly reason: CorruptReason; readonly detail: string }[];
  /** `null` when the live set does not change (every quarantined file was already unlisted). */
  readonly commit: ManifestCommit | null;
}

/** Copies, commits and audits a {@link QuarantinePlan}. */
export async function quarantineAndCommit(ctx: QuarantineContext, plan: QuarantinePlan): Promise<QuarantineResult> {
  const { store, prefix } = ctx;
  const quarantined: QuarantinedObject[] = [];
  for (const m of plan.move) {
    const quarantineKey = await moveToQuarantine(store, m.key, m.bytes, {
      reason: m.reason,
      detail: m.detail,
      partition: prefix,
      nowMs: ctx.now(),
    });
    quarantined.push({ key: m.key, reason: m.reason, quarantineKey, detail: m.detail });
  }
  for (const d of plan.drop) quarantined.push({ key: d.key, reason: d.reason, quarantineKey: null, detail: d.detail });

  let generation: number | null = null;
  if (plan.commit !== null) {
    const { base, files } = plan.commit;
    generation = base === null ? 0 : plan.commit.generation;
    const committed = await store.putConditional(
      manifestKey(prefix),
      encodePartitionManifest({ generation, files: [...files] }),
      base === null ? { ifNoneMatch: '*' } : { ifMatch: base.etag },
    );
    if (committed.status === 'conflict') return { status: 'lost_race', generation };
  }

  const sizes = new Map(plan.move.map((m) => [m.key, m.bytes.byteLength]));
  const auditKeys: string[] = [];
  let auditError: string | undefined;
  for (const q of quarantined) {
    const ms = ctx.now();
    const nowNs = BigInt(Math.floor(ms)) * NS_PER_MS;
    const key = compactionAuditKey(ctx.tenant, nowNs, uuidv7(ms));
    try {
      await store.put(
        key,
        encodeQuarantineAudit({
          tenantId: ctx.tenant,
          timestampUnixNano: nowNs,
          partition: prefix,
          key: q.key,
          reason: q.reason,
          quarantineKey: q.quarantineKey,
          bytes: sizes.get(q.key) ?? null,
          generation,
          detail: q.detail,
        }),
      );
      auditKeys.push(key);
    } catch (e) {
      auditError ??= e instanceof Error ? e.message : String(e);
    }
  }
  return {
    status: 'quarantined',
    generation,
    quarantined,
    auditKeys,
    ...(auditError !== undefined ? { auditError } : {}),
  };
}

/**
 * Reads each corrupt data file whole and re-checks it on those bytes ({@link confirmCorrupt}), so what goes under
 * `quarantine/` is exactly the bytes that fail. Returns the plan's `move` entries.
 * @throws {@link CompactionError} when a file is gone, or reads cleanly the second time (then it is not corrupt:
 *   it stays, and the partition is retried next sweep). Storage faults propagate.
 */
export async function confirmFindings(
  ctx: QuarantineContext,
  findings: readonly CorruptFinding[],
): Promise<QuarantinePlan['move']> {
  const out: QuarantinePlan['move'][number][] = [];
  for (const f of findings) {
    const key = `${ctx.prefix}${f.name}`;
    const bytes = await ctx.store.get(key);
    if (bytes === null) throw new CompactionError(`${key} disappeared before it could be quarantined`);
    const again = await confirmCorrupt(bytes, ctx.tenant, f.site);
    if (again === null)
      throw new CompactionError(
        `${key} failed to read (${f.detail}) but its whole bytes read cleanly; not quarantined`,
      );
    out.push({ key, reason: again.reason, detail: again.detail, bytes });
  }
  return out;
}
