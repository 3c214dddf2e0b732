/**
 * @module mcp-arguments
 * Checks a tool call's `arguments` against the tool's own input schema (the one `tools/list` advertises), in
 * our words: an unknown argument, a missing one, or one of the wrong type is named with the type it must have.
 * The schemas are small and flat (string and integer properties), so this reads exactly that subset.
 */
import type { Result } from '@sluice/core';

/** One property of a tool's input schema. */
export interface ToolProperty {
  readonly type: 'string' | 'integer';
  readonly description?: string;
  readonly minimum?: number;
}

/** A tool as `tools/list` advertises it. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: {
    readonly type: 'object';
    readonly properties: Readonly<Record<string, ToolProperty>>;
    readonly required: readonly string[];
    readonly additionalProperties: false;
  };
}

/** What a JSON value is, for messages: `a string`, `a list`, `a mapping`, `null`. */
export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return `a ${typeof value}`;
}

function expected(property: ToolProperty): string {
  if (property.type === 'string') return 'a string';
  return property.minimum === undefined ? 'an integer' : `an integer >= ${property.minimum}`;
}

function fits(value: unknown, property: ToolProperty): boolean {
  if (property.type === 'string') return typeof value === 'string';
  return (
    typeof value === 'number' &&
    Number.isSafeInteger(value) &&
    (property.minimum === undefined || value >= property.minimum)
  );
}

/**
 * Validates `args` for `tool`.
 * @returns the arguments as a record, or a message naming the argument and the type it must have
 */
export function checkToolArguments(
  tool: ToolDefinition,
  args: unknown,
): Result<Readonly<Record<string, unknown>>, string> {
  const schema = tool.inputSchema;
  const names = Object.keys(schema.properties);
  if (args === undefined) args = {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { ok: false, error: `arguments of ${tool.name} must be a mapping, got ${describeJson(args)}` };
  }
  const record = args as Readonly<Record<string, unknown>>;
  for (const key of Object.keys(record)) {
    if (!(key in schema.properties)) {
      return {
        ok: false,
        error: `unknown argument '${key}' for ${tool.name}; its arguments are ${names.map((n) => `'${n}'`).join(', ')}`,
      };
    }
  }
  for (const name of names) {
    const property = schema.properties[name]!;
    const value = record[name];
    if (value === undefined) {
      if (schema.required.includes(name)) {
        return {
          ok: false,
          error: `argument '${name}' is required: ${expected(property)} (${property.description ?? name})`,
        };
      }
      continue;
    }
    if (!fits(value, property)) {
      return { ok: false, error: `argument '${name}' must be ${expected(property)}, got ${describeJson(value)}` };
    }
  }
  return { ok: true, value: record };
}
