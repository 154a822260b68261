import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { getJson } from './http';

/** How often live pages ask again (ms): a few seconds, see docs/console.md. */
export const LIVE_MS = 3000;

type Query = Record<string, string | number | undefined>;

/**
 * GET `path` and keep it fresh. `keepPreviousData`: while a new page or filter loads, the old
 * rows stay, so the table neither flashes empty nor loses its scroll position.
 */
export function useApi<T>(path: string, query: Query = {}, opts: { live?: boolean; enabled?: boolean } = {}) {
  return useQuery({
    queryKey: [path, query],
    queryFn: () => getJson<T>(path, query),
    refetchInterval: opts.live === false ? false : LIVE_MS,
    placeholderData: keepPreviousData,
    enabled: opts.enabled ?? true,
  });
}
