import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { ApiError, request, setApiToken } from './http';
import type { Role } from './vocabulary';

/** Who is signed in: the token (sessionStorage only, never in a URL) and what GET /whoami said of it. */
export interface Session {
  token: string;
  user: string;
  role: Role;
}

interface SessionContext {
  session: Session | null;
  /** Why the last session ended (a revoked token), shown on the sign-in form. */
  endedBecause: string;
  signIn: (token: string) => Promise<void>;
  signOut: (reason?: string) => void;
}

const KEY = 'foghorn.session';
const Ctx = createContext<SessionContext | null>(null);

function stored(): Session | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Session | null;
    return s && typeof s.token === 'string' && typeof s.user === 'string' ? s : null;
  } catch {
    return null;
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [session, setSession] = useState<Session | null>(stored);
  const [endedBecause, setEndedBecause] = useState('');

  const signOut = useCallback(
    (reason = '') => {
      sessionStorage.removeItem(KEY);
      setApiToken('');
      queryClient.clear();
      setEndedBecause(reason);
      setSession(null);
    },
    [queryClient],
  );

  // Every request carries the session's token; a 401 (revoked, expired) ends the session.
  if (session) setApiToken(session.token, () => signOut('Your token is no longer valid: sign in again.'));

  const signIn = useCallback(async (token: string) => {
    try {
      const res = await request('GET', '/whoami', { token });
      const who = (await res.json()) as { user: string; role: Role };
      const next = { token, user: who.user, role: who.role };
      sessionStorage.setItem(KEY, JSON.stringify(next));
      setApiToken(token);
      setEndedBecause('');
      setSession(next);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) throw new Error('Invalid or revoked token', { cause: err });
      throw err;
    }
  }, []);

  const value = useMemo(() => ({ session, endedBecause, signIn, signOut }), [session, endedBecause, signIn, signOut]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}

export function useSession(): SessionContext {
  const ctx = useContext(Ctx);
  if (!ctx) throw new Error('useSession outside SessionProvider');
  return ctx;
}

/** The signed-in session (pages render only when there is one). */
export function useIdentity(): Session {
  const { session } = useSession();
  if (!session) throw new Error('not signed in');
  return session;
}
