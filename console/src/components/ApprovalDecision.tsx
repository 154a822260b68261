import { useState, type FormEvent } from 'react';
import { send } from '../http';
import { useIdentity } from '../session';
import type { Approval } from '../types';
import { atLeast } from '../vocabulary';
import { TextField } from './Fields';
import { ErrorMessage, StatusMessage } from './Messages';
import { useAction } from './useAction';

/**
 * Approve or reject a pending approval with a comment. Shown only to roles that may decide it
 * (role ≥ its requiredRole); the API still decides, and its 403/409 are shown as they come.
 */
export function ApprovalDecision({ approval }: { approval: Approval }) {
  const { role } = useIdentity();
  const [comment, setComment] = useState('');
  const action = useAction(
    (verb: 'approve' | 'reject') =>
      send<Approval>('POST', `/approvals/${encodeURIComponent(approval.name)}/${verb}`, comment ? { comment } : {}),
    (a) => `${a.name} ${a.status} by ${a.decidedBy ?? 'you'}.`,
  );
  // Once decided (here or elsewhere: a 409), the answer stays in view after the refresh.
  if (approval.status !== 'pending' || !atLeast(role, approval.requiredRole))
    return action.done || action.error ? (
      <>
        <ErrorMessage error={action.error} />
        <StatusMessage text={action.done} />
      </>
    ) : null;
  const submit = (verb: 'approve' | 'reject') => (e?: FormEvent) => {
    e?.preventDefault();
    action.run(verb);
  };
  return (
    <form className="decision" onSubmit={submit('approve')} aria-label={`Decide ${approval.name}`}>
      <TextField
        label={`Comment on ${approval.name}`}
        name="comment"
        value={comment}
        onChange={setComment}
        problems={action.problems}
      />
      <div className="buttons">
        <button type="submit" className="primary" disabled={action.busy}>
          Approve
        </button>
        <button type="button" className="danger" disabled={action.busy} onClick={submit('reject')}>
          Reject
        </button>
      </div>
      <ErrorMessage error={action.error} />
      <StatusMessage text={action.done} />
    </form>
  );
}
