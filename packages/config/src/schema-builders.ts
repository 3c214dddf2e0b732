/**
 * @module schema-builders
 * Builders for the one strict zod schema. A *leaf* is a scalar key: it coerces its raw value with the
 * `scalar-value` rules and falls back to its default when the value is absent. A *section* is a strict object
 * (an unknown key is an issue) that defaults to `{}` when absent, so an empty file is all defaults.
 *
 * Both builders record what they built (leaf metadata, section shapes) in module-private registries, so the
 * key reference (`configKeyReference`) and the env-only mode's variable names are derived from the schema
 * itself and cannot drift from it.
 */
import { z } from 'zod';
import type { Result } from '@sluice/core';

/** What the key reference says about one leaf key. */
export interface LeafMeta {
  /** What the value must be, for humans: `integer >= 1`, `local | s3`, `host:port`. */
  readonly constraint: string;
  /** The default as it would be written in YAML terms (`null` = unset). */
  readonly defaultValue: string | number | boolean | null;
  /** One sentence: what the key controls, with its unit. */
  readonly description: string;
  /** A credential: recommended to be given as an `${env:…}` reference, never echoed in messages. */
  readonly secret: boolean;
}

/** Reports a cross-field problem at `path` (relative to the section the rule is attached to). */
export type ReportIssue = (path: readonly string[], message: string) => void;

/**
 * A cross-field rule of a section. It runs even when some keys of the section are invalid, so that every
 * problem is reported in one pass; `value` is therefore untyped and the rule must check what it reads.
 */
export type SectionRule = (value: Readonly<Record<string, unknown>>, report: ReportIssue) => void;

const leafMeta = new WeakMap<z.ZodType, LeafMeta>();
const sectionShapes = new WeakMap<z.ZodType, Readonly<Record<string, z.ZodType>>>();

/**
 * A scalar key: `parse` turns a present raw value into `T` or a message; an absent value yields `defaultValue`.
 */
export function leaf<T>(
  meta: Omit<LeafMeta, 'defaultValue' | 'secret'> & { readonly secret?: boolean },
  defaultValue: T & (string | number | boolean | null),
  parse: (raw: unknown) => Result<T, string>,
) {
  const schema = z
    .unknown()
    .transform((raw, ctx) => {
      const r = parse(raw);
      if (r.ok) return r.value;
      ctx.addIssue({ code: 'custom', message: r.error });
      return z.NEVER;
    })
    .default(defaultValue as never);
  leafMeta.set(schema, { ...meta, defaultValue, secret: meta.secret ?? false });
  return schema;
}

/** A strict section: unknown keys are issues; absent means "all defaults"; `rule` adds cross-field checks. */
export function section<S extends Record<string, z.ZodType>>(shape: S, rule?: SectionRule) {
  const strict = z.strictObject(shape);
  const checked =
    rule === undefined
      ? strict
      : strict.superRefine(
          (value, ctx) => {
            rule(value as Readonly<Record<string, unknown>>, (path, message) => {
              ctx.addIssue({ code: 'custom', path: [...path], message });
            });
          },
          // Run even when a key of this section failed: all problems are reported at once.
          { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
        );
  const schema = checked.prefault({} as z.input<typeof checked>);
  sectionShapes.set(schema, shape);
  return schema;
}

/** A node of the schema's key tree, as the builders recorded it. */
export type KeyNode =
  | { readonly kind: 'leaf'; readonly meta: LeafMeta }
  | { readonly kind: 'section'; readonly children: ReadonlyMap<string, KeyNode> };

/**
 * Recovers the key tree of a schema built with {@link leaf} and {@link section}.
 * @throws Error when the schema holds a part not built here (a programming error in the schema module).
 */
export function keyTreeOf(schema: z.ZodType): KeyNode {
  const meta = leafMeta.get(schema);
  if (meta !== undefined) return { kind: 'leaf', meta };
  const shape = sectionShapes.get(schema);
  if (shape === undefined) throw new Error('config schema: a part was not built with leaf() or section()');
  const children = new Map<string, KeyNode>();
  for (const [key, child] of Object.entries(shape)) children.set(key, keyTreeOf(child));
  return { kind: 'section', children };
}
