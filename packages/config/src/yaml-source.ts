/**
 * @module yaml-source
 * Parses config-file text into a plain tree of mappings and scalars. A syntax problem becomes an issue with its
 * line and column and a message of our own: the YAML library's text (code frames, API names) never reaches the
 * operator. Keys are plain strings (a complex key is an issue). Only one document is allowed.
 */
import { parseDocument } from 'yaml';
import type { ErrorCode } from 'yaml';
import type { Result } from '@sluice/core';
import type { ConfigIssue } from './config-issue.js';

const SYNTAX_MESSAGES: Readonly<Record<ErrorCode, string>> = {
  ALIAS_PROPS: 'an alias (*name) cannot carry a tag or an anchor',
  BAD_ALIAS: 'invalid alias (*name)',
  BAD_DIRECTIVE: 'invalid % directive',
  BAD_DQ_ESCAPE: 'invalid escape sequence in a double-quoted string',
  BAD_INDENT: 'bad indentation, or an unclosed [ or {',
  BAD_PROP_ORDER: 'an anchor or tag is in the wrong place',
  BAD_SCALAR_START: 'a plain value cannot start with this character; quote the value',
  BLOCK_AS_IMPLICIT_KEY: 'bad indentation: a nested block must be indented under a key ending in ":"',
  BLOCK_IN_FLOW: 'an indented block cannot appear inside { } or [ ]',
  DUPLICATE_KEY: 'duplicate key',
  IMPOSSIBLE: 'unreadable YAML',
  KEY_OVER_1024_CHARS: 'a key is longer than 1024 characters',
  MISSING_CHAR: 'a closing quote or bracket is missing',
  MULTILINE_IMPLICIT_KEY: 'bad indentation or a missing ": " after a key',
  MULTIPLE_ANCHORS: 'a value has more than one anchor',
  MULTIPLE_DOCS: 'the file holds more than one YAML document ("---"); a config file holds one',
  MULTIPLE_TAGS: 'a value has more than one tag',
  NON_STRING_KEY: 'keys must be plain names, not lists or mappings',
  RESOURCE_EXHAUSTION: 'too many alias expansions',
  TAB_AS_INDENT: 'tabs are not allowed as indentation; use spaces',
  TAG_RESOLVE_FAILED: 'unknown tag',
  UNEXPECTED_TOKEN:
    'unexpected character; quote values that contain { } [ ] , # or ": " (inside { } write "${env:NAME}" with quotes)',
  BAD_COLLECTION_TYPE: 'a value has the wrong collection type for its tag',
};

function syntaxIssue(code: ErrorCode, line: number | undefined, col: number | undefined): ConfigIssue {
  const at = line === undefined ? '' : col === undefined ? ` at line ${line}` : ` at line ${line}, column ${col}`;
  return { path: '', message: `invalid YAML${at}: ${SYNTAX_MESSAGES[code]}` };
}

function describeTop(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? 'text' : `a ${typeof value}`;
}

/**
 * Parses `fileText`. An empty file (or one holding only comments) is an empty mapping.
 * @returns the plain tree, or syntax issues (at most one per line, since one slip often cascades).
 */
export function parseYamlTree(fileText: string): Result<Readonly<Record<string, unknown>>, ConfigIssue[]> {
  const doc = parseDocument(fileText, { stringKeys: true, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const seenLines = new Set<number | undefined>();
    const issues: ConfigIssue[] = [];
    for (const e of doc.errors) {
      const pos = e.linePos?.[0];
      if (seenLines.has(pos?.line)) continue;
      seenLines.add(pos?.line);
      issues.push(syntaxIssue(e.code, pos?.line, pos?.col));
    }
    return { ok: false, error: issues };
  }
  let tree: unknown;
  try {
    tree = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    const what =
      e instanceof ReferenceError && /alias/i.test(e.message)
        ? 'an alias (*name) refers to an anchor (&name) that is not defined before it, or expands too often'
        : 'the document cannot be read as plain data';
    return { ok: false, error: [{ path: '', message: `invalid YAML: ${what}` }] };
  }
  if (tree === null || tree === undefined) return { ok: true, value: {} };
  if (typeof tree !== 'object' || Array.isArray(tree)) {
    return {
      ok: false,
      error: [
        {
          path: '',
          message: `the config file must be a YAML mapping of sections (storage:, receiver:, querier:, ...), got ${describeTop(tree)}`,
        },
      ],
    };
  }
  return { ok: true, value: tree as Readonly<Record<string, unknown>> };
}
