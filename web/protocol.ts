/**
 * Messages between the calculator page and its worker (web/pld-worker.ts), which runs the long
 * accounting work off the main thread: PLD compositions and noise calibrations.
 */
import type { DpEvent } from '../src/accounting/events/types.js';
import type { PrivacyGuarantee } from '../src/accounting/guarantee.js';

export type WorkerRequest =
  | {
      /** epsilon of `event` at `delta` by the PLD accountant (RDP when PLD cannot account it, as the CLI does), and delta at each of `curveEpsilons`. */
      readonly task: 'pld';
      readonly event: DpEvent;
      readonly delta: number;
      readonly curveEpsilons: readonly number[];
    }
  | {
      /** The smallest DP-SGD noise multiplier for a target, as `dpfit calibrate dpsgd`. */
      readonly task: 'calibrateDpsgd';
      readonly samplingProbability: number;
      readonly steps: number;
      readonly targetEpsilon: number;
      readonly delta: number;
      readonly accountant: 'rdp' | 'pld';
    };

/** The PLD task's result; its partial result is the same without `curve`. */
export interface PldResult {
  readonly guarantee: PrivacyGuarantee & { readonly epsilonLower?: number };
  /** Present when the PLD accountant supports the event. */
  readonly curve?: readonly { readonly epsilon: number; readonly delta: number }[];
}

export interface CalibrationResult {
  readonly noiseMultiplier: number;
  readonly guarantee: PrivacyGuarantee;
  readonly event: DpEvent;
}

/** An error thrown in the worker, with the parameter it names when it is an InvalidParameterError. */
export interface WorkerError {
  readonly name: string;
  readonly message: string;
  readonly param?: string;
}

/**
 * The worker's answers to request `id`: its result (`ok`), or its error; before them, a request may
 * send `partial` results (the PLD epsilon in about a second, before its curve, which takes longer).
 */
export type WorkerResponse =
  | { readonly id: number; readonly ok: true; readonly partial?: false; readonly result: unknown }
  | { readonly id: number; readonly ok: true; readonly partial: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: WorkerError };
