/**
 * @module main
 * The console's page controller (docs/console.md): reads the controls, builds the statements, runs them through
 * the public API and renders the answers. State lives in the controls themselves; the token is kept in
 * sessionStorage (gone when the tab closes), recent tenants in localStorage.
 */
import {
  fetchStatus,
  listTemplates,
  runQuery,
  tail,
  type ApiFailure,
  type Credentials,
  type LogRecordJson,
  type QueryBody,
  type StatusBody,
} from './api.js';
import { byId, el } from './dom.js';
import { addFilter, hasAggregation, hasSort, joinStatement, splitStatement } from './dsl.js';
import { clearFailure, renderFailure, renderStatus } from './governance.js';
import { renderHistogram } from './histogram.js';
import { newestFirst, recordRow } from './results.js';
import { renderTemplates, templateRows } from './templates.js';
import {
  PRESETS,
  bucketWidth,
  fromLocalInput,
  rangeStage,
  resolveRange,
  toLocalInput,
  type TimeRange,
} from './time-range.js';

const TOKEN_KEY = 'sluice-console-token';
const TENANTS_KEY = 'sluice-console-tenants';
/** Rows kept on screen in live mode (older ones are dropped from the page, not from the store). */
const LIVE_MAX_ROWS = 500;
/** How far back a live tail starts, in seconds. */
const LIVE_SINCE_SECS = 60;
const STATUS_POLL_MS = 2000;

const queryInput = byId<HTMLTextAreaElement>('query');
const queryError = byId<HTMLDivElement>('query-error');
const rangeSelect = byId<HTMLSelectElement>('range');
const fromInput = byId<HTMLInputElement>('from');
const toInput = byId<HTMLInputElement>('to');
const absoluteBox = byId<HTMLSpanElement>('absolute');
const runButton = byId<HTMLButtonElement>('run');
const liveBox = byId<HTMLInputElement>('live');
const refreshSelect = byId<HTMLSelectElement>('refresh');
const tenantInput = byId<HTMLInputElement>('tenant');
const tenantList = byId<HTMLDataListElement>('tenants');
const tokenInput = byId<HTMLInputElement>('token');
const statusStrip = byId<HTMLDivElement>('status');
const banner = byId<HTMLElement>('banner');
const histogramHost = byId<HTMLDivElement>('histogram');
const summary = byId<HTMLDivElement>('summary');
const rowsHost = byId<HTMLOListElement>('rows');
const templatesHost = byId<HTMLOListElement>('templates');
const templatesNote = byId<HTMLParagraphElement>('templates-note');

let status: StatusBody | null = null;
let running: AbortController | null = null;
let live: AbortController | null = null;
let refreshTimer: number | undefined;

function credentials(): Credentials {
  return {
    tenantHeader: status?.tenancy.header ?? 'X-Sluice-Tenant',
    tenant: tenantInput.value.trim(),
    token: tokenInput.value.trim(),
  };
}

function currentRange(): TimeRange {
  const value = rangeSelect.value;
  if (value === 'absolute') {
    const fromMs = fromLocalInput(fromInput.value);
    const toMs = fromLocalInput(toInput.value);
    if (fromMs !== null && toMs !== null && toMs > fromMs) return { kind: 'absolute', fromMs, toMs };
  }
  const preset = PRESETS.find((p) => p.label === value) ?? PRESETS[2]!;
  return { kind: 'relative', secs: preset.secs, label: preset.label };
}

function setAbsolute(fromMs: number, toMs: number): void {
  rangeSelect.value = 'absolute';
  fromInput.value = toLocalInput(fromMs);
  toInput.value = toLocalInput(toMs);
  absoluteBox.hidden = false;
}

function rememberTenant(tenant: string): void {
  if (tenant === '') return;
  const known = JSON.parse(localStorage.getItem(TENANTS_KEY) ?? '[]') as string[];
  const next = [tenant, ...known.filter((t) => t !== tenant)].slice(0, 20);
  localStorage.setItem(TENANTS_KEY, JSON.stringify(next));
  fillTenants(next);
}

function fillTenants(tenants: readonly string[]): void {
  tenantList.replaceChildren(...tenants.map((t) => el('option', { value: t })));
}

/** Shows a 400's message under the editor, with the offending span marked and selected in the editor. */
function showSyntaxError(text: string, failure: ApiFailure): void {
  const pos = failure.error.position;
  queryError.hidden = false;
  if (pos === undefined) {
    queryError.replaceChildren(el('p', { 'data-testid': 'syntax-message' }, failure.error.message));
    return;
  }
  const start = Math.min(pos.start, text.length);
  const end = Math.max(start, Math.min(pos.end, text.length));
  const marked = text.slice(start, end) || ' ';
  queryError.replaceChildren(
    el('p', { 'data-testid': 'syntax-message' }, failure.error.message),
    el(
      'pre',
      { class: 'syntax-view' },
      text.slice(0, start),
      el('mark', { 'data-testid': 'syntax-mark' }, marked),
      text.slice(end),
    ),
  );
  if (end <= queryInput.value.length) {
    queryInput.focus();
    queryInput.setSelectionRange(start, end);
  }
}

