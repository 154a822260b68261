import type { ReactNode } from 'react';
import type { List } from '../types';

/** A page: its one h1 and what it shows. */
export function Page({ title, actions, children }: { title: ReactNode; actions?: ReactNode; children: ReactNode }) {
  return (
    <>
      <div className="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {title}
        </h1>
        {actions && <div className="page-actions">{actions}</div>}
      </div>
      {children}
    </>
  );
}

/** A titled section (h2) of a page. */
export function Section({ title, children, id }: { title: string; children: ReactNode; id?: string }) {
  const headingId = `${id ?? title.toLowerCase().replace(/\W+/g, '-')}-heading`;
  return (
    <section className="card" aria-labelledby={headingId}>
      <h2 id={headingId}>{title}</h2>
      {children}
    </section>
  );
}

/** A table that scrolls sideways on narrow screens instead of squeezing; focusable to scroll by keyboard. */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      <table>{children}</table>
    </div>
  );
}

/** Label/value pairs. */
export function Facts({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="facts">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v === '' || v === undefined || v === null ? '—' : v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Pager({
  page,
  pageSize,
  total,
  onPage,
}: {
  page: number;
  pageSize: number;
  total: number;
  onPage: (p: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {pages} ({total} in all)
      </span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}

/**
 * One page of an API list: a table with a column header per `headers`, a row per item (`row`
 * returns the `<tr>`), a row saying so when nothing matches, and the pager under it.
 */
export function PagedTable<T>({
  label,
  caption,
  headers,
  list,
  row,
  empty,
  onPage,
}: {
  label: string;
  caption?: string;
  headers: string[];
  list: List<T>;
  row: (item: T) => ReactNode;
  empty: string;
  onPage: (p: number) => void;
}) {
  return (
    <>
      <TableScroll label={label}>
        {caption && <caption className="visually-hidden">{caption}</caption>}
        <thead>
          <tr>
            {headers.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {list.items.map(row)}
          {list.items.length === 0 && (
            <tr>
              <td colSpan={headers.length}>{empty}</td>
            </tr>
          )}
        </tbody>
      </TableScroll>
      <Pager
        page={list.metadata.page}
        pageSize={list.metadata.pageSize}
        total={list.metadata.totalCount}
        onPage={onPage}
      />
    </>
  );
}
