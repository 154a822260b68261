/**
 * Chaos run (issue 8): alerts from 4 senders and chat messages in 2 chats stream in while one
 * part of the stack is killed with -9 at random moments, then everything acknowledged is
 * accounted for (test/harness/chaos.ts). Prints one line of counts per target.
 * Usage: npx ts-node --transpile-only bench/chaos.ts [kills=10] [targets=dev,mongo,temporal,worker]
 * A target whose run found a problem leaves the output of its stack's Foghorn processes (the
 * worker's log with it) in a file whose path it prints.
 */
import './compiled';
import { mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import path from 'path';
import { runChaos, type ChaosTarget } from '../test/harness/chaos';
import { killAll } from '../test/harness/processes';

const KILLS = Number(process.argv[2] ?? 10);
const TARGETS = (process.argv[3] ?? 'dev,mongo,temporal,worker').split(',') as ChaosTarget[];

async function main() {
  let failed = false;
  for (const target of TARGETS) {
    const dataDir = mkdtempSync(path.join(tmpdir(), `foghorn-chaos-${target}-`));
    // The stack's output, worker's log included, kept where a run found a problem.
    const logFile = path.join(tmpdir(), `foghorn-chaos-${target}-${Date.now()}.log`);
    let problems = true;
    try {
      const r = await runChaos({
        target,
        dataDir,
        kills: KILLS,
        minGapMs: 1_000,
        maxGapMs: 8_000,
        settleMs: 300_000,
        logFile,
        log: (line) => console.log(`  ${line}`),
      });
      console.log(
        `${target.padEnd(8)} kills=${r.kills} alerts sent=${r.alertsSent} acknowledged=${r.alertsAcknowledged} ` +
          `incidents=${r.incidents} lost=${r.alertsLost} duplicated=${r.alertsDuplicated} namesReused=${r.namesReused} ` +
          `inconsistent=${r.inconsistent} incompleteTimelines=${r.incompleteTimelines} unknownToTemporal=${r.unknownToTemporal} tasksFailing=${r.workflowTasksFailing} | ` +
          `plans=${r.plans} unsettled=${r.plansUnsettled} stepsRepeated=${r.stepsRepeated} ` +
          `remediationInconsistent=${r.remediationInconsistent} | ` +
          `chat accepted=${r.chatMessagesAccepted} answered=${r.chatMessagesAnswered} unanswered=${r.chatMessagesUnanswered} ` +
          `answeredTwice=${r.chatMessagesAnsweredTwice} | settled in ${r.settleSeconds} s`,
      );
      for (const p of r.problems) console.log(`    problem: ${p}`);
      problems = r.problems.length > 0;
      failed ||= problems;
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      if (problems) console.log(`  the stack's output: ${logFile}`);
      else rmSync(logFile, { force: true });
    }
  }
  await killAll();
  process.exit(failed ? 1 : 0);
}

main().catch(async (err) => {
  console.error(err);
  await killAll();
  process.exit(1);
});