function addClause(clause: string): void {
  queryInput.value = addFilter(queryInput.value, clause);
  void run();
}

function renderRecords(body: QueryBody): void {
  const records = newestFirst(body.records);
  rowsHost.replaceChildren(...records.map((r) => recordRow(r, addClause)));
  summary.textContent = `${body.rows} matching · showing ${records.length} newest first · ${body.stats['bytes_read'] ?? 0} bytes read`;
}

function renderAggregate(body: QueryBody): void {
  const rows = body.aggregate ?? [];
  const table = el(
    'table',
    { class: 'aggregate', 'data-testid': 'aggregate' },
    ...rows.map((r) =>
      el('tr', {}, ...r.key.map((k) => el('td', {}, k)), el('td', { class: 'num' }, String(r.count ?? r.value ?? ''))),
    ),
  );
  rowsHost.replaceChildren(el('li', { class: 'aggregate-row' }, table));
  summary.textContent = `${body.rows} matching · ${rows.length} groups`;
}

/** Runs the statement: rows, then the histogram, then the templates, one after another (one permit at a time). */
async function run(): Promise<void> {
  stopLive();
  running?.abort();
  const controller = new AbortController();
  running = controller;
  const creds = credentials();
  rememberTenant(creds.tenant);
  clearFailure(banner);
  queryError.hidden = true;
  // Leaving live mode: its note no longer describes the panel (a statement that fails early keeps the old list).
  templatesNote.textContent = templatesHost.childElementCount > 0 ? 'click one to filter by it' : '';
  const text = queryInput.value.replace(/\s*\n\s*/g, ' ').trim();
  const range = currentRange();
  const { fromMs, toMs } = resolveRange(range, Date.now());
  const { predicate, stages } = splitStatement(text);
  const rangeStg = rangeStage(range);
  const aggregated = hasAggregation(stages);
  const main = joinStatement(predicate, [
    ...stages,
    rangeStg,
    ...(aggregated || hasSort(stages) ? [] : ['sort ts desc']),
  ]);
  summary.textContent = 'running…';
  document.body.classList.add('busy');
  const failures: { what: string; failure: ApiFailure; retry: () => void }[] = [];
  try {
    const answer = await runQuery(creds, main, controller.signal);
    if (controller.signal.aborted) return;
    if (!answer.ok) {
      if (answer.error.kind === 'invalid_query') {
        showSyntaxError(main, answer);
        summary.textContent = 'syntax error';
        return;
      }
      failures.push({ what: 'results', failure: answer, retry: () => void run() });
      rowsHost.replaceChildren();
      summary.textContent = 'no results';
    } else if (aggregated) renderAggregate(answer.value);
    else renderRecords(answer.value);

    const width = bucketWidth(toMs - fromMs);
    const histogram = await runQuery(
      creds,
      joinStatement(predicate, [rangeStg, `count by severity, bucket(${width.text})`]),
      controller.signal,
    );
    if (controller.signal.aborted) return;
    if (histogram.ok) {
      renderHistogram(histogramHost, {
        counts: histogram.value.aggregate ?? [],
        fromMs,
        toMs,
        widthSecs: width.secs,
        onZoom: (a, b) => {
          setAbsolute(a, b);
          void run();
        },
      });
    } else {
      histogramHost.replaceChildren();
      failures.push({ what: 'histogram', failure: histogram, retry: () => void run() });
    }

    const [counts, templates] = await Promise.all([
      runQuery(creds, joinStatement(predicate, [rangeStg, 'count by template_id']), controller.signal),
      status?.features.mcp === false ? Promise.resolve(null) : listTemplates(creds, controller.signal),
    ]);
    if (controller.signal.aborted) return;
    if (counts.ok) {
      const listed = templates !== null && templates.ok ? templates.value : null;
      templatesNote.textContent =
        listed === null
          ? 'template texts need MCP (querier.mcp.enabled); ids and counts only'
          : 'click one to filter by it';
      renderTemplates(templatesHost, templateRows(counts.value.aggregate ?? [], listed), (id) =>
        addClause(`template_id == ${id}`),
      );
    } else {
      templatesHost.replaceChildren();
      failures.push({ what: 'templates', failure: counts, retry: () => void run() });
    }
  } finally {
    if (running === controller) {
      running = null;
      document.body.classList.remove('busy');
    }
    const first = failures[0];
    if (first !== undefined && !controller.signal.aborted)
      renderFailure(banner, first.what, first.failure, first.retry);
    void pollStatus();
  }
}

