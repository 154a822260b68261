import type { Command } from 'commander';
import { analyticsCommand } from './analytics';
import { approvalsCommand } from './approvals';
import { changesCommand } from './changes';
import { clustersCommand } from './clusters';
import { completionCommand } from './completion';
import { incidentsCommand } from './incidents';
import { loginCommand } from './login';
import { postmortemsCommand } from './postmortems';
import { remediationsCommand } from './remediations';
import { runbooksCommand } from './runbooks';

/**
 * The API-client commands (FOGHORN_URL / FOGHORN_TOKEN or `foghorn login`). They load neither
 * Temporal, Mongoose nor Express: only commander, yaml, fetch and pure domain helpers.
 * (`audit list|export|verify` join the `audit` command in cli/audit.ts.)
 */
export function addClientCommands(program: Command): void {
  program.addCommand(loginCommand());
  program.addCommand(incidentsCommand());
  program.addCommand(approvalsCommand());
  program.addCommand(remediationsCommand());
  program.addCommand(runbooksCommand());
  program.addCommand(postmortemsCommand());
  program.addCommand(analyticsCommand());
  program.addCommand(clustersCommand());
  program.addCommand(changesCommand());
  program.addCommand(completionCommand(() => program));
}
