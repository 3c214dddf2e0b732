/**
 * @module load-token-table
 * Reads the token document from `auth.tokens_file` (a YAML or JSON file) or from `auth.tokens` (the same document
 * inline, for env-only mode: `SLUICE_AUTH_TOKENS='{"tokens":[...]}'`). Every problem is reported at once, each as
 * `{path, message}` under the key that supplied the document; the YAML library's own text never reaches the
 * operator, and the document's values are never echoed (it may hold what an operator mistook for a hash).
 */
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { Result } from '@sluice/core';
import { parseTokenDocument, type TokenTable } from './token-table.js';

/** Where the token document comes from (`auth.tokens_file` / `auth.tokens`; exactly one is set). */
export type TokenSource =
  { readonly kind: 'file'; readonly path: string } | { readonly kind: 'inline'; readonly text: string };

/** One problem with the token document; `path` starts with the configuration key that supplied it. */
export interface TokenIssue {
  readonly path: string;
  readonly message: string;
}

function keyOf(source: TokenSource): string {
  return source.kind === 'file' ? 'auth.tokens_file' : 'auth.tokens';
}

function describeReadError(e: unknown): string {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : '';
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory, not a file';
    default:
      return code === '' ? 'cannot be read' : `cannot be read (${code})`;
  }
}

/** Parses token-document text (YAML, of which JSON is a subset). */
export function parseTokenText(text: string, key: string): Result<TokenTable, TokenIssue[]> {
  // prettyErrors computes positions; the library's message itself is never used.
  const doc = parseDocument(text, { stringKeys: true, uniqueKeys: true, prettyErrors: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const line = first.linePos?.[0];
    const at = line === undefined ? '' : ` at line ${line.line}, column ${line.col}`;
    return { ok: false, error: [{ path: key, message: `the token document is not valid YAML or JSON${at}` }] };
  }
  let tree: unknown;
  try {
    tree = doc.toJS({ maxAliasCount: 100 });
  } catch {
    return { ok: false, error: [{ path: key, message: 'the token document cannot be read as plain data (aliases)' }] };
  }
  const parsed = parseTokenDocument(tree);
  if (parsed.ok) return parsed;
  return { ok: false, error: parsed.error.map((message) => ({ path: key, message })) };
}

/** Loads the token table from its source. */
export async function loadTokenTable(source: TokenSource): Promise<Result<TokenTable, TokenIssue[]>> {
  const key = keyOf(source);
  if (source.kind === 'inline') return parseTokenText(source.text, key);
  let text: string;
  try {
    text = await readFile(source.path, 'utf8');
  } catch (e) {
    return { ok: false, error: [{ path: key, message: `${JSON.stringify(source.path)}: ${describeReadError(e)}` }] };
  }
  return parseTokenText(text, key);
}
