/**
 * Reading a form's numbers and showing errors next to the field they are about. The messages are
 * the library's own (`InvalidParameterError`: "batchSize must be an integer in [1, datasetSize =
 * 100], got 200"); a field that is not a number says so in the same form.
 */
import { InvalidParameterError } from '../src/errors.js';

/** The input `${formId}-${name}`. */
export function input(formId: string, name: string): HTMLInputElement | HTMLSelectElement {
  const node = document.getElementById(`${formId}-${name}`);
  if (!(node instanceof HTMLInputElement || node instanceof HTMLSelectElement)) throw new Error(`internal error: no field ${formId}-${name}`);
  return node;
}

/** The number typed in a field: undefined when empty (the library then says it is required). */
export function numberField(formId: string, name: string): number | undefined {
  const raw = input(formId, name).value.trim();
  if (raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new InvalidParameterError(name, raw, 'a finite number');
  return value;
}

/** Clears every error message of a form. */
export function clearErrors(formId: string): void {
  const form = document.getElementById(formId);
  form?.querySelectorAll('.error').forEach((node) => (node.textContent = ''));
  form?.querySelectorAll('[aria-invalid]').forEach((node) => node.removeAttribute('aria-invalid'));
}

/**
 * Shows an error next to the field it names (`param` of an InvalidParameterError), or under the
 * form when no field has that name.
 */
export function showError(formId: string, error: unknown, fields: ReadonlyMap<string, string> = new Map()): void {
  const message = error instanceof Error ? error.message : String(error);
  const param = (error as { param?: unknown } | null)?.param;
  const name = typeof param === 'string' ? (fields.get(param) ?? param) : undefined;
  const field = name === undefined ? null : document.getElementById(`${formId}-${name}`);
  const slot = field === null ? null : document.getElementById(`${formId}-${name}-error`);
  if (field !== null && slot !== null) {
    slot.textContent = message;
    field.setAttribute('aria-invalid', 'true');
  } else {
    const box = document.getElementById(`${formId}-error`);
    if (box !== null) box.textContent = message;
  }
}

/** Marks a result as computed from the current inputs (`live-form.ts` dims stale ones). */
export function markFresh(node: Element): void {
  node.classList.remove('stale');
  node.removeAttribute('aria-busy');
}

/** Writes a number into an <output>: 6 significant digits shown, the exact double in data-value. */
export function showNumber(id: string, value: number | undefined, digits = 6): void {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`internal error: no output ${id}`);
  node.classList.remove('busy');
  markFresh(node);
  if (value === undefined) {
    node.textContent = '';
    node.removeAttribute('data-value');
    return;
  }
  node.textContent = Number.isFinite(value) ? Number(value.toPrecision(digits)).toString() : String(value);
  node.setAttribute('data-value', String(value));
}

export function showText(id: string, text: string): void {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`internal error: no element ${id}`);
  node.classList.remove('busy');
  markFresh(node);
  node.textContent = text;
}

export function markBusy(id: string): void {
  const node = document.getElementById(id);
  if (node !== null) {
    node.textContent = '';
    node.removeAttribute('data-value');
    markFresh(node);
    node.classList.add('busy');
  }
}
