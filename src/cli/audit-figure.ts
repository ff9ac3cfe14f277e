/**
 * The figure of an audit (`dpfit audit --plot FILE`, and `dpfit/audit`'s `auditTradeOffFigure`):
 * the empirical trade-off of the audit's test against the accountant's curve and the curve of the
 * lower bound found. The numbers are the audit's (`audit/trade-off-curves.ts`), the chart the
 * report floor's (`report/trade-off-chart.ts`); this module joins the two floors, which do not
 * import each other (docs/architecture.md). Node-only: vega and resvg are loaded on first use.
 */
import type { AuditResult } from '../audit/audit-options.js';
import { auditTradeOffCurves, type AuditTradeOffCurves, type TradeOffCurveOptions } from '../audit/trade-off-curves.js';
import { tradeOffChart } from '../report/trade-off-chart.js';
import { renderVegaLite } from '../report/vega-chart.js';

export interface AuditTradeOffFigure {
  /** The figure as SVG (the reference output: text kept as text). */
  readonly svg: string;
  /** The same figure as PNG (rendered when first read; needs resvg's optional native binary). */
  readonly png: Uint8Array;
  /** The numbers drawn. */
  readonly curves: AuditTradeOffCurves;
  /** The vega-lite spec drawn. */
  readonly spec: object;
}

/** The trade-off figure of `result` (file comment). */
export async function auditTradeOffFigure(result: AuditResult, options: TradeOffCurveOptions = {}): Promise<AuditTradeOffFigure> {
  const curves = auditTradeOffCurves(result, options);
  const spec = tradeOffChart(curves);
  const chart = await renderVegaLite(spec);
  return {
    svg: chart.svg,
    get png() {
      return chart.png;
    },
    curves,
    spec,
  };
}
