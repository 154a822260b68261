import { useSyncExternalStore } from 'react';

/**
 * Hash routing: `#/incidents/INC-20261121-001?state=Escalated`. The server serves one file at `/`
 * and needs no rewrites; deep links and the back button work; filters live in the hash's query.
 */
export interface Route {
  /** Path segments, decoded: `['incidents', 'INC-20261121-001']`. */
  parts: string[];
  query: URLSearchParams;
}

const subscribe = (cb: () => void) => {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
};
const snapshot = () => window.location.hash;

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const [path, qs = ''] = raw.split('?', 2);
  const parts = path
    .split('/')
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  return { parts, query: new URLSearchParams(qs) };
}

export function useRoute(): Route {
  return parseHash(useSyncExternalStore(subscribe, snapshot));
}

/** `href('incidents', name)` → `#/incidents/<name>`; `query` drops empty values. */
export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}

export function withQuery(base: string, query: Record<string, string>): string {
  const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== ''));
  const s = qs.toString();
  return s ? `${base}?${s}` : base;
}

/** Changes the hash's query in place (no new history entry): filters survive refreshes and back. */
export function replaceQuery(parts: string[], query: Record<string, string>) {
  const next = withQuery(href(...parts), query);
  window.history.replaceState(null, '', next);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}