function stopLive(): void {
  live?.abort();
  live = null;
  if (liveBox.checked) liveBox.checked = false;
  document.body.classList.remove('live');
}

/** Live mode: `/v1/tail` with the statement's predicate; new records go on top. */
async function startLive(): Promise<void> {
  running?.abort();
  clearFailure(banner);
  const controller = new AbortController();
  live = controller;
  document.body.classList.add('live');
  const { predicate } = splitStatement(queryInput.value.trim());
  rowsHost.replaceChildren();
  // The histogram and the template counts belong to a range; a tail has none, so they are cleared, not left stale.
  histogramHost.replaceChildren();
  templatesHost.replaceChildren();
  templatesNote.textContent = 'live mode: run a query to count templates';
  let n = 0;
  summary.textContent = 'live: waiting for records…';
  const end = await tail(
    credentials(),
    predicate === '' ? 'true' : predicate,
    LIVE_SINCE_SECS,
    (record: LogRecordJson) => {
      n++;
      rowsHost.prepend(recordRow(record, addClause));
      while (rowsHost.children.length > LIVE_MAX_ROWS) rowsHost.lastElementChild?.remove();
      summary.textContent = `live: ${n} record${n === 1 ? '' : 's'} since the last ${LIVE_SINCE_SECS} s (newest first)`;
    },
    controller.signal,
  );
  if (controller.signal.aborted) return;
  live = null;
  liveBox.checked = false;
  document.body.classList.remove('live');
  if (end.kind === 'error') {
    summary.textContent = n === 0 ? 'live tail not started' : `live tail failed after ${n} records`;
    if (end.failure.error.kind === 'invalid_query') showSyntaxError(predicate, end.failure);
    else renderFailure(banner, 'live tail', end.failure, () => void startLive());
  } else summary.textContent = `live tail ended (${JSON.stringify(end.detail)}); ${n} records`;
}

function setRefresh(): void {
  window.clearInterval(refreshTimer);
  const secs = Number(refreshSelect.value);
  if (secs > 0)
    refreshTimer = window.setInterval(() => void (live === null && running === null ? run() : undefined), secs * 1000);
}

async function pollStatus(): Promise<void> {
  const answer = await fetchStatus(credentials());
  if (answer.ok) {
    status = answer.value;
    renderStatus(statusStrip, answer.value);
    tokenInput.placeholder = answer.value.auth.enabled ? 'bearer token (required)' : 'no token needed';
    tenantInput.placeholder = answer.value.tenancy.default_tenant_set ? 'default tenant' : 'tenant (required)';
    tenantInput.title = `sent as the ${answer.value.tenancy.header} header`;
    liveBox.disabled = !answer.value.features.tail;
  } else {
    statusStrip.replaceChildren(
      el('span', { class: 'stat warn', 'data-testid': 'status-error' }, `status: ${answer.error.message}`),
    );
  }
}

function init(): void {
  rangeSelect.replaceChildren(
    ...PRESETS.map((p) => el('option', { value: p.label }, `last ${p.label}`)),
    el('option', { value: 'absolute' }, 'absolute…'),
  );
  rangeSelect.value = '1h';
  tokenInput.value = sessionStorage.getItem(TOKEN_KEY) ?? '';
  fillTenants(JSON.parse(localStorage.getItem(TENANTS_KEY) ?? '[]') as string[]);
  queryInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      void run();
    }
  });
  runButton.addEventListener('click', () => void run());
  rangeSelect.addEventListener('change', () => {
    if (rangeSelect.value === 'absolute') {
      const { fromMs, toMs } = resolveRange(currentRange(), Date.now());
      if (fromInput.value === '') setAbsolute(fromMs, toMs);
      absoluteBox.hidden = false;
    } else {
      absoluteBox.hidden = true;
      void run();
    }
  });
  for (const input of [fromInput, toInput]) input.addEventListener('change', () => void run());
  tokenInput.addEventListener('change', () => {
    sessionStorage.setItem(TOKEN_KEY, tokenInput.value.trim());
    void pollStatus();
  });
  tenantInput.addEventListener('change', () => void run());
  liveBox.addEventListener('change', () => (liveBox.checked ? void startLive() : stopLive()));
  refreshSelect.addEventListener('change', setRefresh);
  window.setInterval(() => void pollStatus(), STATUS_POLL_MS);
  void pollStatus().then(() => run());
}

init();
