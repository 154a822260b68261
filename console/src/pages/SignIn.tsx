import { useState, type FormEvent } from 'react';
import { ErrorMessage } from '../components/Messages';
import { useSession } from '../session';

/** Sign-in with an API token (checked with GET /whoami; kept in sessionStorage, never in the URL). */
export function SignIn() {
  const { signIn, endedBecause } = useSession();
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(endedBecause || null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(token.trim());
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <main id="main" className="signin">
      <h1>Foghorn console</h1>
      <p>Sign in with an API token. It stays in this browser tab only and is forgotten when the tab closes.</p>
      <form onSubmit={submit} className="card form" aria-label="Sign in">
        <div className="field">
          <label htmlFor="token">API token</label>
          <input
            id="token"
            name="token"
            type="password"
            autoComplete="off"
            required
            value={token}
            onChange={(e) => setToken(e.target.value)}
          />
        </div>
        <ErrorMessage error={error} />
        <button type="submit" className="primary" disabled={busy || !token.trim()}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
