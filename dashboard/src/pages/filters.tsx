// The rows page's filters (every operator of the records API) and value parsing.
import { useState } from 'preact/hooks';
import { enc } from '../api';
import { Icon, X } from '../components/icons';
import type { Column } from './table-types';

export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'in', 'is'];

export interface Filter {
  column: string;
  op: string;
  value: string;
}

/** Text typed in a cell or form → the JSON value for the column's type ("NULL" is null). */
export function parseValue(col: Column, text: string): unknown {
  if (text === 'NULL' || (text === '' && col.nullable && col.type !== 'string')) return null;
  if (col.type === 'integer' || col.type === 'float') return Number(text);
  if (col.type === 'boolean') return text === 'true';
  if (col.type === 'json') return JSON.parse(text);
  return text;
}

export function filterQuery(filters: Filter[]): string[] {
  return filters
    .filter((f) => f.column && (f.value !== '' || f.op === 'is'))
    .map((f) => `${enc(f.column)}=${f.op}.${f.op === 'in' ? `(${f.value})` : enc(f.value || 'null')}`);
}

/** Filters from the page's query string (links from foreign keys arrive as ?col=eq.value). */
export function initialFilters(): Filter[] {
  const out: Filter[] = [];
  new URLSearchParams(location.search).forEach((v, k) => {
    const dot = v.indexOf('.');
    if (dot > 0 && OPERATORS.includes(v.slice(0, dot)))
      out.push({ column: k, op: v.slice(0, dot), value: v.slice(dot + 1) });
  });
  return out;
}

export function FilterBar(props: { columns: Column[]; filters: Filter[]; onChange: (f: Filter[]) => void }) {
  const [draft, setDraft] = useState<Filter>({ column: props.columns[0]?.name ?? '', op: 'eq', value: '' });
  return (
    <form
      class="filters"
      aria-label="Filter rows"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange([...props.filters, draft]);
        setDraft({ ...draft, value: '' });
      }}
    >
      <label for="f-col">Column</label>
      <select id="f-col" value={draft.column} onChange={(e) => setDraft({ ...draft, column: e.currentTarget.value })}>
        {props.columns.map((c) => (
          <option key={c.name}>{c.name}</option>
        ))}
      </select>
      <label for="f-op">Operator</label>
      <select id="f-op" value={draft.op} onChange={(e) => setDraft({ ...draft, op: e.currentTarget.value })}>
        {OPERATORS.map((o) => (
          <option key={o}>{o}</option>
        ))}
      </select>
      <label for="f-value">Value</label>
      <input
        id="f-value"
        value={draft.value}
        placeholder={draft.op === 'in' ? 'a,b,c' : draft.op === 'is' ? 'null' : 'value'}
        onInput={(e) => setDraft({ ...draft, value: e.currentTarget.value })}
      />
      <button type="submit" class="sm">
        Add filter
      </button>
      {props.filters.map((f, i) => (
        <button
          key={i}
          type="button"
          class="chip"
          aria-label={`Remove filter ${f.column} ${f.op} ${f.value}`}
          onClick={() => props.onChange(props.filters.filter((_, j) => j !== i))}
        >
          {f.column} {f.op} {f.value} <Icon icon={X} />
        </button>
      ))}
    </form>
  );
}
