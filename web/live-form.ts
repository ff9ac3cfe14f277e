/**
 * Live calculations: each result is recomputed when an input it reads changes (250 ms after the
 * last keystroke, at once on Enter, blur or a select), and on load; no button. A result is never
 * shown next to inputs it was not computed from:
 *
 * - the moment an input changes, the results that read it are marked stale (dimmed, "updating")
 *   and their form's `data-state` becomes `pending`, until the new run writes them;
 * - every run has a request id (a generation per calculation): a run that a newer one replaced
 *   writes nothing more (`LiveRun.wait` throws `SupersededError` after its await), and its worker
 *   channels are cancelled;
 * - a run that fails (an invalid input) clears every result of its calculation and shows the
 *   error next to the field it names.
 *
 * `data-state` on the calculation's form: `pending` (inputs changed), `busy` (running, worker
 * results outstanding), `done` (every result is of the current inputs), `error`.
 */
import { clearErrors, showError } from './form-fields.js';
import { cancelWorker, SupersededError } from './worker-client.js';

/** Quiet time after the last keystroke before a calculation runs. */
export const DEBOUNCE_MS = 250;

/** What a calculation's handler is given: `wait` for its awaits (stale runs stop there). */
export interface LiveRun {
  /** The request id of this run (increasing per calculation). */
  readonly id: number;
  /** Awaits `promise`; throws `SupersededError` when a newer run of this calculation has started meanwhile. */
  wait<T>(promise: Promise<T>): Promise<T>;
  /** Whether this is still the latest run (for callbacks, such as a worker's partial results). */
  isCurrent(): boolean;
}

export interface Calculation {
  /** The form that shows this calculation's state and errors. */
  readonly form: string;
  /** The forms whose fields it reads (its own form included). */
  readonly inputs: readonly string[];
  /** Fields of those forms it does not read (their ids): changing one leaves its results alone. */
  readonly unread?: readonly string[];
  /** The elements it writes: marked stale while its inputs changed, cleared on an error. */
  readonly outputs: readonly string[];
  /** The worker channels it uses, cancelled when a newer run starts. */
  readonly channels?: readonly string[];
  /** Library parameter names to field names, for errors whose parameter is not a field's name. */
  readonly fields?: ReadonlyMap<string, string>;
  readonly run: (live: LiveRun) => Promise<void> | void;
}

interface State {
  readonly calc: Calculation;
  generation: number;
  /** The inputs the latest run started from. */
  lastInputs?: string;
  /** `data-state` after the latest run ended (or `busy` while it runs). */
  lastState: string;
  timer?: ReturnType<typeof setTimeout>;
}

function formElement(id: string): HTMLFormElement {
  const form = document.getElementById(id);
  if (!(form instanceof HTMLFormElement)) throw new Error(`internal error: no form ${id}`);
  return form;
}

/** Every field's value of the forms a calculation reads, as one string (equal strings: equal inputs). */
function snapshot(calc: Calculation): string {
  return JSON.stringify(
    calc.inputs.map((id) =>
      [...formElement(id).elements]
        .filter((el) => !(calc.unread ?? []).includes(el.id))
        .map((el) => (el instanceof HTMLInputElement ? (el.type === 'checkbox' ? el.checked : el.value) : el instanceof HTMLSelectElement ? el.value : null)),
    ),
  );
}

function outputsOf(calc: Calculation): Element[] {
  return calc.outputs.map((id) => {
    const node = document.getElementById(id);
    if (node === null) throw new Error(`internal error: no output ${id}`);
    return node;
  });
}

/** Dims a calculation's results: they belong to other inputs. */
function markStale(calc: Calculation): void {
  for (const node of outputsOf(calc)) {
    node.classList.add('stale');
    node.setAttribute('aria-busy', 'true');
  }
}

function unmarkStale(calc: Calculation): void {
  for (const node of outputsOf(calc)) {
    node.classList.remove('stale');
    node.removeAttribute('aria-busy');
  }
}

/** Empties a calculation's results (an error: no number of other inputs may stay on screen). */
function clearOutputs(calc: Calculation): void {
  for (const node of outputsOf(calc)) {
    node.replaceChildren();
    node.removeAttribute('data-value');
    node.classList.remove('busy');
  }
  unmarkStale(calc);
}

/**
 * Wires the calculations to their forms and runs them all once (the page's defaults). Returns a
 * function that runs one calculation now, as Enter does.
 */
export function startLive(calcs: readonly Calculation[]): { runNow(form: string): void } {
  const states = calcs.map((calc): State => ({ calc, generation: 0, lastState: 'pending' }));

  const setState = (state: State, value: string) => {
    formElement(state.calc.form).dataset.state = value;
  };

  const run = (state: State) => {
    clearTimeout(state.timer);
    state.timer = undefined;
    const { calc } = state;
    const inputs = snapshot(calc);
    if (inputs === state.lastInputs && state.lastState !== 'busy') {
      // Back to the inputs of the latest run, which has ended (typed and undone): its results stand.
      // (While it runs, some of its results are on screen and some are not yet: it is run again.)
      unmarkStale(calc);
      setState(state, state.lastState);
      return;
    }
    state.lastInputs = inputs;
    const id = ++state.generation;
    for (const channel of calc.channels ?? []) cancelWorker(channel);
    const current = () => state.generation === id;
    const live: LiveRun = {
      id,
      isCurrent: current,
      async wait<T>(promise: Promise<T>): Promise<T> {
        const value = await promise;
        if (!current()) throw new SupersededError();
        return value;
      },
    };
    clearErrors(calc.form);
    state.lastState = 'busy';
    setState(state, 'busy');
    Promise.resolve()
      .then(() => calc.run(live))
      .then(
        () => {
          if (!current()) return;
          // Whatever this run did not write is not of these inputs: cleared, not left dimmed.
          for (const node of outputsOf(calc)) if (node.classList.contains('stale')) (node.replaceChildren(), node.removeAttribute('data-value'));
          unmarkStale(calc);
          state.lastState = 'done';
          setState(state, 'done');
        },
        (error: unknown) => {
          if (!current() || error instanceof SupersededError) return;
          clearOutputs(calc);
          showError(calc.form, error, calc.fields);
          state.lastState = 'error';
          setState(state, 'error');
        },
      );
  };

  const changed = (state: State, immediately: boolean) => {
    markStale(state.calc);
    setState(state, 'pending');
    clearTimeout(state.timer);
    if (immediately) run(state);
    else state.timer = setTimeout(() => run(state), DEBOUNCE_MS);
  };

  const forms = new Set(calcs.flatMap((calc) => calc.inputs));
  for (const formId of forms) {
    const form = formElement(formId);
    const readers = states.filter((s) => s.calc.inputs.includes(formId));
    form.addEventListener('input', (event) => {
      // A checkbox or select is a complete choice: no need to wait for more typing.
      const target = event.target;
      const whole = target instanceof HTMLSelectElement || (target instanceof HTMLInputElement && target.type === 'checkbox');
      const id = target instanceof Element ? target.id : '';
      for (const state of readers) if (!(state.calc.unread ?? []).includes(id)) changed(state, whole);
    });
    // Enter in a text field, or leaving it: run now (a no-op when the debounce already ran these inputs).
    form.addEventListener('change', () => {
      for (const state of readers) if (snapshot(state.calc) !== state.lastInputs) changed(state, true);
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      for (const state of readers) if (snapshot(state.calc) !== state.lastInputs) changed(state, true);
    });
  }
  for (const state of states) run(state);
  return {
    runNow(form: string) {
      for (const state of states) if (state.calc.form === form) run(state);
    },
  };
}
