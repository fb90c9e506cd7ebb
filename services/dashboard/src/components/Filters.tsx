import type { FormEvent, ReactNode } from 'react';
import { t } from '../strings';

export type FilterValues = Record<string, string>;

/** A list's filters as its API query: the filled ones, under the API's own names. */
export function filterQuery(values: FilterValues): URLSearchParams {
  return new URLSearchParams(Object.entries(values).filter(([, value]) => value !== ''));
}

/** A list's filter form: its fields (named as the API's query parameters), then Apply. */
export function Filters({
  onApply,
  children,
}: {
  onApply: (values: FilterValues) => void;
  children: ReactNode;
}) {
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    onApply(Object.fromEntries([...form.entries()].map(([name, value]) => [name, String(value).trim()])));
  }
  return (
    <form className="filters" onSubmit={submit}>
      {children}
      <button type="submit" className="secondary">
        {t('apply')}
      </button>
    </form>
  );
}

/** One of an API enum's values, or any. */
export function EnumFilter({
  name,
  label,
  values,
  value,
  show = (v) => v,
}: {
  name: string;
  label: string;
  values: readonly string[];
  value: string;
  show?: (value: string) => string;
}) {
  return (
    <>
      <label htmlFor={name}>{label}</label>
      <select id={name} name={name} defaultValue={value}>
        <option value="">{t('any')}</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {show(v)}
          </option>
        ))}
      </select>
    </>
  );
}
