/**
 * The epsilon an audit holds a run to: the tightest upper bound dpfit proves for the run's event
 * at its delta, the smaller of the learner's report (RDP for DP-SGD; RDP or the exact Gaussian
 * composition for DP-GD) and the PLD accountant's pessimistic epsilon of the same event
 * (`pldEpsilon`, itself capped by RDP and the exact Gaussian profile). Both are proven upper
 * bounds, so their minimum is one; auditing the tighter claim asks more of the accountant (how
 * close dpfit's best bound is to what an adversary can show), and a refutation of it would refute
 * the report's epsilon too. A PLD answer that is not `proven` is ignored.
 */
import { parseEvent } from '../accounting/events/json.js';
import { pldEpsilon } from '../accounting/pld/accountant.js';
import type { PrivacyReport } from '../learners/models/privacy-report.js';

export interface AccountedEpsilon {
  readonly epsilon: number;
  /** Whose bound it is: the report's accountant, or 'pld' when the PLD accountant's is smaller. */
  readonly accountant: string;
}

/** min(report epsilon, PLD epsilon of the report's event at its delta) (file comment). */
export function accountedEpsilon(report: PrivacyReport): AccountedEpsilon {
  const pld = pldEpsilon(parseEvent(report.event), report.delta);
  if (pld.guarantee === 'proven' && pld.epsilon < report.epsilon) return { epsilon: pld.epsilon, accountant: pld.accountant };
  return { epsilon: report.epsilon, accountant: report.accountant };
}
