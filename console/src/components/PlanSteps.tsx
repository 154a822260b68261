import { workflowLink } from '../config';
import { when } from '../format';
import { href } from '../router';
import type { Plan } from '../types';
import { Badge } from './Badge';
import { Facts, TableScroll } from './Layout';

/**
 * A remediation plan: its facts and its steps with how each went. Its Temporal link is its
 * incident's workflow, where a plan runs.
 */
export function PlanSteps({ plan }: { plan: Plan }) {
  const temporal = workflowLink(plan.issueRef);
  return (
    <div className="plan" data-plan={plan.name}>
      <h3>
        <a href={href('remediations', plan.name)}>{plan.name}</a> <Badge value={plan.state} />
      </h3>
      <Facts
        items={[
          ['Strategy', plan.strategy],
          ['Runbook', plan.runbook ? <a href={href('runbooks', plan.runbook)}>{plan.runbook}</a> : ''],
          ['Attempt', plan.attempt],
          ['Risk', plan.riskScore],
          [
            'Approval',
            plan.approval ? (
              <a href={href('approvals', plan.approval)}>{plan.approval}</a>
            ) : plan.approvalRequired ? (
              'required'
            ) : (
              'not required'
            ),
          ],
          ['Started', when(plan.startedAt)],
          ['Completed', when(plan.completedAt)],
          ['Result', plan.result],
          [
            'Workflow',
            temporal ? (
              <a href={temporal} target="_blank" rel="noreferrer">
                Open in Temporal UI
              </a>
            ) : (
              ''
            ),
          ],
        ]}
      />
      <TableScroll label={`Steps of ${plan.name}`}>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Action</th>
            <th scope="col">Outcome</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {plan.actions.map((a, i) => (
            <tr key={i}>
              <td>{i + 1}</td>
              <td>
                {a.type}
                {a.description && <span className="muted"> — {a.description}</span>}
              </td>
              <td>
                <Badge value={a.outcome ?? 'not run'} />
              </td>
              <td className="wrap">{a.result ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </TableScroll>
    </div>
  );
}
