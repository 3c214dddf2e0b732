/**
 * @module key-table
 * Renders the key reference as the Markdown table of the package README (and of any operator docs), so the
 * documentation is generated from the schema rather than maintained by hand.
 */
import { configKeyReference } from './config-keys.js';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function renderDefault(value: string | number | boolean | null): string {
  if (value === null) return '(unset)';
  if (value === '') return "''";
  return `\`${String(value)}\``;
}

/** The Markdown table of every key: path, env variable, default, constraint, description. */
export function renderKeyTable(): string {
  const rows = configKeyReference().map(
    (k) =>
      `| \`${k.path}\` | \`${k.envName}\` | ${renderDefault(k.defaultValue)} | ${cell(k.constraint)} | ${cell(k.description)} |`,
  );
  return ['| Key | Env-only variable | Default | Value | Meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}
