/**
 * docs/threat-model.md and the README say the same thing: every surface's one-sentence claim
 * appears in the README word for word (its "Who is trusted" list), the README links the threat
 * model, and every test file a surface cites exists (a claim without its test is not a claim).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const threatModel = readFileSync(new URL('../docs/threat-model.md', import.meta.url), 'utf8');
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** Each surface's title and claim: a `### title` heading followed by a `**Claim.** ...` line. */
const surfaces = [...threatModel.matchAll(/^### (.+?)\n\n\*\*Claim\.\*\* (.+)$/gm)].map((m) => ({ title: m[1], claim: m[2] }));

describe('the threat model and the README', () => {
  it('names the surfaces the issue lists, each with its claim', () => {
    const titles = surfaces.map((s) => s.title).join('\n');
    for (const surface of ['library call', 'CLI', 'model file', 'node HTTP API', 'coordinator', 'SQL engines', 'out-of-core stream', 'calculator']) {
      assert.ok(titles.includes(surface), `a surface about the ${surface}`);
    }
  });

  it("has every surface's claim in the README word for word, and the README links it", () => {
    assert.ok(readme.includes('](docs/threat-model.md)'), 'the README links docs/threat-model.md');
    for (const { title, claim } of surfaces) assert.ok(readme.includes(`- **${title}.** ${claim}`), `README holds the claim of "${title}" verbatim`);
  });

  it('cites test files that exist', () => {
    const cited = new Set([...threatModel.matchAll(/`(test\/[\w./-]+\.ts)`/g)].map((m) => m[1]));
    assert.ok(cited.size >= 10, `the threat model cites its tests (${cited.size})`);
    for (const file of cited) assert.ok(existsSync(new URL(`../${file}`, import.meta.url)), `${file} exists`);
  });
});
