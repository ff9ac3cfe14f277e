/**
 * The event parser and both accountants fuzzed with generated event JSON
 * (`helpers/fuzz-events.ts`: well-formed trees with valid, edge-case and garbage fields, mangled
 * text), fixed seed, bounded runs. For every input:
 *   - parsing either returns an event or throws a DpfitError (never a TypeError, a RangeError or
 *     a stack overflow), and a DpfitError names a field of the event, never an internal quantity
 *     or NaN (the fuzz found noise multipliers of 1e308 and 1e-300 giving NaN, and nested Poisson
 *     sampling taking 16 s);
 *   - each accountant either refuses with a DpfitError or answers with an epsilon that is a
 *     number >= 0 (Infinity allowed, NaN never) and a delta in [0, 1];
 *   - where both answer a proven guarantee, PLD's lower bound on epsilon is at most RDP's upper
 *     bound (both bracket the same true epsilon: a violated inequality is a bug in one of them).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { PldAccountant } from '../../../src/accounting/pld/accountant.js';
import { RdpAccountant } from '../../../src/accounting/rdp/accountant.js';
import { DpfitError, InvalidParameterError } from '../../../src/errors.js';
import { eventText } from '../../helpers/fuzz-events.js';

const DELTA = 1e-5;

/** The result of `compute`, or the DpfitError it threw; anything else thrown is recorded as a problem. */
function attempt<T>(what: string, compute: () => T, problems: string[]): T | DpfitError | undefined {
  try {
    return compute();
  } catch (error) {
    if (error instanceof DpfitError) {
      // A DpfitError about an internal quantity (not a field of the event, the delta or epsilon asked) is a bug dressed as a user error.
      const internal = what !== 'parseEvent' && (/got NaN|internal error/.test(error.message) || (error instanceof InvalidParameterError && !/^(event|delta$|epsilon$)/.test(error.param)));
      if (internal) problems.push(`${what}: ${error.message}`);
      return error;
    }
    problems.push(`${what} threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return undefined;
  }
}

test('fuzz: generated event JSON -> parsed or a DpfitError; RDP and PLD answer sane bounds or refuse cleanly; PLD lower <= RDP upper', () => {
  const failures: string[] = [];
  let accounted = 0;
  fc.assert(
    fc.property(eventText, (text) => {
      const problems: string[] = [];
      const event = attempt('parseEvent', () => parseEvent(text), problems);
      if (event !== undefined && !(event instanceof DpfitError)) {
        const parsed = event as DpEvent;
        const rdp = attempt('RDP getEpsilon', () => new RdpAccountant({ allowConjecture: true }).compose(parsed).getEpsilon(DELTA), problems);
        const rdpDelta = attempt('RDP getDelta', () => new RdpAccountant({ allowConjecture: true }).compose(parsed).getDelta(1), problems);
        const pld = attempt('PLD getEpsilon', () => new PldAccountant().compose(parsed).getEpsilon(DELTA), problems);
        for (const [name, result] of [['RDP', rdp], ['PLD', pld]] as const) {
          if (result === undefined || result instanceof DpfitError) continue;
          if (!(result.epsilon >= 0)) problems.push(`${name} epsilon ${result.epsilon}`);
        }
        if (rdpDelta !== undefined && !(rdpDelta instanceof DpfitError) && !(rdpDelta.delta >= 0 && rdpDelta.delta <= 1)) problems.push(`RDP delta ${rdpDelta.delta}`);
        if (rdp !== undefined && !(rdp instanceof DpfitError) && pld !== undefined && !(pld instanceof DpfitError)) {
          accounted++;
          const lower = pld.epsilonLower ?? 0;
          if (rdp.guarantee === 'proven' && pld.guarantee === 'proven' && lower > rdp.epsilon * (1 + 1e-9) + 1e-12) {
            problems.push(`PLD epsilonLower ${lower} > RDP epsilon ${rdp.epsilon}`);
          }
        }
      }
      if (problems.length > 0) failures.push(`${text.slice(0, 300)}: ${problems.join('; ')}`);
    }),
    { seed: 20261124, numRuns: Number(process.env.DPFIT_FUZZ_RUNS ?? 800), endOnFailure: false },
  );
  assert.deepEqual(failures, [], `${failures.length} bad inputs:\n${failures.slice(0, 30).join('\n')}`);
  // The generator must reach the accountants, not only the parser's errors.
  assert.ok(accounted > 100, `only ${accounted} events were accounted by both accountants`);
});
