/**
 * dpfit's JSON: Infinity written as the string "Infinity" (JSON has no Infinity; a privacy report
 * of a non-private run has epsilon Infinity), NaN refused (dpfit never prints or sends NaN). Used
 * by the CLI's output and by the federated protocol's messages; readers accept both forms where a
 * number may be infinite (`parsePrivacyReport`, `readNumberish`).
 */
export function toDpfitJson(value: unknown, indent?: number): string {
  return JSON.stringify(
    value,
    (key, v) => {
      if (typeof v === 'number') {
        if (Number.isNaN(v)) throw new Error(`internal error: NaN in output field '${key}'`);
        if (v === Infinity) return 'Infinity';
        if (v === -Infinity) return '-Infinity';
      }
      return v;
    },
    indent,
  );
}
